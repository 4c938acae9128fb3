#pragma once
// Credentials from a kubeconfig `exec` plugin (client.authentication.k8s.io
// ExecCredential), as client-go gets them: the command runs without a shell,
// with KUBERNETES_EXEC_INFO in its environment; its stdout is an
// ExecCredential whose status holds a token or a client certificate and key,
// kept until its expirationTimestamp and fetched again after that or when the
// API server answers 401.

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "operator/kube/config.hpp"

namespace kubeload::kube {

// The plugin could not run, failed, or printed no usable credential. The
// message names the command and quotes what it wrote to stderr.
class ExecPluginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ExecCredential {
  std::string token;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::optional<std::chrono::system_clock::time_point> expires;  // none: valid until a 401
};

// Parses the plugin's stdout; `api_version` is the one the kubeconfig asked
// for, which the answer must carry. Throws ExecPluginError naming the field.
ExecCredential parse_exec_credential(const std::string& text, const std::string& api_version);

// An RFC 3339 time ("2026-12-03T10:00:00Z", "...T11:00:00.5+01:00"), or nullopt.
std::optional<std::chrono::system_clock::time_point> parse_rfc3339(const std::string& text);

// The KUBERNETES_EXEC_INFO value: an ExecCredential whose spec says whether
// the plugin may interact, and, with provideClusterInfo, which cluster it is for.
std::string exec_info(const ExecConfig& exec, const ClusterConfig& cluster, bool interactive);

struct ExecRunOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(2)};  // then the plugin is killed
  std::size_t max_stdout = 1 << 20;                            // more is an error
  // null: isatty(0). Tests decide whether there is a terminal.
  std::function<bool()> stdin_is_terminal;
  // Copy the plugin's stderr to ours as it comes (its prompts), besides
  // quoting it on failure. Off in tests.
  bool pass_stderr = true;
};

// Runs the plugin once and returns its credential. Throws ExecPluginError.
ExecCredential run_exec_plugin(const ExecConfig& exec, const ClusterConfig& cluster,
                               const ExecRunOptions& options = {});

// The credential a client sends: the plugin's last answer until it expires,
// then a new run. Safe to share between threads; one run at a time.
class ExecAuthenticator {
 public:
  using Clock = std::function<std::chrono::system_clock::time_point()>;
  ExecAuthenticator(ClusterConfig cluster, ExecRunOptions options = {}, Clock now = {});

  // The cached credential, or a fresh one when there is none or it expired.
  ExecCredential current();
  // After a 401 with `rejected`: runs the plugin again unless another thread
  // already replaced that credential, and returns the new one.
  ExecCredential refresh_after_unauthorized(const ExecCredential& rejected);
  // How many times the plugin ran (for tests and logs).
  std::size_t runs() const;

 private:
  ExecCredential run_locked();

  ClusterConfig cluster_;
  ExecRunOptions options_;
  Clock now_;
  mutable std::mutex mu_;
  std::optional<ExecCredential> cached_;
  std::size_t runs_ = 0;
};

}  // namespace kubeload::kube
