#pragma once
// Where the operator's worker token key (worker_token.hpp) comes from: a file
// (--worker-token-key-file), or a Secret the operator reads and, when it is
// missing, creates with a random key (--worker-token-key-secret; by default
// kubeload-worker-token-key in the operator's own namespace). Kept in the
// cluster, the key outlives the process: a restarted or second operator reads
// the same one and so still drives the workers of runs already going.
// Pure decisions here; main.cpp makes the calls they ask for.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "operator/kube/response.hpp"

namespace kubeload::controller {

inline constexpr std::string_view kDefaultWorkerTokenKeySecret = "kubeload-worker-token-key";
inline constexpr std::size_t kMinWorkerTokenKeyBytes = 16;

struct WorkerTokenKeyFlags {
  std::string file;              // --worker-token-key-file: wins when given
  std::string secret;            // --worker-token-key-secret
  std::string secret_namespace;  // --worker-token-key-secret-namespace
};

// Where the operator runs, for the Secret's default namespace.
struct OperatorPlace {
  bool in_cluster = false;       // configured from its pod's service account
  std::string config_namespace;  // the service account's namespace, or the kubeconfig context's
  std::string watch_namespace;   // --namespace ("" = all)
};

struct WorkerTokenKeySource {
  std::string file;  // non-empty: the key is this file's content; no Secret
  std::string secret_namespace;
  std::string secret_name;
  bool defaulted = false;            // neither flag given: the default Secret
  bool secret_flag_ignored = false;  // --worker-token-key-secret given with the file

  // "file PATH" or "Secret NS/NAME", for messages.
  std::string describe() const;
};

// The file when given; else the Secret: named by the flag or
// kubeload-worker-token-key, in the namespace of the flag, else (in a pod) the
// service account's, else (on a host) --namespace, else the kubeconfig
// context's.
WorkerTokenKeySource choose_worker_token_key_source(const WorkerTokenKeyFlags& flags,
                                                    const OperatorPlace& place);

// A key as read from a file or a Secret's data.key, its trailing whitespace
// removed (a file written by echo ends in a newline; so does a Secret made
// with --from-file of one), so a Secret mounted as a file and the same Secret
// read through the API give the same key.
std::string trim_worker_token_key(std::string raw);
// What is wrong with a (trimmed) key, naming `where`; nullopt when it is fine.
std::optional<std::string> worker_token_key_problem(std::string_view key, std::string_view where);

// The call main.cpp made for the Secret, and what to do with its answer.
enum class KeySecretCall { Get, Create };
struct KeySecretStep {
  enum class Next {
    Use,       // `key` is the key
    Create,    // no Secret: create one (build_worker_token_key_secret)
    GetAgain,  // another operator created it first: read theirs
    Retry,     // the API server is unavailable (`message`): wait, then get again
    Fail,      // stop the operator with `message`
  };
  Next next = Next::Fail;
  std::string key;
  std::string message;
};
KeySecretStep next_key_secret_step(const WorkerTokenKeySource& source, KeySecretCall call,
                                   const kube::Response& answer);

// The Secret to create when there is none: the key base64 in data.key,
// labelled app.kubernetes.io/managed-by: kubeload-operator.
nlohmann::json build_worker_token_key_secret(const WorkerTokenKeySource& source,
                                             std::string_view key);

}  // namespace kubeload::controller
