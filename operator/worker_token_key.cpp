#include "operator/worker_token_key.hpp"

#include <cctype>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

#include "kubeload/base64.hpp"
#include "operator/job_builder.hpp"

namespace kubeload::controller {

using nlohmann::json;

std::string WorkerTokenKeySource::describe() const {
  return file.empty() ? "Secret " + secret_namespace + "/" + secret_name : "file " + file;
}

WorkerTokenKeySource choose_worker_token_key_source(const WorkerTokenKeyFlags& flags,
                                                    const OperatorPlace& place) {
  WorkerTokenKeySource source;
  if (!flags.file.empty()) {
    source.file = flags.file;
    source.secret_flag_ignored = !flags.secret.empty();
    return source;
  }
  source.defaulted = flags.secret.empty();
  source.secret_name = source.defaulted ? std::string(kDefaultWorkerTokenKeySecret) : flags.secret;
  if (!flags.secret_namespace.empty()) {
    source.secret_namespace = flags.secret_namespace;
  } else if (place.in_cluster || place.watch_namespace.empty()) {
    source.secret_namespace = place.config_namespace;
  } else {
    source.secret_namespace = place.watch_namespace;
  }
  if (source.secret_namespace.empty()) source.secret_namespace = "default";
  return source;
}

std::string trim_worker_token_key(std::string raw) {
  while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.pop_back();
  return raw;
}

std::optional<std::string> worker_token_key_problem(std::string_view key, std::string_view where) {
  if (key.size() >= kMinWorkerTokenKeyBytes) return std::nullopt;
  return std::string(where) + ": the worker token key is " + std::to_string(key.size()) +
         " bytes (after trailing whitespace), at least " + std::to_string(kMinWorkerTokenKeyBytes) +
         " are needed";
}

namespace {

using Next = KeySecretStep::Next;

KeySecretStep fail(std::string message) {
  return {Next::Fail, {}, std::move(message)};
}

// The key in a Secret the API server returned (on get or create).
KeySecretStep key_of(const WorkerTokenKeySource& source, const json& secret) {
  const std::string where = source.describe();
  const json* data = secret.is_object() && secret.contains("data") ? &secret["data"] : nullptr;
  if (data == nullptr || !data->is_object() || !data->contains("key") ||
      !(*data)["key"].is_string()) {
    return fail(where +
                " has no key \"key\" (data.key): put the worker token key there (at least " +
                std::to_string(kMinWorkerTokenKeyBytes) +
                " bytes), or delete the Secret and the operator creates one with a random key");
  }
  std::string key;
  const std::string& text = (*data)["key"].get_ref<const std::string&>();
  try {
    // An empty value is an empty key (which the size check names), not bad base64.
    if (!text.empty()) {
      const std::vector<uint8_t> bytes = kubeload::base64_decode(text);
      key.assign(bytes.begin(), bytes.end());
    }
  } catch (const std::invalid_argument& e) {
    return fail(where + ": data.key is not base64: " + e.what());
  }
  key = trim_worker_token_key(std::move(key));
  if (auto problem = worker_token_key_problem(key, where + " data.key")) return fail(*problem);
  return {Next::Use, std::move(key), {}};
}

// The RBAC the Secret needs, for a refused call.
std::string needs(const WorkerTokenKeySource& source, const kube::Response& answer,
                  std::string_view verb) {
  std::string message = "cannot " + std::string(verb) + " " + source.describe() +
                        " (the worker token key): " + answer.describe() + ". ";
  if (source.defaulted) {
    message +=
        "With neither --worker-token-key-file nor --worker-token-key-secret the key "
        "lives in that Secret, so a restarted or second operator finds it. ";
  }
  message += "The operator needs get on secrets named \"" + source.secret_name +
             "\" and create on secrets in namespace " + source.secret_namespace +
             " (or name another place: --worker-token-key-secret, "
             "--worker-token-key-secret-namespace, or --worker-token-key-file PATH)";
  return message;
}

bool transient(const kube::Response& answer) {
  return answer.http_status == 429 || answer.http_status >= 500;
}

}  // namespace

KeySecretStep next_key_secret_step(const WorkerTokenKeySource& source, KeySecretCall call,
                                   const kube::Response& answer) {
  if (answer.ok()) return key_of(source, answer.body);
  if (answer.http_status == 401 || answer.http_status == 403) {
    return fail(needs(source, answer, call == KeySecretCall::Get ? "get" : "create"));
  }
  if (transient(answer)) return {Next::Retry, {}, answer.describe()};
  if (call == KeySecretCall::Get) {
    if (answer.is_not_found()) return {Next::Create, {}, {}};
    return fail("cannot get " + source.describe() +
                " (the worker token key): " + answer.describe());
  }
  // Another replica created it between our get and our create: theirs is the
  // key, for both of us.
  if (answer.http_status == 409) return {Next::GetAgain, {}, {}};
  return fail("cannot create " + source.describe() +
              " (the worker token key): " + answer.describe());
}

json build_worker_token_key_secret(const WorkerTokenKeySource& source, std::string_view key) {
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(key.data()), key.size());
  return json{
      {"apiVersion", "v1"},
      {"kind", "Secret"},
      {"metadata",
       {{"name", source.secret_name},
        {"namespace", source.secret_namespace},
        {"labels", {{std::string(kManagedByLabel), std::string(kManagedBy)}}}}},
      {"type", "Opaque"},
      {"data", {{"key", kubeload::base64_encode(bytes)}}},
  };
}

}  // namespace kubeload::controller
