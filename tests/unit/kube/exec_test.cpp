// The exec credential plugin as client-go runs it: the ExecCredential it
// prints, a real run of small scripts, the cache until expiry, and the client
// asking again after a 401 from a one-line API server on 127.0.0.1.
#include "operator/kube/exec_credential.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "operator/kube/client.hpp"

namespace kubeload::kube {
namespace {

namespace fs = std::filesystem;
using std::chrono::system_clock;
using namespace std::chrono_literals;

constexpr const char* kV1 = "client.authentication.k8s.io/v1";
constexpr const char* kV1beta1 = "client.authentication.k8s.io/v1beta1";

class ScriptDir {
 public:
  ScriptDir() {
    path_ = fs::temp_directory_path() /
            ("kube_exec_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~ScriptDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  // An executable shell script (the plugin runs it directly, by its #! line).
  std::string script(const std::string& name, const std::string& body) const {
    const fs::path p = path_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    ::chmod(p.c_str(), 0755);
    return p.string();
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string read(const std::string& name) const {
    std::ifstream in(path_ / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  fs::path path_;
  static inline int counter_ = 0;
};

std::string plugin_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ExecPluginError& e) {
    return e.what();
  } catch (const TransportError& e) {
    return e.what();
  }
  return "(no error)";
}

ClusterConfig cluster_with(const ExecConfig& exec) {
  ClusterConfig c;
  c.server = "https://10.0.0.1:6443";
  c.source = "test";
  c.exec = exec;
  return c;
}

ExecRunOptions quiet() {
  ExecRunOptions o;
  o.pass_stderr = false;
  o.timeout = 10s;
  o.stdin_is_terminal = [] { return false; };
  return o;
}

TEST(KubeExecCredential, ParsesATokenInV1AndV1beta1) {
  for (const char* version : {kV1, kV1beta1}) {
    const ExecCredential c = parse_exec_credential(
        std::string(R"({"apiVersion":")") + version +
            R"(","kind":"ExecCredential","status":{"token":"abc","expirationTimestamp":"2026-12-03T10:00:00Z"}})",
        version);
    EXPECT_EQ(c.token, "abc");
    ASSERT_TRUE(c.expires);
    EXPECT_EQ(*c.expires, parse_rfc3339("2026-12-03T10:00:00Z"));
  }
}

TEST(KubeExecCredential, ParsesAClientCertificateWithoutExpiry) {
  const ExecCredential c = parse_exec_credential(
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
      R"("status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}})",
      kV1);
  EXPECT_EQ(c.client_cert_pem, "CERT");
  EXPECT_EQ(c.client_key_pem, "KEY");
  EXPECT_TRUE(c.token.empty());
  EXPECT_FALSE(c.expires);
}

TEST(KubeExecCredential, BadAnswersNameTheField) {
  const std::string head =
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential")";
  const struct {
    std::string text;
    std::string error;
  } rows[] = {
      {"not json", "stdout is not a JSON object"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t"}})",
       "field apiVersion is \"client.authentication.k8s.io/v1beta1\", but the kubeconfig asks for "
       "client.authentication.k8s.io/v1"},
      {R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"Other","status":{"token":"t"}})",
       "field kind must be ExecCredential"},
      {head + "}", "field status is missing"},
      {head + R"(,"status":{}})", "field status has no token and no clientCertificateData"},
      {head + R"(,"status":{"clientCertificateData":"C"}})",
       "status.clientCertificateData and status.clientKeyData must both be set"},
      {head + R"(,"status":{"token":5}})", "field status.token must be a string"},
      {head + R"(,"status":{"token":"t","expirationTimestamp":"tomorrow"}})",
       "field status.expirationTimestamp is not an RFC 3339 time: \"tomorrow\""},
  };
  for (const auto& row : rows) {
    EXPECT_NE(plugin_error([&] { parse_exec_credential(row.text, kV1); }).find(row.error),
              std::string::npos)
        << row.text << " -> " << plugin_error([&] { parse_exec_credential(row.text, kV1); });
  }
}

TEST(KubeExecCredential, Rfc3339WithFractionsAndOffsets) {
  const auto utc = parse_rfc3339("2026-12-03T10:00:00Z");
  ASSERT_TRUE(utc);
  EXPECT_EQ(parse_rfc3339("2026-12-03T11:30:00+01:30"), utc);
  EXPECT_EQ(parse_rfc3339("2026-12-03T09:00:00-01:00"), utc);
  EXPECT_EQ(*parse_rfc3339("2026-12-03T10:00:00.25Z") - *utc, 250ms);
  for (const char* bad :
       {"", "2026-12-03", "2026-12-03T10:00:00", "2026-13-03T10:00:00Z", "2026-12-03T10:00:00+1:00",
        "2026-12-03T10:00:00.Z", "2026-12-03 10:00:00Z"}) {
    EXPECT_FALSE(parse_rfc3339(bad)) << bad;
  }
}

TEST(KubeExecCredential, ExecInfoCarriesTheClusterOnlyWhenAskedFor) {
  ExecConfig exec;
  exec.api_version = kV1;
  ClusterConfig cluster = cluster_with(exec);
  cluster.tls_server_name = "api.internal";
  cluster.proxy_url = "http://127.0.0.1:3128";
  cluster.ca_pem = "CA";
  auto info = nlohmann::json::parse(exec_info(exec, cluster, false));
  EXPECT_EQ(info["apiVersion"], kV1);
  EXPECT_EQ(info["kind"], "ExecCredential");
  EXPECT_EQ(info["spec"], nlohmann::json({{"interactive", false}}));
  exec.provide_cluster_info = true;
  info = nlohmann::json::parse(exec_info(exec, cluster, true));
  EXPECT_EQ(info["spec"]["interactive"], true);
  EXPECT_EQ(info["spec"]["cluster"], nlohmann::json({{"server", "https://10.0.0.1:6443"},
                                                     {"tls-server-name", "api.internal"},
                                                     {"certificate-authority-data", "Q0E="},
                                                     {"proxy-url", "http://127.0.0.1:3128"}}));
}

TEST(KubeExecPlugin, RunsTheCommandWithArgsEnvAndExecInfo) {
  ScriptDir dir;
  ExecConfig exec;
  exec.api_version = kV1;
  exec.command = dir.script("plugin", R"(
printf '%s\n' "$@" > ")" + dir.file("args") +
                                          R"("
printf '%s' "$KUBERNETES_EXEC_INFO" > ")" +
                                          dir.file("info") + R"("
printf '%s' "$EXTRA" > ")" + dir.file("env") +
                                          R"("
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok"}}'
)");
  exec.args = {"get-token", "--cluster", "a b"};
  exec.env = {{"EXTRA", "from-kubeconfig"}};
  exec.provide_cluster_info = true;
  const ExecCredential c = run_exec_plugin(exec, cluster_with(exec), quiet());
  EXPECT_EQ(c.token, "tok");
  EXPECT_EQ(dir.read("args"), "get-token\n--cluster\na b\n");
  EXPECT_EQ(dir.read("env"), "from-kubeconfig");
  const auto info = nlohmann::json::parse(dir.read("info"));
  EXPECT_EQ(info["spec"]["cluster"]["server"], "https://10.0.0.1:6443");
  EXPECT_EQ(info["spec"]["interactive"], false);
}

TEST(KubeExecPlugin, AFailureQuotesTheCommandAndItsStderr) {
  ScriptDir dir;
  ExecConfig exec;
  exec.api_version = kV1;
  exec.command = dir.script("plugin", "echo '  token expired: run aws sso login  ' >&2\nexit 3\n");
  exec.args = {"eks", "get-token"};
  const std::string e = plugin_error([&] { run_exec_plugin(exec, cluster_with(exec), quiet()); });
  EXPECT_NE(e.find("exec plugin \"" + exec.command +
                   " eks get-token\" failed with exit code 3: "
                   "token expired: run aws sso login"),
            std::string::npos)
      << e;
}

TEST(KubeExecPlugin, LongStderrIsCut) {
  ScriptDir dir;
  ExecConfig exec;
  exec.api_version = kV1;
  exec.command = dir.script(
      "plugin", "i=0; while [ $i -lt 2000 ]; do echo 'xxxxxxxxxx' >&2; i=$((i+1)); done; exit 1\n");
  const std::string e = plugin_error([&] { run_exec_plugin(exec, cluster_with(exec), quiet()); });
  EXPECT_NE(e.find("failed with exit code 1"), std::string::npos);
  EXPECT_LT(e.size(), 3000u);
}

TEST(KubeExecPlugin, NotFoundShowsTheInstallHint) {
  ExecConfig exec;
  exec.api_version = kV1;
  exec.command = "kubeload-no-such-plugin";
  exec.install_hint = "Install it with: apt-get install kubeload-no-such-plugin";
  const std::string e = plugin_error([&] { run_exec_plugin(exec, cluster_with(exec), quiet()); });
  EXPECT_NE(e.find("exec plugin \"kubeload-no-such-plugin\" not found"), std::string::npos) << e;
  EXPECT_NE(e.find(exec.install_hint), std::string::npos) << e;
}

TEST(KubeExecPlugin, AHangingPluginIsKilledAtTheTimeout) {
  ScriptDir dir;
  ExecConfig exec;
  exec.api_version = kV1;
  exec.command = dir.script("plugin", "echo waiting >&2\nexec sleep 30\n");
  ExecRunOptions o = quiet();
  o.timeout = 300ms;
  const auto start = std::chrono::steady_clock::now();
  const std::string e = plugin_error([&] { run_exec_plugin(exec, cluster_with(exec), o); });
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
  EXPECT_NE(e.find("did not finish within 300 ms: waiting"), std::string::npos) << e;
}

TEST(KubeExecPlugin, BadStdoutNamesThePlugin) {
  ScriptDir dir;
  ExecConfig exec;
  exec.api_version = kV1;
  exec.command = dir.script("plugin", "echo hello\n");
  const std::string e = plugin_error([&] { run_exec_plugin(exec, cluster_with(exec), quiet()); });
  EXPECT_NE(e.find("exec plugin \"" + exec.command +
                   "\": exec plugin's ExecCredential: stdout is "
                   "not a JSON object: \"hello\""),
            std::string::npos)
      << e;
}

TEST(KubeExecPlugin, InteractiveModes) {
  ScriptDir dir;
  ExecConfig exec;
  exec.api_version = kV1;
  // The plugin reports what KUBERNETES_EXEC_INFO said and whether stdin is /dev/null.
  exec.command = dir.script("plugin", R"(
printf '%s' "$KUBERNETES_EXEC_INFO" > ")" +
                                          dir.file("info") + R"("
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}'
)");
  ExecRunOptions o = quiet();
  const auto interactive = [&] {
    return nlohmann::json::parse(dir.read("info"))["spec"]["interactive"].get<bool>();
  };
  exec.interactive_mode = InteractiveMode::Always;
  EXPECT_NE(plugin_error([&] {
              run_exec_plugin(exec, cluster_with(exec), o);
            }).find("has interactiveMode Always, but standard input is not a terminal"),
            std::string::npos);
  exec.interactive_mode = InteractiveMode::IfAvailable;
  run_exec_plugin(exec, cluster_with(exec), o);
  EXPECT_FALSE(interactive());
  o.stdin_is_terminal = [] { return true; };
  run_exec_plugin(exec, cluster_with(exec), o);
  EXPECT_TRUE(interactive());
  exec.interactive_mode = InteractiveMode::Never;
  run_exec_plugin(exec, cluster_with(exec), o);
  EXPECT_FALSE(interactive());
  exec.interactive_mode = InteractiveMode::Always;
  run_exec_plugin(exec, cluster_with(exec), o);
  EXPECT_TRUE(interactive());
}

// A plugin that counts its runs in a file and hands out tok-<run>, valid for
// `lifetime` from a fixed time.
ExecConfig counting_plugin(const ScriptDir& dir, const std::string& expiry) {
  ExecConfig exec;
  exec.api_version = kV1beta1;
  const std::string status = expiry.empty()
                                 ? R"("token":"tok-%s")"
                                 : R"("token":"tok-%s","expirationTimestamp":")" + expiry + "\"";
  exec.command = dir.script("plugin", R"(
n=$(cat ")" + dir.file("runs") + R"(" 2>/dev/null || echo 0); n=$((n+1)); echo $n > ")" +
                                          dir.file("runs") + R"("
printf '{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{)" +
                                          status + R"(}}' $n
)");
  return exec;
}

TEST(KubeExecAuthenticator, CachesUntilExpiryThenRunsAgain) {
  ScriptDir dir;
  const ExecConfig exec = counting_plugin(dir, "2026-12-03T10:00:00Z");
  system_clock::time_point now = *parse_rfc3339("2026-12-03T09:00:00Z");
  ExecAuthenticator auth(cluster_with(exec), quiet(), [&] { return now; });
  EXPECT_EQ(auth.current().token, "tok-1");
  now += 59min;
  EXPECT_EQ(auth.current().token, "tok-1");
  EXPECT_EQ(auth.runs(), 1u);
  now += 1min;  // at the expiry
  EXPECT_EQ(auth.current().token, "tok-2");
  EXPECT_EQ(auth.runs(), 2u);
}

TEST(KubeExecAuthenticator, WithoutExpiryOnlyA401RunsItAgain) {
  ScriptDir dir;
  const ExecConfig exec = counting_plugin(dir, "");
  ExecAuthenticator auth(cluster_with(exec), quiet());
  const ExecCredential first = auth.current();
  EXPECT_EQ(auth.current().token, "tok-1");
  EXPECT_EQ(auth.refresh_after_unauthorized(first).token, "tok-2");
  // Another thread that saw the same 401 gets the new credential, no third run.
  EXPECT_EQ(auth.refresh_after_unauthorized(first).token, "tok-2");
  EXPECT_EQ(auth.runs(), 2u);
}

// (cpprestsdk writes headers as "Name:value".)
// An API server that answers each connection once (Connection: close): 200
// when the request carries `good`, else 401. It keeps every request head.
class TokenServer {
 public:
  TokenServer(std::string good, int connections)
      : acceptor_(io_,
                  boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
        port_(acceptor_.local_endpoint().port()),
        thread_([this, good = std::move(good), connections] {
          for (int i = 0; i < connections; ++i) {
            boost::asio::ip::tcp::socket socket(io_);
            boost::system::error_code ec;
            acceptor_.accept(socket, ec);
            if (ec) return;
            boost::asio::streambuf buffer;
            const std::size_t n = boost::asio::read_until(socket, buffer, "\r\n\r\n", ec);
            std::string head(static_cast<const char*>(buffer.data().data()), n);
            const bool ok = head.find("Authorization:Bearer " + good + "\r\n") != std::string::npos;
            {
              std::lock_guard lock(mu_);
              heads_.push_back(head);
            }
            const std::string body = ok ? R"({"kind":"Namespace","metadata":{"name":"x"}})"
                                        : R"({"kind":"Status","code":401,"reason":"Unauthorized"})";
            const std::string answer = std::string("HTTP/1.1 ") +
                                       (ok ? "200 OK" : "401 Unauthorized") +
                                       "\r\nContent-Type: application/json\r\nConnection: close\r\n"
                                       "Content-Length: " +
                                       std::to_string(body.size()) + "\r\n\r\n" + body;
            boost::asio::write(socket, boost::asio::buffer(answer), ec);
            socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
          }
        }) {}
  ~TokenServer() {
    boost::system::error_code ec;
    if (thread_.joinable()) thread_.join();
    acceptor_.close(ec);
  }
  std::string server() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> heads() {
    std::lock_guard lock(mu_);
    return heads_;
  }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t port_;
  std::mutex mu_;
  std::vector<std::string> heads_;
  std::thread thread_;
};

TEST(KubeClientExec, A401RunsThePluginAgainAndRetriesOnce) {
  ScriptDir dir;
  TokenServer api("tok-2", 2);
  ClusterConfig cfg = cluster_with(counting_plugin(dir, ""));
  cfg.server = api.server();
  ClientOptions options;
  options.exec = quiet();
  options.request_timeout = 10s;
  Client client(cfg, options);
  const Response r = client.get(resources::configmaps("ns"), "x");
  EXPECT_TRUE(r.ok()) << r.describe();
  const auto heads = api.heads();
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_NE(heads[0].find("Authorization:Bearer tok-1\r\n"), std::string::npos);
  EXPECT_NE(heads[1].find("Authorization:Bearer tok-2\r\n"), std::string::npos);
  EXPECT_EQ(dir.read("runs"), "2\n");
}

TEST(KubeClientExec, AWatchRefusedWith401RunsThePluginAgainAndRetriesOnce) {
  ScriptDir dir;
  TokenServer api("tok-2", 2);
  ClusterConfig cfg = cluster_with(counting_plugin(dir, ""));
  cfg.server = api.server();
  ClientOptions options;
  options.exec = quiet();
  Client client(cfg, options);
  WatchOptions brief;
  brief.timeout_seconds = 1;
  const WatchResult result =
      client.watch(resources::configmaps("ns"), brief, [](const WatchEvent&) {}, {});
  EXPECT_EQ(result.end, WatchResult::End::Closed);
  const auto heads = api.heads();
  ASSERT_EQ(heads.size(), 2u);
  EXPECT_NE(heads[0].find("GET /api/v1/namespaces/ns/configmaps?watch=true"), std::string::npos);
  EXPECT_NE(heads[1].find("Authorization:Bearer tok-2\r\n"), std::string::npos);
  EXPECT_EQ(dir.read("runs"), "2\n");
}

TEST(KubeClientExec, ACertificateFromThePluginThatDoesNotLoadIsNamed) {
  ScriptDir dir;
  ExecConfig exec;
  exec.api_version = kV1;
  exec.command = dir.script(
      "plugin",
      R"(printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
      R"("status":{"clientCertificateData":"not a cert","clientKeyData":"not a key"}}')");
  ClusterConfig cfg = cluster_with(exec);
  cfg.server = "https://127.0.0.1:1";  // never reached
  ClientOptions options;
  options.exec = quiet();
  Client client(cfg, options);
  const std::string e = plugin_error([&] { client.get(resources::configmaps("ns"), "x"); });
  EXPECT_NE(e.find("credentials for test: exec plugin's certificate"), std::string::npos) << e;
  EXPECT_NE(e.find("client-certificate"), std::string::npos) << e;
}

TEST(KubeClientExec, AStill401AfterOneRetryIsReturned) {
  ScriptDir dir;
  TokenServer api("never", 2);
  ClusterConfig cfg = cluster_with(counting_plugin(dir, ""));
  cfg.server = api.server();
  ClientOptions options;
  options.exec = quiet();
  Client client(cfg, options);
  EXPECT_EQ(client.get(resources::configmaps("ns"), "x").http_status, 401);
  EXPECT_EQ(api.heads().size(), 2u);
  EXPECT_EQ(dir.read("runs"), "2\n");
}

TEST(KubeClientExec, AFailingPluginIsATransportErrorQuotingIt) {
  ScriptDir dir;
  ExecConfig exec;
  exec.api_version = kV1;
  exec.command = dir.script("plugin", "echo 'no credentials configured' >&2; exit 1\n");
  ClusterConfig cfg = cluster_with(exec);
  cfg.server = "http://127.0.0.1:1";  // never reached
  ClientOptions options;
  options.exec = quiet();
  Client client(cfg, options);
  const std::string e = plugin_error([&] { client.get(resources::configmaps("ns"), "x"); });
  EXPECT_NE(e.find("credentials for test: exec plugin"), std::string::npos) << e;
  EXPECT_NE(e.find("failed with exit code 1: no credentials configured"), std::string::npos) << e;
}

TEST(KubeClient, ImpersonationHeadersOneGroupPerLine) {
  TokenServer api("static", 1);
  ClusterConfig cfg;
  cfg.server = api.server();
  cfg.token = "static";
  ClientOptions options;
  options.impersonate_user = "jane";
  options.impersonate_groups = {"dev", "system:authenticated"};
  Client client(cfg, options);
  EXPECT_TRUE(client.get(resources::configmaps("ns"), "x").ok());
  const auto heads = api.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_NE(heads[0].find("\r\nImpersonate-User:jane\r\n"), std::string::npos) << heads[0];
  EXPECT_NE(
      heads[0].find("\r\nImpersonate-Group:dev\r\nImpersonate-Group:system:authenticated\r\n"),
      std::string::npos)
      << heads[0];
  options.impersonate_groups = {"a\r\nX-Evil: 1"};
  EXPECT_THROW(Client(cfg, options), std::invalid_argument);
  options.impersonate_user.clear();
  options.impersonate_groups = {"dev"};
  EXPECT_THROW(Client(cfg, options), std::invalid_argument);
}

// proxy-url for an http server: cpprestsdk sends the absolute URI to the
// proxy, with Basic credentials from the URL's user info.
TEST(KubeClient, ProxyUrlCarriesTheRequestAndItsCredentials) {
  TokenServer proxy("static", 1);
  ClusterConfig cfg;
  cfg.server = "http://127.0.0.1:1";  // never connected to: the proxy is
  cfg.token = "static";
  cfg.proxy_url = proxy.server();
  cfg.proxy_url.insert(std::string("http://").size(), "user:p%40ss@");
  Client client(cfg);
  EXPECT_TRUE(client.get(resources::configmaps("ns"), "x").ok());
  const auto heads = proxy.heads();
  ASSERT_EQ(heads.size(), 1u);
  EXPECT_EQ(
      heads[0].rfind("GET http://127.0.0.1:1/api/v1/namespaces/ns/configmaps/x HTTP/1.1\r\n", 0),
      0u)
      << heads[0];
  // base64("user:p@ss"); HTTP allows the space after the colon or not.
  EXPECT_TRUE(
      std::regex_search(heads[0], std::regex("\r\nProxy-Authorization: ?Basic dXNlcjpwQHNz\r\n")))
      << heads[0];
}

}  // namespace
}  // namespace kubeload::kube
