#pragma once
// Where the API server is and how to authenticate to it: parsed from a
// kubeconfig or from the service-account files mounted into a pod. Key and
// certificate material is held in memory as PEM; nothing is written to disk.

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kubeload::kube {

// Thrown for unreadable or incomplete configuration; the message names the
// file and the field that is wrong.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// When an exec credential plugin may use the terminal (kubeconfig
// users[].user.exec.interactiveMode).
enum class InteractiveMode { Never, IfAvailable, Always };

// A kubeconfig user's `exec` credential plugin, as client-go runs it.
struct ExecConfig {
  std::string command;  // a PATH name, or a path (relative ones resolved against the kubeconfig)
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;  // added to our environment
  std::string api_version;  // client.authentication.k8s.io/v1 or /v1beta1
  InteractiveMode interactive_mode = InteractiveMode::IfAvailable;
  bool provide_cluster_info = false;
  std::string install_hint;  // shown when the command is not found
};

struct ClusterConfig {
  std::string server;  // "https://host:port"
  std::string ca_pem;  // empty: the system trust store
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;  // SNI and certificate name instead of the server's host
  std::string proxy_url;        // the cluster's proxy-url; empty: the environment's
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string token;               // static bearer token
  std::string token_file;          // re-read periodically (service-account tokens rotate)
  std::optional<ExecConfig> exec;  // credentials from a plugin (token or client certificate)
  std::string default_namespace = "default";
  std::string source;  // "kubeconfig /path (context x)" or "in-cluster", for messages
};

// Parses kubeconfig YAML. `base_dir` resolves relative file paths, as kubectl
// does (relative to the kubeconfig's own directory). `context` overrides
// current-context when non-empty. Files it references are read now.
ClusterConfig parse_kubeconfig(const std::string& yaml_text, const std::string& source_name,
                               const std::string& base_dir, const std::string& context = {});
ClusterConfig load_kubeconfig_file(const std::string& path, const std::string& context = {});

// Several kubeconfig files merged by kubectl's rules ($KUBECONFIG as a list):
// a cluster, user or context name is taken from the first file that defines
// it, current-context from the first file that sets it, files that do not
// exist are skipped, and relative paths resolve against the file that holds
// them. Throws when no file exists.
ClusterConfig load_kubeconfig_files(const std::vector<std::string>& paths,
                                    const std::string& context = {});

// The in-cluster configuration. `root` replaces "/" for the service-account
// directory so tests can point it at a temporary tree; `getenv` likewise.
struct InClusterSource {
  std::string sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  std::function<std::optional<std::string>(const char*)> getenv;  // null: ::getenv
};
ClusterConfig load_in_cluster(const InClusterSource& src = {});

// The operator's rule: --kubeconfig if given, else $KUBECONFIG (its files
// merged, as kubectl does), else in-cluster when KUBERNETES_SERVICE_HOST is set, else
// ~/.kube/config. A non-empty `context` selects a kubeconfig context (as
// kubectl's --context) and so skips the in-cluster configuration.
ClusterConfig load_config(const std::string& kubeconfig_flag = {}, const std::string& context = {});

// Standard base64 with or without padding, whitespace ignored. Throws
// ConfigError naming `what` on bad input.
std::string base64_decode(const std::string& in, const std::string& what);

// Holds the bearer token; re-reads token_file when the last read is older than
// `refresh`, keeping the old token if a re-read fails (the kubelet rewrites the
// file atomically, but a transient read error must not log us out).
class BearerToken {
 public:
  explicit BearerToken(const ClusterConfig& cfg,
                       std::chrono::seconds refresh = std::chrono::seconds(60));
  // "" when the config uses no token.
  std::string current();

 private:
  std::mutex mu_;
  std::string token_;
  std::string file_;
  std::chrono::seconds refresh_;
  std::chrono::steady_clock::time_point read_at_{};
};

}  // namespace kubeload::kube
