#include "operator/kube/exec_credential.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/base64.hpp"
#include "kubeload/rfc3339.hpp"
#include "kubeload/text.hpp"

extern char** environ;

namespace kubeload::kube {

namespace {

using json = nlohmann::json;
using std::chrono::system_clock;

// How much of the plugin's stderr an error quotes: enough for a cloud CLI's
// "please log in" message, not a whole trace.
constexpr std::size_t kMaxQuotedStderr = 2048;

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    reset(std::exchange(o.fd_, -1));
    return *this;
  }
  ~UniqueFd() { reset(); }
  int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  UniqueFd read, write;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw ExecPluginError(std::string("exec: cannot create a pipe: ") + std::strerror(errno));
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string command_line(const ExecConfig& exec) {
  std::string line = exec.command;
  for (const std::string& a : exec.args) line += " " + a;
  return line;
}

// Our environment with the kubeconfig's env entries replacing or added to it,
// then KUBERNETES_EXEC_INFO, as client-go builds it.
std::vector<std::string> plugin_environment(const ExecConfig& exec, const std::string& info) {
  std::vector<std::pair<std::string, std::string>> extra = exec.env;
  extra.emplace_back("KUBERNETES_EXEC_INFO", info);
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [n, v] : extra) replaced = replaced || n == name;
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& variable : extra) {
    // A later entry of the same name wins, as with Go's exec.Cmd.Env. (Not
    // a structured binding: clang 14, the fuzz build's, cannot capture one.)
    const std::string prefix = variable.first + "=";
    std::erase_if(env, [&prefix](const std::string& e) { return e.starts_with(prefix); });
    env.push_back(prefix + variable.second);
  }
  return env;
}

std::string json_string(const json& status, const char* key) {
  const auto it = status.find(key);
  if (it == status.end() || it->is_null()) return {};
  if (!it->is_string()) {
    throw ExecPluginError(std::string("exec plugin's ExecCredential: field status.") + key +
                          " must be a string");
  }
  return it->get<std::string>();
}

bool same_credential(const ExecCredential& a, const ExecCredential& b) {
  return a.token == b.token && a.client_cert_pem == b.client_cert_pem &&
         a.client_key_pem == b.client_key_pem;
}

}  // namespace

std::optional<system_clock::time_point> parse_rfc3339(const std::string& text) {
  return rfc3339::parse(text);
}

ExecCredential parse_exec_credential(const std::string& text, const std::string& api_version) {
  const std::string what = "exec plugin's ExecCredential";
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    throw ExecPluginError(what + ": stdout is not a JSON object: " + quote(printable(trim(text))));
  }
  const std::string version = doc.value("apiVersion", json("")).is_string()
                                  ? doc.value("apiVersion", std::string())
                                  : std::string();
  if (version != api_version) {
    throw ExecPluginError(what + ": field apiVersion is \"" + version +
                          "\", but the kubeconfig asks for " + api_version);
  }
  if (doc.value("kind", json("")) != "ExecCredential") {
    throw ExecPluginError(what + ": field kind must be ExecCredential");
  }
  const auto status = doc.find("status");
  if (status == doc.end() || !status->is_object()) {
    throw ExecPluginError(what + ": field status is missing");
  }
  ExecCredential cred;
  cred.token = json_string(*status, "token");
  cred.client_cert_pem = json_string(*status, "clientCertificateData");
  cred.client_key_pem = json_string(*status, "clientKeyData");
  if (cred.token.empty() && cred.client_cert_pem.empty() && cred.client_key_pem.empty()) {
    throw ExecPluginError(what + ": field status has no token and no clientCertificateData");
  }
  if (cred.client_cert_pem.empty() != cred.client_key_pem.empty()) {
    throw ExecPluginError(what +
                          ": fields status.clientCertificateData and status.clientKeyData must "
                          "both be set, or neither");
  }
  if (const std::string expiry = json_string(*status, "expirationTimestamp"); !expiry.empty()) {
    cred.expires = parse_rfc3339(expiry);
    if (!cred.expires) {
      throw ExecPluginError(
          what + ": field status.expirationTimestamp is not an RFC 3339 time: " + quote(expiry));
    }
  }
  return cred;
}

std::string exec_info(const ExecConfig& exec, const ClusterConfig& cluster, bool interactive) {
  json spec = {{"interactive", interactive}};
  if (exec.provide_cluster_info) {
    // client-go's Cluster with its omitempty fields.
    json c = {{"server", cluster.server}};
    if (!cluster.tls_server_name.empty()) c["tls-server-name"] = cluster.tls_server_name;
    if (cluster.insecure_skip_tls_verify) c["insecure-skip-tls-verify"] = true;
    if (!cluster.ca_pem.empty()) {
      c["certificate-authority-data"] = base64_encode(std::span<const uint8_t>(
          reinterpret_cast<const uint8_t*>(cluster.ca_pem.data()), cluster.ca_pem.size()));
    }
    if (!cluster.proxy_url.empty()) c["proxy-url"] = cluster.proxy_url;
    spec["cluster"] = std::move(c);
  }
  return json{{"apiVersion", exec.api_version}, {"kind", "ExecCredential"}, {"spec", spec}}.dump();
}

ExecCredential run_exec_plugin(const ExecConfig& exec, const ClusterConfig& cluster,
                               const ExecRunOptions& options) {
  const std::string cmd = command_line(exec);
  const bool terminal = options.stdin_is_terminal ? options.stdin_is_terminal() : ::isatty(0) == 1;
  bool interactive = false;
  switch (exec.interactive_mode) {
    case InteractiveMode::Never:
      break;
    case InteractiveMode::IfAvailable:
      interactive = terminal;
      break;
    case InteractiveMode::Always:
      if (!terminal) {
        throw ExecPluginError("exec plugin \"" + cmd +
                              "\" has interactiveMode Always, but standard input is not a "
                              "terminal");
      }
      interactive = true;
      break;
  }

  std::vector<std::string> env = plugin_environment(exec, exec_info(exec, cluster, interactive));
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_store{exec.command};
  argv_store.insert(argv_store.end(), exec.args.begin(), exec.args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);

  Pipe out = make_pipe();
  Pipe err = make_pipe();
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // Stdin is the user's terminal only when the plugin may interact (a login
  // prompt); otherwise it reads nothing, as with client-go.
  if (!interactive) posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err.write.get(), 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // A process that ignores SIGPIPE would pass that on; the plugin gets the defaults.
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  pid_t pid = 0;
  const int spawned =
      ::posix_spawnp(&pid, exec.command.c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    if (spawned == ENOENT) {
      std::string message = "exec plugin \"" + exec.command + "\" not found";
      if (!exec.install_hint.empty()) message += "\n\n" + exec.install_hint;
      throw ExecPluginError(message);
    }
    throw ExecPluginError("exec plugin \"" + cmd + "\" cannot run: " + std::strerror(spawned));
  }
  out.write.reset();
  err.write.reset();

  std::string stdout_text, stderr_text;
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  std::string failure;
  char buf[4096];
  while (out.read.get() >= 0 || err.read.get() >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      failure = "did not finish within " + std::to_string(options.timeout.count()) + " ms";
      break;
    }
    pollfd fds[2] = {{out.read.get(), POLLIN, 0}, {err.read.get(), POLLIN, 0}};
    const int ready = ::poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) {
      failure = std::string("poll failed: ") + std::strerror(errno);
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        (i == 0 ? out.read : err.read).reset();
        continue;
      }
      const std::string_view chunk(buf, static_cast<std::size_t>(n));
      if (i == 0) {
        stdout_text.append(chunk);
      } else {
        if (options.pass_stderr) [[maybe_unused]]
          auto w = ::write(2, chunk.data(), chunk.size());
        if (stderr_text.size() < kMaxQuotedStderr) stderr_text.append(chunk);
      }
    }
    if (stdout_text.size() > options.max_stdout) {
      failure = "wrote more than " + std::to_string(options.max_stdout) + " bytes to stdout";
      break;
    }
  }
  if (!failure.empty()) ::kill(pid, SIGKILL);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  const std::string quoted_stderr =
      trim(stderr_text).empty() ? std::string(" (no stderr)")
                                : ": " + printable(utf8_head(trim(stderr_text), kMaxQuotedStderr));
  if (!failure.empty()) {
    throw ExecPluginError("exec plugin \"" + cmd + "\" " + failure + quoted_stderr);
  }
  if (WIFSIGNALED(wstatus)) {
    throw ExecPluginError("exec plugin \"" + cmd + "\" was killed by signal " +
                          std::to_string(WTERMSIG(wstatus)) + quoted_stderr);
  }
  if (WEXITSTATUS(wstatus) != 0) {
    throw ExecPluginError("exec plugin \"" + cmd + "\" failed with exit code " +
                          std::to_string(WEXITSTATUS(wstatus)) + quoted_stderr);
  }
  try {
    return parse_exec_credential(stdout_text, exec.api_version);
  } catch (const ExecPluginError& e) {
    throw ExecPluginError("exec plugin \"" + cmd + "\": " + e.what());
  }
}

ExecAuthenticator::ExecAuthenticator(ClusterConfig cluster, ExecRunOptions options, Clock now)
    : cluster_(std::move(cluster)), options_(std::move(options)), now_(std::move(now)) {
  if (!now_) now_ = [] { return system_clock::now(); };
  if (!cluster_.exec) throw std::invalid_argument("ExecAuthenticator: the config has no exec");
}

ExecCredential ExecAuthenticator::run_locked() {
  ++runs_;
  cached_ = run_exec_plugin(*cluster_.exec, cluster_, options_);
  return *cached_;
}

ExecCredential ExecAuthenticator::current() {
  std::lock_guard lock(mu_);
  if (cached_ && (!cached_->expires || now_() < *cached_->expires)) return *cached_;
  return run_locked();
}

ExecCredential ExecAuthenticator::refresh_after_unauthorized(const ExecCredential& rejected) {
  std::lock_guard lock(mu_);
  if (cached_ && !same_credential(*cached_, rejected)) return *cached_;  // already renewed
  return run_locked();
}

std::size_t ExecAuthenticator::runs() const {
  std::lock_guard lock(mu_);
  return runs_;
}

}  // namespace kubeload::kube
