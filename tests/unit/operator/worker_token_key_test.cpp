// Where the worker token key comes from (operator/worker_token_key.hpp):
// which source the flags and the place choose, and what each answer of the
// API server for the key Secret leads to. Rows of a table each.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/base64.hpp"
#include "operator/kube/response.hpp"
#include "operator/worker_token_key.hpp"

namespace {

using nlohmann::json;
using namespace kubeload::controller;
using Next = KeySecretStep::Next;

struct SourceRow {
  const char* name;
  WorkerTokenKeyFlags flags;
  OperatorPlace place;
  std::string file, secret_namespace, secret_name;
  bool defaulted;
};

TEST(OperatorWorkerTokenKey, TheFlagsAndThePlaceChooseOneSource) {
  const OperatorPlace host_all{false, "ctx-ns", ""};
  const OperatorPlace host_one{false, "ctx-ns", "team-a"};
  const OperatorPlace pod_one{true, "kubeload-system", "team-a"};
  const std::vector<SourceRow> rows = {
      {"no flags on a host watching all: the default Secret in the context's namespace",
       {},
       host_all,
       "",
       "ctx-ns",
       "kubeload-worker-token-key",
       true},
      {"no flags on a host watching one namespace: the default Secret there",
       {},
       host_one,
       "",
       "team-a",
       "kubeload-worker-token-key",
       true},
      {"no flags in a pod: its service account's namespace, not the watched one",
       {},
       pod_one,
       "",
       "kubeload-system",
       "kubeload-worker-token-key",
       true},
      {"a Secret named: that one, in the operator's namespace",
       {"", "kl-worker-token-key", ""},
       pod_one,
       "",
       "kubeload-system",
       "kl-worker-token-key",
       false},
      {"a Secret and its namespace named",
       {"", "kl-key", "keys"},
       host_one,
       "",
       "keys",
       "kl-key",
       false},
      {"the namespace alone: the default Secret there",
       {"", "", "keys"},
       pod_one,
       "",
       "keys",
       "kubeload-worker-token-key",
       true},
      {"a file: the file, no Secret", {"/etc/key", "", ""}, pod_one, "/etc/key", "", "", false},
      {"a file and a Secret: the file wins",
       {"/etc/key", "kl", ""},
       host_all,
       "/etc/key",
       "",
       "",
       false},
      {"no namespace known at all: default",
       {},
       {false, "", ""},
       "",
       "default",
       "kubeload-worker-token-key",
       true},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const WorkerTokenKeySource source = choose_worker_token_key_source(row.flags, row.place);
    EXPECT_EQ(source.file, row.file);
    EXPECT_EQ(source.secret_namespace, row.secret_namespace);
    EXPECT_EQ(source.secret_name, row.secret_name);
    EXPECT_EQ(source.defaulted, row.defaulted);
    EXPECT_EQ(source.secret_flag_ignored, !row.flags.file.empty() && !row.flags.secret.empty());
  }
}

json secret_with(const json& data) {
  return json{{"apiVersion", "v1"},
              {"kind", "Secret"},
              {"metadata", {{"name", "kubeload-worker-token-key"}, {"namespace", "ops"}}},
              {"data", data}};
}

std::string b64(const std::string& text) {
  return kubeload::base64_encode({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

struct StepRow {
  const char* name;
  KeySecretCall call;
  int http_status;
  json body;
  Next next;
  std::string key;                       // for Use
  std::vector<std::string> message_has;  // for Fail and Retry
};

kubeload::kube::Response answer(int status, const json& body) {
  return kubeload::kube::make_response(status, body.is_null() ? "" : body.dump());
}

json status(int code, const char* reason, const char* message) {
  return json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
              {"code", code},     {"reason", reason},   {"message", message}};
}

TEST(OperatorWorkerTokenKey, EachAnswerForTheSecretLeadsToOneStep) {
  const std::string key = "a key of thirty-two bytes, 32...";
  const WorkerTokenKeySource defaulted =
      choose_worker_token_key_source({}, OperatorPlace{false, "ops", ""});
  const std::vector<StepRow> rows = {
      {"get: there, with a key: use it",
       KeySecretCall::Get,
       200,
       secret_with({{"key", b64(key)}}),
       Next::Use,
       key,
       {}},
      {"get: a key written with a newline: trimmed as a mounted file would be",
       KeySecretCall::Get,
       200,
       secret_with({{"key", b64(key + "\n")}}),
       Next::Use,
       key,
       {}},
      {"get: not found: create it",
       KeySecretCall::Get,
       404,
       status(404, "NotFound", "secrets \"kubeload-worker-token-key\" not found"),
       Next::Create,
       "",
       {}},
      {"create: made: use the key it holds",
       KeySecretCall::Create,
       201,
       secret_with({{"key", b64(key)}}),
       Next::Use,
       key,
       {}},
      {"create: another replica made it first: read theirs",
       KeySecretCall::Create,
       409,
       status(409, "AlreadyExists", "secrets \"kubeload-worker-token-key\" already exists"),
       Next::GetAgain,
       "",
       {}},
      {"get: forbidden: stop, naming the Secret, the namespace and the RBAC",
       KeySecretCall::Get,
       403,
       status(403, "Forbidden", "cannot get resource \"secrets\""),
       Next::Fail,
       "",
       {"Secret ops/kubeload-worker-token-key",
        "get on secrets named \"kubeload-worker-token-key\"", "create on secrets in namespace ops",
        "--worker-token-key-file",
        "With neither --worker-token-key-file nor --worker-token-key-secret"}},
      {"create: forbidden: stop the same way",
       KeySecretCall::Create,
       403,
       status(403, "Forbidden", "cannot create resource \"secrets\""),
       Next::Fail,
       "",
       {"cannot create Secret ops/kubeload-worker-token-key",
        "create on secrets in namespace ops"}},
      {"get: unauthorized: stop",
       KeySecretCall::Get,
       401,
       status(401, "Unauthorized", ""),
       Next::Fail,
       "",
       {"cannot get Secret ops/kubeload-worker-token-key", "401"}},
      {"get: no data.key: stop naming the Secret",
       KeySecretCall::Get,
       200,
       secret_with({{"other", b64(key)}}),
       Next::Fail,
       "",
       {"Secret ops/kubeload-worker-token-key has no key \"key\""}},
      {"get: no data at all: stop",
       KeySecretCall::Get,
       200,
       secret_with(nullptr),
       Next::Fail,
       "",
       {"has no key \"key\""}},
      {"get: an empty key: stop naming the Secret and the size",
       KeySecretCall::Get,
       200,
       secret_with({{"key", ""}}),
       Next::Fail,
       "",
       {"Secret ops/kubeload-worker-token-key data.key", "is 0 bytes", "at least 16"}},
      {"get: a key too short (whitespace does not count): stop",
       KeySecretCall::Get,
       200,
       secret_with({{"key", b64("short key\n\n\n\n\n\n\n\n")}}),
       Next::Fail,
       "",
       {"is 9 bytes", "at least 16"}},
      {"get: data.key not base64: stop",
       KeySecretCall::Get,
       200,
       secret_with({{"key", "!!!"}}),
       Next::Fail,
       "",
       {"data.key is not base64"}},
      {"get: the API server is unavailable: wait and read again",
       KeySecretCall::Get,
       503,
       status(503, "ServiceUnavailable", "etcd is down"),
       Next::Retry,
       "",
       {"503", "etcd"}},
      {"create: too many requests: wait and read again",
       KeySecretCall::Create,
       429,
       status(429, "TooManyRequests", "slow down"),
       Next::Retry,
       "",
       {"429"}},
      {"create: the namespace does not exist: stop",
       KeySecretCall::Create,
       404,
       status(404, "NotFound", "namespaces \"ops\" not found"),
       Next::Fail,
       "",
       {"cannot create Secret ops/kubeload-worker-token-key", "namespaces \"ops\" not found"}},
      {"create: invalid: stop",
       KeySecretCall::Create,
       422,
       status(422, "Invalid", "bad name"),
       Next::Fail,
       "",
       {"bad name"}},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    const KeySecretStep step =
        next_key_secret_step(defaulted, row.call, answer(row.http_status, row.body));
    EXPECT_EQ(step.next, row.next);
    EXPECT_EQ(step.key, row.key);
    for (const auto& part : row.message_has) {
      EXPECT_NE(step.message.find(part), std::string::npos) << step.message;
    }
  }
}

TEST(OperatorWorkerTokenKey, AForbiddenNamedSecretDoesNotClaimToBeTheDefault) {
  const WorkerTokenKeySource named =
      choose_worker_token_key_source({"", "kl-key", "keys"}, OperatorPlace{true, "ops", ""});
  const KeySecretStep step =
      next_key_secret_step(named, KeySecretCall::Get, answer(403, status(403, "Forbidden", "no")));
  EXPECT_EQ(step.next, Next::Fail);
  EXPECT_NE(step.message.find("Secret keys/kl-key"), std::string::npos) << step.message;
  EXPECT_EQ(step.message.find("With neither"), std::string::npos) << step.message;
}

TEST(OperatorWorkerTokenKey, TheCreatedSecretHoldsTheKeyAndSaysWhoMadeIt) {
  const WorkerTokenKeySource source =
      choose_worker_token_key_source({}, OperatorPlace{false, "ops", ""});
  const std::string key(32, '\x01');
  const json secret = build_worker_token_key_secret(source, key);
  EXPECT_EQ(secret["kind"], "Secret");
  EXPECT_EQ(secret["metadata"]["name"], "kubeload-worker-token-key");
  EXPECT_EQ(secret["metadata"]["namespace"], "ops");
  EXPECT_EQ(secret["metadata"]["labels"]["app.kubernetes.io/managed-by"], "kubeload-operator");
  EXPECT_EQ(secret["data"]["key"], b64(key));
  // What was created reads back as the same key.
  const KeySecretStep step =
      next_key_secret_step(source, KeySecretCall::Create, answer(201, secret));
  EXPECT_EQ(step.next, Next::Use);
  EXPECT_EQ(step.key, key);
}

TEST(OperatorWorkerTokenKey, AFileKeyIsTrimmedAndMeasuredLikeASecretOne) {
  EXPECT_EQ(trim_worker_token_key("0123456789abcdef\n"), "0123456789abcdef");
  EXPECT_EQ(trim_worker_token_key(" lead stays \t\r\n"), " lead stays");
  EXPECT_FALSE(worker_token_key_problem("0123456789abcdef", "file k"));
  const auto problem = worker_token_key_problem("0123456789abcde", "--worker-token-key-file \"k\"");
  ASSERT_TRUE(problem);
  EXPECT_EQ(*problem,
            "--worker-token-key-file \"k\": the worker token key is 15 bytes (after trailing "
            "whitespace), at least 16 are needed");
}

}  // namespace
