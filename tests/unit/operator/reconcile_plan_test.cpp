// The reconcile plan, table-tested: each row is an Observation (the LoadTest
// as the API returns it, its Job and pods as the Job controller and kubelet
// report them, the kept results, the workers' answers, the clock) and what
// plan() must decide: the phase and reason, the actions in order, and when to
// look again. Crash points are rows too: an operator killed after any action
// observes the state that action left and must continue from there.

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/worker_protocol.hpp"
#include "kubeload/histogram.hpp"
#include "kubeload/result.hpp"
#include "operator/job_builder.hpp"
#include "operator/reconcile_plan.hpp"
#include "operator/worker_token.hpp"

namespace {

using nlohmann::json;
using namespace kubeload;
using namespace kubeload::controller;
using std::chrono::milliseconds;
using std::chrono::seconds;

// Statuses as the API returns them, typed as observe() types them, and
// back as the API server would store them.
api::LoadTestStatus S(const json& status) {
  return status.get<api::LoadTestStatus>();
}
json J(const api::LoadTestStatus& status) {
  return status;
}

const Timestamp kCreated = *parse_time("2026-11-29T19:00:00Z");
const Timestamp kStartAt = kCreated + seconds(20);
constexpr const char* kUid = "4a1c2d3e-0000-4000-8000-000000000001";
constexpr const char* kOldUid = "9f9f9f9f-0000-4000-8000-000000000002";
constexpr const char* kJobUid = "j-1";

int64_t unix_ms(Timestamp t) {
  return std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
}

json loadtest_json(const std::string& extra_spec = "") {
  json lt = json::parse(R"({
    "apiVersion": "kubeload.dev/v1alpha1",
    "kind": "LoadTest",
    "metadata": {"name": "checkout", "namespace": "shop", "generation": 1,
                 "resourceVersion": "1001", "creationTimestamp": "2026-11-29T19:00:00Z",
                 "labels": {"kubeload.dev/test": "checkout"}},
    "spec": {
      "target": {"url": "http://checkout.shop.svc:8080/"},
      "load": {"connections": 20, "duration": "30s"},
      "workers": 2,
      "thresholds": ["errorRate < 1%"]
    }
  })");
  lt["metadata"]["uid"] = kUid;
  if (!extra_spec.empty()) lt["spec"].update(json::parse(extra_spec));
  return lt;
}

json job_json(const std::string& owner_uid = kUid, std::optional<Timestamp> start_at = {}) {
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata",
               {{"name", "checkout-workers"},
                {"namespace", "shop"},
                {"uid", owner_uid == kUid ? kJobUid : "j-old"},
                {"resourceVersion", "2002"},
                {"creationTimestamp", format_time(kCreated + seconds(1))},
                {"labels", {{"app.kubernetes.io/managed-by", "kubeload-operator"}}},
                {"ownerReferences",
                 {{{"kind", "LoadTest"},
                   {"name", "checkout"},
                   {"uid", owner_uid},
                   {"controller", true}}}}}},
              {"status", json::object()}};
  if (start_at) {
    job["metadata"]["annotations"]["kubeload.dev/start-at"] = std::to_string(unix_ms(*start_at));
  }
  return job;
}

json pod_json(uint32_t index, const std::string& phase, bool ready, const std::string& uid = kUid) {
  const std::string i = std::to_string(index);
  return {{"metadata",
           {{"name", "checkout-workers-" + i + "-abcde"},
            {"labels",
             {{"kubeload.dev/loadtest", "checkout"},
              {"kubeload.dev/loadtest-uid", uid},
              {"batch.kubernetes.io/job-completion-index", i}}},
            {"annotations", {{"batch.kubernetes.io/job-completion-index", i}}},
            {"ownerReferences",
             {{{"kind", "Job"},
               {"name", "checkout-workers"},
               {"uid", uid == kUid ? kJobUid : "j-old"},
               {"controller", true}}}}}},
          {"status",
           {{"phase", phase},
            {"podIP", phase == "Pending" ? "" : "10.244.0." + std::to_string(10 + index)},
            {"conditions", {{{"type", "Ready"}, {"status", ready ? "True" : "False"}}}}}}};
}

RunResult run_of(uint64_t requests, bool finished) {
  RunResult run;
  run.result.requests = requests;
  run.result.status_codes[200] = requests;
  run.result.duration_seconds = finished ? 30.0 : 10.0;
  if (finished) {
    for (uint64_t i = 0; i < requests; ++i) run.result.latency.record(1000 + int64_t(i % 50));
  }
  run.request_results.push_back({"default", run.result});
  run.finished = finished;
  return run;
}

json answer_document(uint32_t index, uint64_t requests, bool finished,
                     const std::string& uid = kUid, const std::string& error = "") {
  json document = to_json(run_of(requests, finished));
  document["worker"] = index;
  document["startedAtMs"] = unix_ms(kStartAt);
  document["loadTestUid"] = uid;
  if (!error.empty()) document["error"] = error;
  return document;
}

// Worker `index` served `document` in this pass, taken in as the executor
// takes each answer on arrival.
void answer(Observation& o, uint32_t index, const json& document) {
  if (o.answers.uid.empty()) o.answers = begin_pass(o);
  take_answer(o.answers, index, digest_answer(o.answers.uid, document, ""));
}
// Worker `index` could not be reached in this pass (or answered 401/403:
// `token_refused`).
void no_answer(Observation& o, uint32_t index, const std::string& error,
               bool token_refused = false) {
  if (o.answers.uid.empty()) o.answers = begin_pass(o);
  take_answer(o.answers, index, digest_answer(o.answers.uid, std::nullopt, error, token_refused));
}

// The results ConfigMap as the API server would hold it after earlier
// passes kept these workers' final documents.
json kept_config_map(const std::map<uint32_t, json>& documents, uint32_t workers = 2,
                     const std::string& uid = kUid) {
  WorkerResults kept(workers);
  for (const auto& [index, document] : documents) {
    EXPECT_TRUE(kept.fold(index, collected_result_from_json(document)));
  }
  return {{"metadata",
           {{"name", results_config_map_name("checkout", kUid)},
            {"resourceVersion", "3003"},
            {"ownerReferences", {{{"uid", kUid}, {"controller", true}}}}}},
          {"data", kept_results_data(kept, uid)}};
}

// The operator's configuration in these rows: every operator has a worker
// token key (from its Secret or --worker-token-key-file).
OperatorConfig test_config() {
  OperatorConfig config;
  config.loadgen_image = "kubeload:test";
  config.worker_token_key = "a test key of thirty-two bytes..";
  config.max_rate = 100000;
  return config;
}

// The target Service "checkout" of "shop" as the API server holds it: a
// ClusterIP in front of two pods its selector chose.
json checkout_service_json() {
  return json::parse(R"({"metadata": {"name": "checkout", "namespace": "shop"},
    "spec": {"type": "ClusterIP", "clusterIP": "10.245.0.20", "clusterIPs": ["10.245.0.20"],
             "selector": {"app": "checkout"}}})");
}
json checkout_slices_json(const std::string& managed_by = "endpointslice-controller.k8s.io",
                          const std::string& address = "10.244.0.7", int port = 8080) {
  return {{"items",
           {{{"metadata", {{"labels", {{"endpointslice.kubernetes.io/managed-by", managed_by}}}}},
             {"endpoints", {{{"addresses", {"10.244.0.6"}}}, {{"addresses", {address}}}}},
             {"ports", {{{"port", port}}}}}}}};
}

// What observe() reads, for a LoadTest seen at `now` (the target Service
// and the Secrets the spec names when the plan asks for them, as the
// controller's lookups read them). `secrets`: the metadata of the Secrets of
// "shop" as the API server holds them, by name; any other is not found.
Observation observe(const json& loadtest, Timestamp now, const OperatorConfig& config = {},
                    const json& slices = checkout_slices_json(),
                    const std::map<std::string, json>& secrets = {},
                    const std::map<std::string, json>& config_maps = {}) {
  Observation o;
  o.loadtest = loadtest;
  o.parsed = parse_loadtest(loadtest.dump());
  o.now = now;
  const Lookups need = lookups_for(o, config);
  if (const auto& host = need.target_service) {
    o.target_service_looked_up = true;
    const bool checkout = host->namespace_ == "shop" && host->name == "checkout";
    o.target_service = target_service_view(
        *host, checkout ? std::optional<json>(checkout_service_json()) : std::nullopt, slices);
  }
  if (!need.secrets.empty()) {
    o.secrets_looked_up = true;
    for (const std::string& name : need.secrets) {
      const auto found = secrets.find(name);
      o.secrets[name] =
          found == secrets.end() ? SecretMetadataView{} : secret_metadata_view(found->second);
    }
  }
  if (!need.config_maps.empty()) {
    o.config_maps_looked_up = true;
    for (const std::string& name : need.config_maps) {
      const auto found = config_maps.find(name);
      o.config_maps[name] =
          found == config_maps.end() ? ConfigMapKeysView{} : config_map_keys_view(found->second);
    }
  }
  return o;
}

// The actions, one word each (and the worker or key where there is one).
std::vector<std::string> names(const ReconcilePlan& p) {
  std::vector<std::string> out;
  for (const Action& action : p.actions) {
    std::visit(
        [&](const auto& a) {
          using A = std::decay_t<decltype(a)>;
          if constexpr (std::is_same_v<A, CreateNetworkPolicy>) {
            out.push_back("CreateNetworkPolicy");
          }
          if constexpr (std::is_same_v<A, CreateTokenSecret>) out.push_back("CreateTokenSecret");
          if constexpr (std::is_same_v<A, CreateSpecConfigMap>) {
            out.push_back("CreateSpecConfigMap");
          }
          if constexpr (std::is_same_v<A, CreateJob>) out.push_back("CreateJob");
          if constexpr (std::is_same_v<A, RecordStartAt>) out.push_back("RecordStartAt");
          if constexpr (std::is_same_v<A, StartWorker>) {
            out.push_back("StartWorker " + std::to_string(a.index));
          }
          if constexpr (std::is_same_v<A, KeepResults>) {
            std::string added;
            for (const uint32_t index : a.added) added += " " + std::to_string(index);
            out.push_back("KeepResults" + added);
          }
          if constexpr (std::is_same_v<A, FinishWorker>) {
            out.push_back("FinishWorker " + std::to_string(a.index));
          }
          if constexpr (std::is_same_v<A, WriteStatus>) out.push_back("WriteStatus");
          if constexpr (std::is_same_v<A, RecordEvent>) out.push_back("Event " + a.reason);
          if constexpr (std::is_same_v<A, DeleteJob>) out.push_back("DeleteJob " + a.uid);
          if constexpr (std::is_same_v<A, EndJob>) out.push_back("EndJob");
          if constexpr (std::is_same_v<A, DeleteLoadTest>) out.push_back("DeleteLoadTest " + a.uid);
          if constexpr (std::is_same_v<A, CreateResultRecord>) {
            out.push_back("CreateResultRecord " + a.record.metadata.name);
          }
          if constexpr (std::is_same_v<A, UpdateResultRecord>) {
            out.push_back("UpdateResultRecord " + a.name);
          }
          if constexpr (std::is_same_v<A, PruneResultRecords>) {
            std::string pruned;
            for (const std::string& name : a.names) pruned += " " + name;
            out.push_back("PruneResultRecords" + pruned);
          }
        },
        action);
  }
  return out;
}

// Whether the plan creates any of the run's objects.
bool creates_anything(const ReconcilePlan& p) {
  const std::vector<std::string> planned = names(p);
  return std::any_of(planned.begin(), planned.end(),
                     [](const std::string& name) { return name.starts_with("Create"); });
}

using Strings = std::vector<std::string>;

struct Row {
  std::string name;
  std::function<Observation()> observed;
  std::string phase;
  std::string reason;
  Strings actions;
  std::optional<milliseconds> requeue;
  std::string message_contains = "";
};

// A started run at `now`: Job with the barrier, both pods running.
Observation running(Timestamp now, const std::string& extra_spec = "") {
  Observation o = observe(loadtest_json(extra_spec), now);
  o.loadtest.status = S({{"phase", "Running"}, {"startTime", format_time(kStartAt)}});
  o.job = job_view(job_json(kUid, kStartAt));
  o.pods = {pod_view(pod_json(0, "Running", true)), pod_view(pod_json(1, "Running", true))};
  return o;
}

// The stored final status completed as this operator writes it (every
// condition), so a row starts from what an earlier pass of it stored.
Observation settled(Observation o) {
  o.loadtest.status = plan(o, test_config()).status;
  return o;
}

// The same run, as having started at kStartAt (so it has a record to write) ...
Observation started(Observation o) {
  o.loadtest.status.start_time = kStartAt;
  return o;
}
// ... and with its record written.
Observation recorded(Observation o) {
  o = started(std::move(o));
  o.loadtest.status.result_record = "checkout-" + std::string(kUid).substr(0, 8);
  return o;
}

// A record of the test, completed at `completed`, that passed.
api::LoadTestResult record_of(const std::string& name, Timestamp completed) {
  api::LoadTestResult record;
  record.metadata.name = name;
  record.test = "checkout";
  record.run.completion_time = completed;
  record.run.verdict = api::Verdict::Pass;
  record.run.result = nlohmann::json{{"requests", 10}};
  return record;
}

// A run that ended at kStartAt + 40s with `verdict`, its Job and pods gone.
Observation finished(Timestamp now, const std::string& phase, const std::string& verdict,
                     const std::string& extra_spec = R"({"ttlSecondsAfterFinished": 600})") {
  Observation o = observe(loadtest_json(extra_spec), now);
  o.loadtest.status = S({{"phase", phase},
                         {"observedGeneration", 1},
                         {"verdict", verdict},
                         {"reason", phase == "Failed" ? "WorkerFailed" : "ThresholdsPassed"},
                         {"completionTime", format_time(kStartAt + seconds(40))}});
  return settled(o);
}

std::vector<Row> rows() {
  const Timestamp early = kCreated + seconds(5);
  const Timestamp mid = kStartAt + seconds(10);
  return {
      {"a new LoadTest gets a first Pending status, then its Job",
       [=] { return observe(loadtest_json(), early); },
       "Pending",
       "WaitingForWorkers",
       {"WriteStatus", "Event WaitingForWorkers", "CreateTokenSecret", "CreateSpecConfigMap",
        "CreateJob"},
       seconds(5)},
      {"a LoadTest above the operator's ceilings fails before anything is created",
       [=] {
         return observe(loadtest_json(R"({"load": {"rate": 200000, "duration": "30s"}})"), early);
       },
       "Failed",
       "PolicyViolation",
       {"WriteStatus", "Event PolicyViolation"},
       std::nullopt,
       "spec.load.rate: 200000 requests/s is above the operator's ceiling of 100000 (--max-rate)"},
      {"a Job the API server refuses is Failed with its message, not retried",
       [=] {
         Observation o = observe(loadtest_json(), early);
         o.create_refused =
             CreateRefusal{CreateRefusal::Object::Job,
                           "exceeded quota: compute, requested: limits.cpu=8, limited: 4"};
         return o;
       },
       "Failed",
       "JobRejected",
       {"WriteStatus", "Event JobRejected"},
       std::nullopt,
       "exceeded quota: compute"},
      {"a NetworkPolicy the API server refuses (a quota) fails the run with its message",
       [=] {
         Observation o = observe(loadtest_json(), early);
         o.create_refused = CreateRefusal{
             CreateRefusal::Object::NetworkPolicy,
             "networkpolicies \"checkout-workers\" is forbidden: exceeded quota: no-netpol"};
         return o;
       },
       "Failed",
       "ObjectRejected",
       {"WriteStatus", "Event ObjectRejected"},
       std::nullopt,
       "refused the workers' NetworkPolicy: networkpolicies"},
      {"so does a token Secret a policy engine refuses",
       [=] {
         Observation o = observe(loadtest_json(), early);
         o.create_refused = CreateRefusal{CreateRefusal::Object::TokenSecret,
                                          "admission webhook \"validate.kyverno.svc\" denied"};
         return o;
       },
       "Failed",
       "ObjectRejected",
       {"WriteStatus", "Event ObjectRejected"},
       std::nullopt,
       "refused the worker token Secret: admission webhook"},
      {"a NetworkPolicy of the run's name that another made is not taken for the run's",
       [=] {
         Observation o = observe(loadtest_json(), early);
         o.create_refused =
             CreateRefusal{CreateRefusal::Object::NetworkPolicy,
                           "\"checkout-workers-x\" exists and has no controller", true};
         return o;
       },
       "Failed",
       "ObjectNameTaken",
       {"WriteStatus", "Event ObjectNameTaken"},
       std::nullopt,
       "the name of the workers' NetworkPolicy is taken"},
      {"killed after creating the Job: not created again; waits for the workers",
       [=] {
         Observation o = observe(loadtest_json(), early);
         o.job = job_view(job_json());
         o.pods = {pod_view(pod_json(0, "Running", true)), pod_view(pod_json(1, "Pending", false))};
         return o;
       },
       "Starting",
       "WaitingForWorkers",
       {"WriteStatus", "Event WaitingForWorkers"},
       seconds(2)},
      {"all workers ready: the barrier is recorded on the Job before any worker hears of it",
       [=] {
         Observation o = observe(loadtest_json(), early);
         o.job = job_view(job_json());
         o.pods = {pod_view(pod_json(0, "Running", true)), pod_view(pod_json(1, "Running", true))};
         return o;
       },
       "Running",
       "Running",
       {"RecordStartAt", "StartWorker 0", "StartWorker 1", "WriteStatus", "Event Running"},
       seconds(1)},
      {"killed after recording the barrier: workers that did not start get the same barrier",
       [=] {
         Observation o = running(kStartAt - seconds(1));
         o.loadtest.status = S({{"phase", "Starting"}});
         json not_started = answer_document(1, 0, false);
         not_started.erase("startedAtMs");
         answer(o, 0, answer_document(0, 0, false));
         answer(o, 1, not_started);
         return o;
       },
       "Running",
       "Running",
       {"StartWorker 1", "WriteStatus", "Event Running"},
       seconds(1)},
      {"a worker's final result is kept before it is told to exit",
       [=] {
         Observation o = running(mid);
         answer(o, 0, answer_document(0, 500, true));
         answer(o, 1, answer_document(1, 200, false));
         return o;
       },
       "Running",
       "Running",
       {"KeepResults 0", "WriteStatus", "FinishWorker 0"},
       seconds(1)},
      {"killed after fetching results: the kept results finish the run though the pods are gone",
       [=] {
         Observation o = running(mid + seconds(40));
         o.pods = {pod_view(pod_json(0, "Succeeded", false)),
                   pod_view(pod_json(1, "Succeeded", false))};
         o.kept_results = config_map_view(kept_config_map(
             {{0, answer_document(0, 500, true)}, {1, answer_document(1, 400, true)}}));
         return o;
       },
       "Succeeded",
       "ThresholdsPassed",
       {"CreateResultRecord checkout-4a1c2d3e", "WriteStatus", "Event ThresholdsPassed",
        "DeleteJob j-1"},
       kPollForLookup},
      {"killed after writing the final status, before /finish: the workers are told now",
       [=] {
         Observation o = running(mid + seconds(40));
         o.loadtest.status = S({{"phase", "Succeeded"},
                                {"observedGeneration", 1},
                                {"verdict", "Pass"},
                                {"reason", "ThresholdsPassed"}});
         return settled(o);
       },
       "Succeeded",
       "ThresholdsPassed",
       {"FinishWorker 0", "FinishWorker 1", "DeleteJob j-1"},
       std::nullopt},
      {"a worker's result naming another LoadTest (a reused pod IP) is not merged",
       [=] {
         Observation o = running(mid);
         answer(o, 0, answer_document(0, 500, true, kOldUid));
         answer(o, 1, answer_document(1, 200, false));
         return o;
       },
       "Running",
       "Running",
       {"WriteStatus"},
       seconds(1)},
      {"recreated by name while the old Job is still there: the old Job goes first, by uid",
       [=] {
         Observation o = observe(loadtest_json(), early);
         o.job = job_view(job_json(kOldUid, kStartAt));
         o.pods = {pod_view(pod_json(0, "Running", true, kOldUid)),
                   pod_view(pod_json(1, "Running", true, kOldUid))};
         return o;
       },
       "Pending",
       "WaitingForWorkers",
       {"DeleteJob j-old", "WriteStatus", "Event WaitingForWorkers"},
       seconds(2)},
      {"recreated by name while the old Job is being deleted: wait, touch nothing of it",
       [=] {
         Observation o = observe(loadtest_json(), early);
         json old = job_json(kOldUid);
         old["metadata"]["deletionTimestamp"] = format_time(early);
         o.job = job_view(old);
         return o;
       },
       "Pending",
       "WaitingForWorkers",
       {"WriteStatus", "Event WaitingForWorkers"},
       seconds(2)},
      {"a Job of the same name that is not ours fails the run instead of being used",
       [=] {
         Observation o = observe(loadtest_json(), early);
         json theirs = job_json("someone-else");
         theirs["metadata"]["labels"] = json::object();
         o.job = job_view(theirs);
         return o;
       },
       "Failed",
       "JobNameTaken",
       {"WriteStatus", "Event JobNameTaken"},
       std::nullopt},
      {"the run deadline passed: Failed, and the kept Job is ended so its pods go",
       [=] {
         Observation o = running(kStartAt + seconds(30 + 30 + 30 + 1));
         answer(o, 0, answer_document(0, 500, false));
         answer(o, 1, answer_document(1, 200, false));
         return o;
       },
       "Failed",
       "RunDeadlineExceeded",
       {"CreateResultRecord checkout-4a1c2d3e", "WriteStatus", "Event RunDeadlineExceeded",
        "FinishWorker 0", "FinishWorker 1", "EndJob"},
       kPollForLookup,
       "did not end within 1m30s"},
      {"spec.timeouts.run bounds a run by requests",
       [=] {
         Observation o = running(kStartAt + seconds(121),
                                 R"({"load": {"connections": 20, "requests": 100000},
                                     "timeouts": {"run": "2m"}})");
         answer(o, 0, answer_document(0, 500, false));
         answer(o, 1, answer_document(1, 200, false));
         return o;
       },
       "Failed",
       "RunDeadlineExceeded",
       {"CreateResultRecord checkout-4a1c2d3e", "WriteStatus", "Event RunDeadlineExceeded",
        "FinishWorker 0", "FinishWorker 1", "EndJob"},
       kPollForLookup,
       "within 2m"},
      {"cleanup Always: a failed run's Job is deleted",
       [=] {
         Observation o = running(kStartAt + seconds(100), R"({"cleanup": {"policy": "Always"}})");
         return o;
       },
       "Failed",
       "RunDeadlineExceeded",
       {"CreateResultRecord checkout-4a1c2d3e", "WriteStatus", "Event RunDeadlineExceeded",
        "FinishWorker 0", "FinishWorker 1", "DeleteJob j-1"},
       kPollForLookup},
      {"a worker not answering for less than the bound: still running",
       [=] {
         Observation o = running(mid);
         no_answer(o, 0, "10.244.0.10:8080: connection timed out");
         answer(o, 1, answer_document(1, 200, false));
         o.unreachable_since[0] = mid - seconds(59);
         return o;
       },
       "Running",
       "Running",
       {"WriteStatus"},
       seconds(1)},
      {"a worker not answering for the bound: WorkersUnreachable, naming the port",
       [=] {
         Observation o = running(mid);
         no_answer(o, 0, "10.244.0.10:8080: connection timed out");
         answer(o, 1, answer_document(1, 200, false));
         o.unreachable_since[0] = mid - seconds(60);
         return o;
       },
       "Failed",
       "WorkersUnreachable",
       {"CreateResultRecord checkout-4a1c2d3e", "WriteStatus", "Event WorkersUnreachable",
        "FinishWorker 0", "FinishWorker 1", "EndJob"},
       kPollForLookup,
       "TCP port 8080"},
      {"a worker refusing the run's token for the bound: WorkerTokenRefused, naming the key",
       [=] {
         Observation o = running(mid);
         no_answer(o, 0, "http://10.244.0.10:8080/result: HTTP 403: \"not this run's token\"",
                   true);
         answer(o, 1, answer_document(1, 200, false));
         o.unreachable_since[0] = mid - seconds(60);
         return o;
       },
       "Failed",
       "WorkerTokenRefused",
       {"CreateResultRecord checkout-4a1c2d3e", "WriteStatus", "Event WorkerTokenRefused",
        "FinishWorker 0", "FinishWorker 1", "EndJob"},
       kPollForLookup,
       "another worker token key"},
      {"a worker cut short by SIGTERM is a failed worker, its share not counted as complete",
       [=] {
         Observation o = running(mid);
         answer(o, 0, answer_document(0, 500, true));
         answer(o, 1,
                answer_document(1, 120, true, kUid,
                                "interrupted (SIGTERM) after 120 requests in 4.0s of 30.0s"));
         return o;
       },
       "Failed",
       "WorkerFailed",
       {"KeepResults 0 1", "CreateResultRecord checkout-4a1c2d3e", "WriteStatus",
        "Event WorkerFailed", "FinishWorker 0", "FinishWorker 1", "EndJob"},
       kPollForLookup,
       "interrupted (SIGTERM) after 120"},
      {"an evicted worker fails the run",
       [=] {
         Observation o = running(mid);
         json evicted = pod_json(1, "Failed", false);
         evicted["status"]["reason"] = "Evicted";
         evicted["status"]["message"] = "The node was low on resource: memory.";
         o.pods[1] = pod_view(evicted);
         answer(o, 0, answer_document(0, 200, false));
         return o;
       },
       "Failed",
       "WorkerFailed",
       {"CreateResultRecord checkout-4a1c2d3e", "WriteStatus", "Event WorkerFailed",
        "FinishWorker 0", "EndJob"},
       kPollForLookup,
       "Evicted"},
      {"without the baseline it needs, nothing is kept or written, and it looks again soon",
       [=] {
         Observation o =
             running(mid + seconds(40),
                     R"({"baseline": {"lastPassed": true, "maxRegression": {"p99": "10%"}}})");
         answer(o, 0, answer_document(0, 500, true));
         answer(o, 1, answer_document(1, 400, true));
         return o;
       },
       "Running",
       "",
       {},
       kPollForLookup},
      {"after the baseline lookup the run ends",
       [=] {
         Observation o =
             running(mid + seconds(40),
                     R"({"baseline": {"lastPassed": true, "maxRegression": {"p99": "10%"}}})");
         answer(o, 0, answer_document(0, 500, true));
         answer(o, 1, answer_document(1, 400, true));
         o.baseline_looked_up = true;
         return o;
       },
       "Succeeded",
       "ThresholdsPassed",
       {"KeepResults 0 1", "CreateResultRecord checkout-4a1c2d3e", "WriteStatus",
        "Event ThresholdsPassed", "FinishWorker 0", "FinishWorker 1", "DeleteJob j-1"},
       kPollForLookup},
      {"kept results of another incarnation are not this run's",
       [=] {
         Observation o = running(mid);
         o.kept_results =
             config_map_view(kept_config_map({{0, answer_document(0, 500, true)}}, 2, kOldUid));
         answer(o, 1, answer_document(1, 200, false));
         return o;
       },
       "Failed",
       "ResultsUnreadable",
       {"CreateResultRecord checkout-4a1c2d3e", "WriteStatus", "Event ResultsUnreadable",
        "FinishWorker 0", "FinishWorker 1", "EndJob"},
       kPollForLookup,
       "not this run's"},
      {"retention: a finished run is kept until its ttlSecondsAfterFinished",
       [=] { return finished(kStartAt + seconds(40 + 590), "Succeeded", "Pass"); },
       "Succeeded",
       "ThresholdsPassed",
       {},
       seconds(10)},
      {"retention: a run without ttlSecondsAfterFinished is kept",
       [=] { return finished(kStartAt + seconds(40 + 6000), "Succeeded", "Pass", "{}"); },
       "Succeeded",
       "ThresholdsPassed",
       {},
       std::nullopt},
      {"retention: a failed run goes when its time is up",
       [=] { return finished(kStartAt + seconds(40 + 600), "Failed", "None"); },
       "Failed",
       "WorkerFailed",
       {std::string("DeleteLoadTest ") + kUid},
       std::nullopt},
      {"retention: a recorded run goes at its TTL, whatever its verdict (baselines read records)",
       [=] { return recorded(finished(kStartAt + seconds(40 + 600), "Succeeded", "Pass")); },
       "Succeeded",
       "ThresholdsPassed",
       {std::string("DeleteLoadTest ") + kUid},
       kPollForLookup},
      {"retention: a started run whose record the API server refused is kept (the only copy)",
       [=] {
         Observation o = started(finished(kStartAt + seconds(40 + 600), "Succeeded", "Pass"));
         o.record_refused = "the server could not find the requested resource";
         return o;
       },
       "Succeeded",
       "ThresholdsPassed",
       {},
       std::nullopt},
      {"retention: a run Flux applied is not deleted by its TTL (Flux would apply it again)",
       [=] {
         Observation o = recorded(finished(kStartAt + seconds(40 + 600), "Succeeded", "Pass"));
         o.loadtest.metadata.labels["kustomize.toolkit.fluxcd.io/name"] = "perf";
         o.history_pruned = true;
         return o;
       },
       "Succeeded",
       "ThresholdsPassed",
       {},
       std::nullopt},
      {"history: once the record is written, the test's records past its limits are pruned",
       [=] {
         Observation o = recorded(finished(kStartAt + seconds(40 + 60), "Succeeded", "Pass",
                                           R"({"history": {"keep": 2}})"));
         o.history_looked_up = true;
         o.history = {record_of("checkout-3", kStartAt),
                      record_of("checkout-2", kStartAt - seconds(60)),
                      record_of("checkout-1", kStartAt - seconds(120)),
                      record_of("checkout-0", kStartAt - seconds(180))};
         o.pinned_records = {"checkout-0"};
         return o;
       },
       "Succeeded",
       "ThresholdsPassed",
       {"PruneResultRecords checkout-1"},
       std::nullopt},
      {"history: the record follows its run's final status as it changes (the target's use "
       "arrives after the end)",
       [=] {
         Observation o = recorded(finished(kStartAt + seconds(40 + 60), "Succeeded", "Pass", "{}"));
         o.loadtest.status.conditions.clear();  // as an older operator stored it
         o.history_pruned = true;
         return o;
       },
       "Succeeded",
       "ThresholdsPassed",
       {"UpdateResultRecord checkout-4a1c2d3e", "WriteStatus"},
       std::nullopt},
      {"a record the API server refused: the final status goes out without it, and says so",
       [=] {
         Observation o = running(mid + seconds(40));
         answer(o, 0, answer_document(0, 500, true));
         answer(o, 1, answer_document(1, 400, true));
         o.record_refused = "the server could not find the requested resource";
         return o;
       },
       "Succeeded",
       "ThresholdsPassed",
       {"KeepResults 0 1", "Event ResultNotRecorded", "WriteStatus", "Event ThresholdsPassed",
        "FinishWorker 0", "FinishWorker 1", "DeleteJob j-1"},
       std::nullopt},
      {"history: pruned once per run",
       [=] {
         Observation o = recorded(finished(kStartAt + seconds(40 + 60), "Succeeded", "Pass", "{}"));
         o.history_pruned = true;
         return o;
       },
       "Succeeded",
       "ThresholdsPassed",
       {},
       std::nullopt},
  };
}

TEST(ReconcilePlan, Table) {
  const OperatorConfig config = test_config();
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.name);
    const Observation observed = row.observed();
    const ReconcilePlan planned = plan(observed, config);
    EXPECT_EQ(names(planned), row.actions);
    if (!row.phase.empty()) {
      EXPECT_EQ(J(planned.status).value("phase", ""), row.phase) << J(planned.status).dump();
      EXPECT_EQ(J(planned.status).value("reason", ""), row.reason) << J(planned.status).dump();
    }
    EXPECT_EQ(planned.requeue_after, row.requeue);
    if (!row.message_contains.empty()) {
      EXPECT_NE(J(planned.status).value("message", "").find(row.message_contains),
                std::string::npos)
          << J(planned.status).value("message", "");
    }
    // Planning is pure: the same observation, the same plan.
    EXPECT_EQ(names(plan(observed, config)), names(planned));
  }
}

TEST(ReconcilePlan, StatusWritesCarryTheResourceVersionTheyWereComputedFrom) {
  const ReconcilePlan planned =
      plan(observe(loadtest_json(), kCreated + seconds(5)), test_config());
  for (const Action& action : planned.actions) {
    if (const auto* write = std::get_if<WriteStatus>(&action)) {
      EXPECT_EQ(write->resource_version, "1001");
      return;
    }
  }
  ADD_FAILURE() << "no status write";
}

TEST(ReconcilePlan, TheJobCarriesTheUidLabelTheBackstopDeadlineAndATtl) {
  const ReconcilePlan planned =
      plan(observe(loadtest_json(), kCreated + seconds(5)), test_config());
  const CreateJob* create = nullptr;
  for (const Action& action : planned.actions) {
    if (create == nullptr) create = std::get_if<CreateJob>(&action);
  }
  ASSERT_NE(create, nullptr);
  EXPECT_EQ(create->job["metadata"]["labels"]["kubeload.dev/loadtest-uid"], kUid);
  EXPECT_EQ(create->job["spec"]["template"]["metadata"]["labels"]["kubeload.dev/loadtest-uid"],
            kUid);
  // 5m start + 1.5s lead + (30s + 30s request timeout + 30s grace) + 300s linger.
  EXPECT_EQ(create->job["spec"]["activeDeadlineSeconds"], 692);
  EXPECT_EQ(create->job["spec"]["ttlSecondsAfterFinished"], 24 * 3600);
}

TEST(ReconcilePlan, TheRunsTokenSecretIsCreatedBeforeTheJobThatRefersToIt) {
  const OperatorConfig config = test_config();
  const ReconcilePlan planned = plan(observe(loadtest_json(), kCreated + seconds(5)), config);
  const CreateTokenSecret* secret = nullptr;
  const CreateJob* create = nullptr;
  for (const Action& action : planned.actions) {
    if (const auto* s = std::get_if<CreateTokenSecret>(&action)) secret = s;
    if (const auto* j = std::get_if<CreateJob>(&action)) {
      ASSERT_NE(secret, nullptr) << "the Job is created before its token Secret";
      create = j;
    }
  }
  ASSERT_NE(secret, nullptr);
  ASSERT_NE(create, nullptr);
  // The token is the one the executor presents to the workers: derived from
  // this LoadTest's uid under the operator's key.
  EXPECT_EQ(secret->secret["stringData"]["token"], worker_token(config.worker_token_key, kUid));
  EXPECT_EQ(secret->secret["metadata"]["ownerReferences"][0]["uid"], kUid);
  const std::string name = secret->secret["metadata"]["name"];
  bool referenced = false;
  for (const json& env : create->job["spec"]["template"]["spec"]["containers"][0]["env"]) {
    if (env.contains("valueFrom") && env["valueFrom"]["secretKeyRef"]["name"] == name) {
      referenced = true;
    }
  }
  EXPECT_TRUE(referenced) << create->job.dump();
  // Once the Job exists nothing is created again.
  Observation started = observe(loadtest_json(), kCreated + seconds(6));
  started.loadtest.status = S(planned.status);
  started.job = job_view(job_json());
  for (const Action& action : plan(started, config).actions) {
    EXPECT_FALSE(std::holds_alternative<CreateTokenSecret>(action));
    EXPECT_FALSE(std::holds_alternative<CreateJob>(action));
  }
}

TEST(ReconcilePlan, WithWorkerIngressPeersEachRunGetsItsNetworkPolicyBeforeAnythingElse) {
  OperatorConfig config = test_config();
  EXPECT_EQ(names(plan(observe(loadtest_json(), kCreated + seconds(5)), config)),
            (Strings{"WriteStatus", "Event WaitingForWorkers", "CreateTokenSecret",
                     "CreateSpecConfigMap", "CreateJob"}));
  config.worker_ingress_from = json::array(
      {{{"namespaceSelector", {{"matchLabels", {{"kubernetes.io/metadata.name", "kubeload"}}}}},
        {"podSelector", {{"matchLabels", {{"app.kubernetes.io/name", "kubeload"}}}}}}});
  const ReconcilePlan planned = plan(observe(loadtest_json(), kCreated + seconds(5)), config);
  EXPECT_EQ(names(planned),
            (Strings{"WriteStatus", "Event WaitingForWorkers", "CreateNetworkPolicy",
                     "CreateTokenSecret", "CreateSpecConfigMap", "CreateJob"}));
  const json& policy = std::get<CreateNetworkPolicy>(planned.actions[2]).policy;
  EXPECT_EQ(policy["metadata"]["ownerReferences"][0]["uid"], kUid);
  // It selects this run's pods, whatever the Job's own labels.
  EXPECT_EQ(policy["spec"]["podSelector"],
            (json{{"matchLabels", {{"kubeload.dev/loadtest-uid", kUid}}}}));
  EXPECT_EQ(policy["spec"]["ingress"][0]["from"], config.worker_ingress_from);
  EXPECT_EQ(policy["spec"]["ingress"][0]["ports"],
            json::parse(R"([{"protocol": "TCP", "port": 8080}])"));
  // Once the Job exists nothing is created again.
  Observation started = observe(loadtest_json(), kCreated + seconds(6));
  started.loadtest.status = S(planned.status);
  started.job = job_view(job_json());
  for (const Action& action : plan(started, config).actions) {
    EXPECT_FALSE(std::holds_alternative<CreateNetworkPolicy>(action));
  }
}

// Issue 26: where the target leads is read before anything is created, and
// a Service in front of a denied pod is refused however it is named.
TEST(ReconcilePlan, TheTargetServiceIsReadBeforeAnythingIsCreated) {
  const OperatorConfig config = test_config();
  Observation unread = observe(loadtest_json(), kCreated + seconds(5), config);
  ASSERT_TRUE(lookups_for(unread, config).target_service.has_value());
  EXPECT_EQ(lookups_for(unread, config).target_service->name, "checkout");
  unread.target_service_looked_up = false;
  unread.target_service.reset();
  const ReconcilePlan waiting = plan(unread, config);
  EXPECT_FALSE(creates_anything(waiting)) << testing::PrintToString(names(waiting));
  EXPECT_EQ(waiting.requeue_after, kPollForLookup);
  // Once the Job exists the Service is not read again.
  Observation started = observe(loadtest_json(), kCreated + seconds(6), config);
  started.loadtest.status = S({{"phase", "Pending"}});
  started.job = job_view(job_json());
  EXPECT_FALSE(lookups_for(started, config).target_service.has_value());
  // A url that names no cluster Service is not looked up.
  EXPECT_FALSE(
      lookups_for(observe(loadtest_json(R"({"target": {"url": "http://127.0.0.1:8080/"}})"),
                          kCreated + seconds(5), config),
                  config)
          .target_service.has_value());
}

TEST(ReconcilePlan, ADeniedPodBehindTheTargetServiceFailsThePolicyAndNothingIsCreated) {
  OperatorConfig config = test_config();
  config.target_deny_cidrs = {"10.244.0.7/32"};
  for (const std::string target :
       {R"({"url": "http://checkout.shop.svc:8080/"})", R"({"url": "http://checkout:8080/"})",
        R"({"service": {"name": "checkout", "port": 8080}})"}) {
    SCOPED_TRACE(target);
    const ReconcilePlan planned =
        plan(observe(loadtest_json(R"({"target": )" + target + "}"), kCreated + seconds(5), config),
             config);
    EXPECT_FALSE(creates_anything(planned)) << testing::PrintToString(names(planned));
    EXPECT_EQ(J(planned.status).value("phase", ""), "Failed");
    EXPECT_EQ(J(planned.status).value("reason", ""), "PolicyViolation");
    EXPECT_NE(J(planned.status).value("message", "").find("10.244.0.7"), std::string::npos)
        << J(planned.status).dump();
  }
}

// Issue 26, item 5: a Secret is read into a run's headers only with its
// owner's consent, decided before anything is created.
json secret_metadata(const std::string& consent) {
  json secret = {{"apiVersion", "meta.k8s.io/v1"},
                 {"kind", "PartialObjectMetadata"},
                 {"metadata", {{"name", "api-token"}, {"namespace", "shop"}}}};
  if (!consent.empty()) secret["metadata"]["labels"]["kubeload.dev/consent"] = consent;
  return secret;
}
const std::string kWithSecretHeader = R"({
  "target": {"url": "http://checkout.shop.svc:8080/", "allowInsecureSecretHeaders": true},
  "requests": [{"name": "authed", "headersFrom": [
    {"name": "Authorization", "secretKeyRef": {"name": "api-token", "key": "header"}}]}]})";

TEST(ReconcilePlan, TheSecretsHeadersFromNamesAreReadBeforeAnythingIsCreated) {
  const OperatorConfig config = test_config();
  Observation unread = observe(loadtest_json(kWithSecretHeader), kCreated + seconds(5), config);
  EXPECT_EQ(lookups_for(unread, config).secrets, std::set<std::string>{"api-token"});
  unread.secrets_looked_up = false;
  unread.secrets.clear();
  const ReconcilePlan waiting = plan(unread, config);
  EXPECT_FALSE(creates_anything(waiting)) << testing::PrintToString(names(waiting));
  EXPECT_EQ(waiting.requeue_after, kPollForLookup);
  EXPECT_EQ(J(waiting.status).value("phase", ""), "Pending");
  // Once the Job exists they are not read again.
  Observation started = observe(loadtest_json(kWithSecretHeader), kCreated + seconds(6), config);
  started.loadtest.status = S({{"phase", "Pending"}});
  started.job = job_view(job_json());
  EXPECT_TRUE(lookups_for(started, config).secrets.empty());
  // Nor for a LoadTest that names none.
  EXPECT_TRUE(
      lookups_for(observe(loadtest_json(), kCreated + seconds(5), config), config).secrets.empty());
}

TEST(ReconcilePlan, ASecretWithoutItsOwnersConsentFailsTheRunAndNothingIsCreated) {
  const OperatorConfig config = test_config();
  for (const std::string consent : {"", "ca"}) {
    SCOPED_TRACE("kubeload.dev/consent=" + consent);
    const ReconcilePlan planned =
        plan(observe(loadtest_json(kWithSecretHeader), kCreated + seconds(5), config,
                     checkout_slices_json(), {{"api-token", secret_metadata(consent)}}),
             config);
    EXPECT_FALSE(creates_anything(planned)) << testing::PrintToString(names(planned));
    EXPECT_EQ(J(planned.status).value("phase", ""), "Failed");
    EXPECT_EQ(J(planned.status).value("reason", ""), "SecretNotConsented");
    const std::string message = J(planned.status).value("message", "");
    EXPECT_NE(
        message.find("Secret \"api-token\" (spec.requests[0].headersFrom[0].secretKeyRef.name)"),
        std::string::npos)
        << message;
    EXPECT_NE(message.find("kubeload.dev/consent="), std::string::npos) << message;
    EXPECT_EQ(planned.requeue_after, std::nullopt);
  }
}

TEST(ReconcilePlan, WithItsOwnersConsentTheSecretGoesIntoTheJob) {
  const OperatorConfig config = test_config();
  const ReconcilePlan planned =
      plan(observe(loadtest_json(kWithSecretHeader), kCreated + seconds(5), config,
                   checkout_slices_json(), {{"api-token", secret_metadata("headers")}}),
           config);
  EXPECT_EQ(names(planned), (Strings{"WriteStatus", "Event WaitingForWorkers", "CreateTokenSecret",
                                     "CreateSpecConfigMap", "CreateJob"}));
  const json& job = std::get<CreateJob>(planned.actions.back()).job;
  bool referenced = false;
  for (const json& env : job["spec"]["template"]["spec"]["containers"][0]["env"]) {
    if (env.contains("valueFrom") && env["valueFrom"].contains("secretKeyRef") &&
        env["valueFrom"]["secretKeyRef"]["name"] == "api-token") {
      referenced = true;
    }
  }
  EXPECT_TRUE(referenced) << job.dump();
}

// A LoadTest whose named object does not exist yet, observed at `since`
// after its creation: Pending and saying what it waits for, looking again
// every 2 s and just after timeouts.start (5m by default), then Failed with
// `reason`; nothing created either way.
void expect_waited_for_until_the_start_timeout(const json& loadtest, const std::string& waiting,
                                               const std::string& reason) {
  const OperatorConfig config = test_config();
  const ReconcilePlan early = plan(observe(loadtest, kCreated + seconds(5), config), config);
  EXPECT_FALSE(creates_anything(early)) << testing::PrintToString(names(early));
  EXPECT_EQ(J(early.status).value("phase", ""), "Pending");
  EXPECT_NE(J(early.status)
                .value("message", "")
                .find(waiting + " yet: waiting for it until "
                                "timeouts.start (5m)"),
            std::string::npos)
      << J(early.status).dump();
  EXPECT_EQ(early.requeue_after, milliseconds(2000));
  // Close to the deadline, it looks again just after it.
  EXPECT_EQ(plan(observe(loadtest, kCreated + seconds(300) - milliseconds(500), config), config)
                .requeue_after,
            milliseconds(501));
  const ReconcilePlan late =
      plan(observe(loadtest, kCreated + seconds(300) + milliseconds(1), config), config);
  EXPECT_FALSE(creates_anything(late)) << testing::PrintToString(names(late));
  EXPECT_EQ(J(late.status).value("phase", ""), "Failed");
  EXPECT_EQ(J(late.status).value("reason", ""), reason);
  EXPECT_NE(J(late.status).value("message", "").find(waiting + " after timeouts.start (5m)"),
            std::string::npos)
      << J(late.status).dump();
}

TEST(ReconcilePlan, ASecretNotFoundIsWaitedForUntilTheStartTimeout) {
  expect_waited_for_until_the_start_timeout(
      loadtest_json(kWithSecretHeader),
      "Secret \"api-token\" (spec.requests[0].headersFrom[0].secretKeyRef.name) does not exist "
      "in namespace shop",
      "SecretNotConsented");
}

// The ConfigMap keys the worker pods mount: a scenario's data and a CA
// bundle. A pod whose key is missing would wait in ContainerCreating, saying
// why only in an Event; the run waits for it, naming it, until
// timeouts.start, then fails WorkersNotReady naming it.
const std::string kWithConfigMapData = R"({
  "data": [{"name": "user", "configMapKeyRef": {"name": "users", "key": "rows"}}],
  "scenarios": [{"name": "buy", "steps": [{"name": "login", "path": "/login/${user.name}"}]}]})";

json config_map(const json& data) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", "users"}, {"namespace", "shop"}}},
          {"data", data}};
}

TEST(ReconcilePlan, TheConfigMapsTheWorkersMountAreReadBeforeAnythingIsCreated) {
  const OperatorConfig config = test_config();
  Observation unread = observe(loadtest_json(kWithConfigMapData), kCreated + seconds(5), config);
  EXPECT_EQ(lookups_for(unread, config).config_maps, std::set<std::string>{"users"});
  unread.config_maps_looked_up = false;
  unread.config_maps.clear();
  const ReconcilePlan waiting = plan(unread, config);
  EXPECT_FALSE(creates_anything(waiting)) << testing::PrintToString(names(waiting));
  EXPECT_EQ(waiting.requeue_after, kPollForLookup);
  // Once the Job exists they are not read again, nor for a run that names none.
  Observation started = observe(loadtest_json(kWithConfigMapData), kCreated + seconds(6), config);
  started.loadtest.status = S({{"phase", "Pending"}});
  started.job = job_view(job_json());
  EXPECT_TRUE(lookups_for(started, config).config_maps.empty());
  EXPECT_TRUE(lookups_for(observe(loadtest_json(), kCreated + seconds(5), config), config)
                  .config_maps.empty());
}

TEST(ReconcilePlan, AConfigMapNotFoundIsWaitedForUntilTheStartTimeout) {
  expect_waited_for_until_the_start_timeout(
      loadtest_json(kWithConfigMapData),
      "ConfigMap \"users\" (spec.data[0].configMapKeyRef.name) does not exist in namespace shop",
      "WorkersNotReady");
  expect_waited_for_until_the_start_timeout(
      loadtest_json(R"({"target": {"url": "https://checkout.shop.svc:8443/",
                                   "tls": {"caFrom": {"configMapKeyRef":
                                           {"name": "users", "key": "ca.crt"}}}}})"),
      "ConfigMap \"users\" (spec.target.tls.caFrom.configMapKeyRef.name) does not exist in "
      "namespace shop",
      "WorkersNotReady");
}

TEST(ReconcilePlan, AConfigMapWithoutTheKeyIsWaitedForAndWithItTheJobIsCreated) {
  const OperatorConfig config = test_config();
  const ReconcilePlan no_key =
      plan(observe(loadtest_json(kWithConfigMapData), kCreated + seconds(5), config,
                   checkout_slices_json(), {}, {{"users", config_map({{"users.csv", "name\n"}})}}),
           config);
  EXPECT_FALSE(creates_anything(no_key)) << testing::PrintToString(names(no_key));
  EXPECT_EQ(J(no_key.status).value("phase", ""), "Pending");
  EXPECT_NE(J(no_key.status)
                .value("message", "")
                .find("ConfigMap \"users\" has no key \"rows\" (spec.data[0].configMapKeyRef.key) "
                      "yet: waiting for it until timeouts.start (5m)"),
            std::string::npos)
      << J(no_key.status).dump();
  const ReconcilePlan with_key =
      plan(observe(loadtest_json(kWithConfigMapData), kCreated + seconds(5), config,
                   checkout_slices_json(), {}, {{"users", config_map({{"rows", "name\nann\n"}})}}),
           config);
  EXPECT_EQ(names(with_key).back(), "CreateJob");
}

// A GitOps tool applies the Service and the LoadTest together, in any
// order: a Service the spec names that does not exist yet is waited for
// until timeouts.start, then fails the run TargetNotFound. A short url host
// that is no Service is the worker's to resolve.
TEST(ReconcilePlan, ATargetServiceNotFoundIsWaitedForUntilTheStartTimeout) {
  for (const std::string target : {R"({"service": {"name": "later", "port": 8080}})",
                                   R"({"url": "http://later.shop.svc.cluster.local:8080/"})"}) {
    SCOPED_TRACE(target);
    expect_waited_for_until_the_start_timeout(loadtest_json(R"({"target": )" + target + "}"),
                                              "the target Service shop/later does not exist",
                                              "TargetNotFound");
  }
  const OperatorConfig config = test_config();
  const ReconcilePlan short_name =
      plan(observe(loadtest_json(R"({"target": {"url": "http://later:8080/"}})"),
                   kCreated + seconds(5), config),
           config);
  EXPECT_EQ(names(short_name).back(), "CreateJob");
}

TEST(ReconcilePlan, TheWorkerIsToldTheServicesAddressesAndTheNetworkPolicyAllowsItsPods) {
  OperatorConfig config = test_config();
  config.cluster_cidrs = {"10.244.0.0/16", "10.245.0.0/16"};
  config.worker_egress_dns_to = json::parse(
      R"([{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}}}])");
  const ReconcilePlan planned =
      plan(observe(loadtest_json(), kCreated + seconds(5), config), config);
  EXPECT_EQ(names(planned),
            (Strings{"WriteStatus", "Event WaitingForWorkers", "CreateNetworkPolicy",
                     "CreateTokenSecret", "CreateSpecConfigMap", "CreateJob"}));
  const json& policy = std::get<CreateNetworkPolicy>(planned.actions[2]).policy;
  EXPECT_EQ(policy["spec"]["policyTypes"], json::array({"Egress"}));
  EXPECT_EQ(policy["spec"]["egress"][1]["to"][0]["podSelector"],
            (json{{"matchLabels", {{"app", "checkout"}}}}));
  const json& args = std::get<CreateJob>(planned.actions[5])
                         .job["spec"]["template"]["spec"]["containers"][0]["args"];
  std::vector<std::string> told;
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == "--decided-destination" || args[i] == "--cluster-cidr") {
      told.push_back(args[i].get<std::string>() + " " + args[i + 1].get<std::string>());
    }
  }
  EXPECT_EQ(told,
            (Strings{"--cluster-cidr 10.244.0.0/16", "--cluster-cidr 10.245.0.0/16",
                     "--decided-destination 10.245.0.20=10.244.0.6,10.244.0.7",
                     "--decided-destination 10.244.0.6=", "--decided-destination 10.244.0.7="}));
}

TEST(ReconcilePlan, ATimeBoundedRunIsPolledCloselyFromJustBeforeItsPlannedEnd) {
  using namespace std::chrono_literals;
  // 30 s from the barrier: the next pass comes 100 ms before the planned end
  // (its /result calls wait for the workers' ends: result_wait_until), then
  // one every 100 ms for two seconds while the workers finish, then every second.
  struct Row {
    milliseconds since_barrier;
    std::string extra_spec;
    milliseconds requeue;
  };
  for (const Row& row : {Row{10s, "", 1s}, Row{29'500ms, "", 400ms}, Row{29'899ms, "", 1ms},
                         Row{29'900ms, "", 100ms}, Row{29'999ms, "", 100ms}, Row{30s, "", 100ms},
                         Row{31'900ms, "", 100ms}, Row{32s, "", 1s}, Row{40s, "", 1s},
                         // warm-up first: the end moves by it
                         Row{30s, R"({"load": {"connections": 20, "warmup": "5s",
                                                "duration": "30s"}})",
                             1s},
                         Row{34'500ms, R"({"load": {"connections": 20, "warmup": "5s",
                                                    "duration": "30s"}})",
                             400ms},
                         Row{35'050ms, R"({"load": {"connections": 20, "warmup": "5s",
                                                    "duration": "30s"}})",
                             100ms},
                         // stages: their sum
                         Row{25'000ms, R"({"load": {"stages": [
                                  {"duration": "10s", "connections": 5},
                                  {"duration": "15s", "connections": 10}]}})",
                             100ms},
                         // bounded by requests: no planned end, one poll a second
                         Row{30s, R"({"load": {"connections": 20, "requests": 1000}})", 1s}}) {
    SCOPED_TRACE(std::to_string(row.since_barrier.count()) + " ms " + row.extra_spec);
    const ReconcilePlan p =
        plan(running(kStartAt + row.since_barrier, row.extra_spec), test_config());
    ASSERT_TRUE(p.requeue_after.has_value());
    EXPECT_EQ(*p.requeue_after, row.requeue);
  }
}

TEST(ReconcilePlan, ResultCallsWaitForTheWorkersEndsFromJustBeforeAPlannedEnd) {
  using namespace std::chrono_literals;
  // 30 s from the barrier: from 100 ms before its end, a pass's /result calls
  // may wait a second for each worker's final result; before that, and for a
  // run with no planned end, they take what the workers have.
  struct Row {
    milliseconds since_barrier;
    std::string extra_spec;
    std::optional<milliseconds> wait;
  };
  for (const Row& row :
       {Row{10s, "", std::nullopt}, Row{29'899ms, "", std::nullopt}, Row{29'900ms, "", 1s},
        Row{30s, "", 1s}, Row{45s, "", 1s},
        Row{30s, R"({"load": {"connections": 20, "warmup": "5s", "duration": "30s"}})",
            std::nullopt},
        Row{35s, R"({"load": {"connections": 20, "warmup": "5s", "duration": "30s"}})", 1s},
        Row{30s, R"({"load": {"connections": 20, "requests": 1000}})", std::nullopt}}) {
    SCOPED_TRACE(std::to_string(row.since_barrier.count()) + " ms " + row.extra_spec);
    const Observation o = running(kStartAt + row.since_barrier, row.extra_spec);
    const std::optional<Timestamp> until = result_wait_until(o);
    ASSERT_EQ(until.has_value(), row.wait.has_value());
    if (until) {
      EXPECT_EQ(*until - o.now, *row.wait);
    }
  }
  // Nothing to wait for: a run whose barrier is not set yet, or that is final.
  Observation unstarted = running(kStartAt + 30s);
  unstarted.job = job_view(job_json(kUid, std::nullopt));
  EXPECT_EQ(result_wait_until(unstarted), std::nullopt);
  Observation over = running(kStartAt + 30s);
  over.loadtest.status = S({{"phase", "Succeeded"}, {"startTime", format_time(kStartAt)}});
  EXPECT_EQ(result_wait_until(over), std::nullopt);
}

TEST(ReconcilePlan, ARunBoundedByRequestsIsPolledByTheWorkersPace) {
  using namespace std::chrono_literals;
  // 1,000 requests; each of the two workers reports its partial count.
  const auto with_done = [](milliseconds since_barrier, uint64_t worker0, uint64_t worker1) {
    Observation o =
        running(kStartAt + since_barrier, R"({"load": {"connections": 20, "requests": 1000}})");
    answer(o, 0, answer_document(0, worker0, false));
    answer(o, 1, answer_document(1, worker1, false));
    const ReconcilePlan p = plan(o, test_config());
    return p.requeue_after.value_or(0ms);
  };
  EXPECT_EQ(with_done(2s, 100, 100), 1s);     // 800 left at 100/s: 8 s
  EXPECT_EQ(with_done(4s, 450, 450), 544ms);  // 100 left at 225/s: 444 ms, then 100
  EXPECT_EQ(with_done(4s, 499, 499), 250ms);  // 2 left: as close as a paced poll goes
  EXPECT_EQ(with_done(4s, 500, 500), 250ms);  // all sent, the final results not yet in
  // Before any pace, the first poll comes 250 ms after the barrier.
  EXPECT_EQ(with_done(-1500ms, 0, 0), 1s);  // the pass that starts the workers
  EXPECT_EQ(with_done(-100ms, 0, 0), 350ms);
  EXPECT_EQ(with_done(200ms, 0, 0), 100ms);
  // Nothing done yet at the first poll (workers slow to get going, a run
  // that may be over within the next): every 250 ms for 2 s, then each second.
  EXPECT_EQ(with_done(250ms, 0, 0), 250ms);
  EXPECT_EQ(with_done(2200ms, 0, 0), 250ms);
  EXPECT_EQ(with_done(2250ms, 0, 0), 1s);
  EXPECT_EQ(with_done(4s, 0, 0), 1s);
  // Each worker's own pace: one that got going late ends the run.
  EXPECT_EQ(with_done(600ms, 450, 0), 250ms);  // worker 1 has none done yet
  EXPECT_EQ(with_done(4s, 490, 100), 1s);      // worker 1: 400 left at 25/s
  EXPECT_EQ(with_done(4s, 100, 490), 1s);
  EXPECT_EQ(with_done(4s, 490, 460), 447ms);  // worker 1: 40 left at 115/s: 347 ms
}

TEST(ReconcilePlan, OnlyTheLoadTestsOwnPodsAreSeen) {
  Observation o = running(kStartAt + seconds(5));
  o.pods.push_back(pod_view(pod_json(0, "Running", true, kOldUid)));
  const std::vector<PodView> own = own_pods(o);
  ASSERT_EQ(own.size(), 2u);
  for (const PodView& pod : own) EXPECT_EQ(pod.loadtest_uid, kUid);
  // Asked: this run's running workers, not the old incarnation's pod.
  EXPECT_EQ(workers_to_ask(o).size(), 2u);
}

// A pod made by a namespace user with the run's labels and uid label (and
// even the index of a real worker) is not a worker: it is never asked for
// /result (which would hand it the run's token), never counted, and its
// silence does not fail the run.
TEST(ReconcilePlan, APodWithTheRunsLabelsButNotMadeByItsJobIsNoWorker) {
  Observation o = running(kStartAt + seconds(5));
  for (const char* controller : {"", "someone-elses-job"}) {
    json forged = pod_json(0, "Running", true);
    forged["metadata"]["name"] = "forged";
    forged["status"]["podIP"] = "10.244.9.9";
    if (*controller == '\0') {
      forged["metadata"].erase("ownerReferences");
    } else {
      forged["metadata"]["ownerReferences"][0]["uid"] = controller;
    }
    o.pods.push_back(pod_view(forged));
  }
  const std::vector<PodView> own = own_pods(o);
  ASSERT_EQ(own.size(), 2u);
  for (const PodView& pod : own) EXPECT_NE(pod.name, "forged");
  for (const auto& [index, ip] : workers_to_ask(o)) EXPECT_NE(ip, "10.244.9.9") << index;
  const ReconcilePlan planned = plan(o, test_config());
  for (const Action& action : planned.actions) {
    if (const auto* start = std::get_if<StartWorker>(&action)) {
      EXPECT_NE(start->ip, "10.244.9.9");
    }
    if (const auto* finish = std::get_if<FinishWorker>(&action)) {
      EXPECT_NE(finish->ip, "10.244.9.9");
    }
  }
  EXPECT_EQ(J(planned.status)["workers"]["ready"], 2);
}

// The workers start at a wall-clock barrier: a worker whose clock is far
// off the operator's (as its answer's clockMs against when the answer
// arrived shows) fails the run at once, saying so, instead of starting out
// of step or refusing the barrier until the run deadline.
TEST(ReconcilePlan, AWorkerWhoseClockIsFarOffFailsTheRunSayingSo) {
  const struct {
    const char* name;
    std::chrono::milliseconds offset;
    bool fails;
  } rows[] = {
      {"an hour behind", -std::chrono::hours(1), true},
      {"a minute ahead", std::chrono::minutes(1), true},
      {"two seconds behind", -std::chrono::seconds(2), false},
      {"in step", std::chrono::milliseconds(0), false},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    Observation o = running(kStartAt - seconds(1));
    o.answers = begin_pass(o);
    json document = answer_document(1, 0, false);
    document["startedAtMs"] = 0;  // not started yet
    document["clockMs"] = unix_ms(o.now + row.offset);
    DigestedAnswer digested = digest_answer(o.answers.uid, document, "");
    digested.answer.answered_at = o.now;
    take_answer(o.answers, 1, std::move(digested));
    const ReconcilePlan p = plan(o, test_config());
    if (!row.fails) {
      EXPECT_NE(p.status.reason, "WorkerClockSkew") << p.status.message;
      continue;
    }
    EXPECT_EQ(p.status.phase, api::Phase::Failed);
    EXPECT_EQ(p.status.reason, "WorkerClockSkew");
    EXPECT_NE(p.status.message.find("worker 1's clock is"), std::string::npos) << p.status.message;
    EXPECT_NE(p.status.message.find(row.offset.count() < 0 ? "behind" : "ahead of"),
              std::string::npos)
        << p.status.message;
    EXPECT_NE(p.status.message.find("NTP"), std::string::npos) << p.status.message;
  }
}

TEST(ReconcilePlan, RunTimeBounds) {
  const auto bound = [](const std::string& load) {
    json lt = loadtest_json();
    lt["spec"]["load"] = json::parse(load);
    const ParsedLoadTest parsed = parse_loadtest(lt.dump());
    EXPECT_TRUE(parsed.ok()) << load;
    return std::chrono::duration_cast<seconds>(run_time_bound(parsed.spec));
  };
  EXPECT_EQ(bound(R"({"connections": 20, "duration": "1m", "warmup": "10s"})"), seconds(130));
  EXPECT_EQ(bound(R"({"connections": 20, "duration": "1m", "timeout": "5s"})"), seconds(95));
  EXPECT_EQ(bound(R"({"stages": [{"duration": "1m", "rate": 5},
                                              {"duration": "2m", "rate": 10}]})"),
            seconds(240));
  EXPECT_EQ(bound(R"({"connections": 20, "requests": 1000})"), seconds(3600));
  EXPECT_EQ(bound(R"({"connections": 20, "duration": "1m", "warmupRequests": 100})"),
            seconds(3600));
}

}  // namespace

// ---- the running merge: kept in one ConfigMap, bounded, resumed after a restart ----

// The results ConfigMap as the API server keeps it: a create fails when it
// exists, a write with a resourceVersion fails when it changed since (409).
struct ResultsConfigMap {
  std::optional<json> object;
  int version = 3000;

  bool apply(const KeepResults& keep) {
    if (keep.resource_version.empty()) {
      if (object) return false;
      object = keep.config_map_object;
    } else if (!object || (*object)["metadata"]["resourceVersion"] != keep.resource_version) {
      return false;
    }
    (*object)["data"] = keep.data;
    (*object)["metadata"]["resourceVersion"] = std::to_string(++version);
    return true;
  }
  // Applies the plan's KeepResults; false when the API server refused it.
  bool apply(const ReconcilePlan& p) {
    for (const Action& action : p.actions) {
      if (const auto* keep = std::get_if<KeepResults>(&action)) return apply(*keep);
    }
    return true;
  }
};

// Five workers running; `answers` are the final results served in this pass.
Observation five_workers(const ResultsConfigMap& kept,
                         const std::map<uint32_t, uint64_t>& answers) {
  Observation o = running(kStartAt + seconds(40), R"({"workers": 5})");
  o.pods.clear();
  for (uint32_t i = 0; i < 5; ++i) o.pods.push_back(pod_view(pod_json(i, "Running", true)));
  if (kept.object) o.kept_results = config_map_view(*kept.object);
  for (const auto& [index, requests] : answers) {
    answer(o, index, answer_document(index, requests, true));
  }
  return o;
}

const std::map<uint32_t, uint64_t> kFiveWorkers = {{0, 500}, {1, 70}, {2, 1234}, {3, 9}, {4, 333}};

void expect_the_merge_of_all_five(const ReconcilePlan& p) {
  RunResult all_at_once = run_of(500, true);
  for (uint64_t requests : {70, 1234, 9, 333}) all_at_once.merge(run_of(requests, true));
  json expected;
  to_json(expected, all_at_once.result, true);
  const json result = J(p.status)["result"];
  ASSERT_TRUE(result.is_object()) << J(p.status).dump();
  for (const auto& [key, value] : expected.items()) EXPECT_EQ(result[key], value) << key;
  EXPECT_EQ(result["requests"], 500 + 70 + 1234 + 9 + 333);
}

TEST(ReconcilePlan, AResumedRunningMergeGivesTheNumbersOfMergingEveryResultAtOnce) {
  // Workers finish over three passes; each pass is planned from what the
  // cluster holds (as a restarted operator does, nothing carried in memory).
  ResultsConfigMap kept;
  const ReconcilePlan first = plan(five_workers(kept, {{0, 500}, {1, 70}}), OperatorConfig{});
  EXPECT_EQ(names(first),
            (Strings{"KeepResults 0 1", "WriteStatus", "FinishWorker 0", "FinishWorker 1"}));
  ASSERT_TRUE(kept.apply(first));
  const ReconcilePlan second = plan(five_workers(kept, {{2, 1234}}), OperatorConfig{});
  ASSERT_TRUE(kept.apply(second));
  // Workers 0 and 1 have exited; their results live in the kept merge only.
  const ReconcilePlan last = plan(five_workers(kept, {{3, 9}, {4, 333}}), OperatorConfig{});
  // The status first: the workers hear that they may exit after it.
  EXPECT_EQ(names(last),
            (Strings{"KeepResults 3 4", "CreateResultRecord checkout-4a1c2d3e", "WriteStatus",
                     "Event ThresholdsPassed", "FinishWorker 3", "FinishWorker 4", "FinishWorker 0",
                     "FinishWorker 1", "FinishWorker 2", "DeleteJob j-1"}));
  expect_the_merge_of_all_five(last);

  // The same status as one pass that hears all five at once.
  const ReconcilePlan at_once =
      plan(five_workers(ResultsConfigMap{}, kFiveWorkers), OperatorConfig{});
  EXPECT_EQ(at_once.status, last.status);
}

TEST(ReconcilePlan, AKeptWorkerIsFoldedOnceAndNotAskedAgain) {
  ResultsConfigMap kept;
  ASSERT_TRUE(
      kept.apply(plan(five_workers(kept, {{0, 500}, {1, 70}, {2, 1234}}), OperatorConfig{})));
  // Worker 0 answers again (it has not exited yet): its kept result counts once.
  const Observation o = five_workers(kept, kFiveWorkers);
  EXPECT_EQ(workers_to_ask(o).count(0), 0u);
  EXPECT_EQ(workers_to_ask(o).count(3), 1u);
  const ReconcilePlan p = plan(o, OperatorConfig{});
  EXPECT_EQ(names(p)[0], "KeepResults 3 4");
  expect_the_merge_of_all_five(p);
}

TEST(ReconcilePlan, TwoPassesFromTheSameReadCannotLoseOrDoubleAWorker) {
  ResultsConfigMap kept;
  ASSERT_TRUE(
      kept.apply(plan(five_workers(kept, {{0, 500}, {1, 70}, {2, 1234}}), OperatorConfig{})));
  // Two passes read the same ConfigMap; one heard worker 3, the other worker 4.
  const ReconcilePlan hears_3 = plan(five_workers(kept, {{3, 9}}), OperatorConfig{});
  const ReconcilePlan hears_4 = plan(five_workers(kept, {{4, 333}}), OperatorConfig{});
  ASSERT_TRUE(kept.apply(hears_3));
  // The second write would drop worker 3: the precondition refuses it, and the
  // executor stops before telling worker 4 it may exit.
  EXPECT_FALSE(kept.apply(hears_4));
  // Worker 4's pass observes again and folds onto what is kept now.
  const ReconcilePlan again = plan(five_workers(kept, {{4, 333}}), OperatorConfig{});
  EXPECT_EQ(names(again)[0], "KeepResults 4");
  ASSERT_TRUE(kept.apply(again));
  expect_the_merge_of_all_five(again);
  // A worker answering again after its result is kept is not added twice.
  ASSERT_TRUE(kept.apply(plan(five_workers(kept, {{3, 9}}), OperatorConfig{})));
  expect_the_merge_of_all_five(plan(five_workers(kept, {}), OperatorConfig{}));
}

TEST(ReconcilePlan, AKeptWorkersErrorAndStartAreWhatTheStatusNeeds) {
  ResultsConfigMap kept;
  Observation o = five_workers(kept, {});
  answer(o, 2, answer_document(2, 120, true, kUid, "interrupted (SIGTERM) after 120 requests"));
  ASSERT_TRUE(kept.apply(plan(o, OperatorConfig{})));
  // A restarted operator, worker 2 gone: its error still fails the run.
  const ReconcilePlan p = plan(five_workers(kept, {}), OperatorConfig{});
  EXPECT_EQ(J(p.status).value("reason", ""), "WorkerFailed") << J(p.status).dump();
  EXPECT_NE(J(p.status).value("message", "").find("interrupted (SIGTERM)"), std::string::npos)
      << J(p.status).value("message", "");
}

// A worker's final /result of 10 stages x 5 named requests, latencies spread
// as a real run's are.
// Latencies from 100 us up to about `spread` us: uniform, or with
// `log_spread` even in log scale, so that every octave's buckets fill (the
// most distinct buckets, the largest encoding, for a number of requests).
json staged_document(uint32_t index, uint32_t stages, uint32_t named, uint64_t requests,
                     uint64_t spread, bool log_spread = false) {
  RunResult run;
  const auto value = [&](uint64_t hash) {
    if (!log_spread) return int64_t(hash % spread);
    const double at = double(hash % 1'000'003) / 1'000'003.0;
    return int64_t(std::pow(double(spread) / 100.0, at) * 100.0);
  };
  auto fill = [&](Result& r, uint64_t salt) {
    r.requests = requests;
    r.status_codes[200] = requests;
    r.duration_seconds = 30;
    for (uint64_t i = 0; i < requests; ++i) {
      r.latency.record(100 + value(i * 2654435761u + salt * 104729));
      r.waiting.record(50 + value(i * 2246822519u + salt));
      r.connect.record(10 + value(i * 3266489917u + salt));
    }
  };
  fill(run.result, 0);
  for (uint32_t s = 0; s < stages; ++s) {
    StageResult stage;
    stage.index = int(s);
    stage.duration_seconds_planned = 3;
    stage.connections = 10;
    fill(stage.result, s + 1);
    run.stages.push_back(stage);
  }
  for (uint32_t n = 0; n < named; ++n) {
    NamedResult request;
    request.name = "request-" + std::to_string(n);
    fill(request.result, 1000 + n);
    run.request_results.push_back(request);
  }
  json document = to_json(run);
  document["worker"] = index;
  document["startedAtMs"] = unix_ms(kStartAt);
  document["loadTestUid"] = kUid;
  return document;
}

TEST(ReconcilePlan, TheKeptResultsStayUnderTheConfigMapLimitWhateverTheWorkerCount) {
  // Keeping one document per worker would need workers x document bytes and
  // be refused beyond ~20 workers; the kept merge grows by a few bytes per
  // worker only.
  const json document = staged_document(0, 10, 5, 2000, 200000);
  const std::size_t document_bytes = document.dump().size();
  struct Point {
    uint32_t workers;
    bool documents_fit;  // one document per worker
  };
  std::size_t one_worker_bytes = 0;
  for (const Point& point :
       {Point{1, true}, Point{30, false}, Point{300, false}, Point{1000, false}}) {
    SCOPED_TRACE(point.workers);
    EXPECT_EQ(point.workers * document_bytes <= kConfigMapDataLimit, point.documents_fit)
        << document_bytes << " bytes per document";
    WorkerResults kept(point.workers);
    const CollectedResult collected = collected_result_from_json(document);
    for (uint32_t i = 0; i < point.workers; ++i) ASSERT_TRUE(kept.fold(i, collected));
    const std::size_t kept_bytes = config_map_data_size(kept_results_data(kept, kUid));
    EXPECT_LE(kept_bytes, kConfigMapDataLimit);
    if (point.workers == 1) one_worker_bytes = kept_bytes;
    // Per worker: its index and facts (~40 bytes); the merge: larger counts.
    EXPECT_LE(kept_bytes, one_worker_bytes + point.workers * 64 + 64 * 1024) << kept_bytes;
  }
}

TEST(ReconcilePlan, AMergeTooLargeForAConfigMapFailsTheRunNamingItsSize) {
  // The CRD's maximum: 100 stages x 100 named requests, latencies all over.
  // Worker 0 is done, worker 1 still running: worker 0 may not exit before
  // its result is kept, and it cannot be.
  Observation o = running(kStartAt + seconds(20));
  const json largest = staged_document(0, 100, 100, 5000, 3'600'000'000, true);
  answer(o, 0, largest);
  answer(o, 1, answer_document(1, 200, false));
  WorkerResults alone(2);
  ASSERT_TRUE(alone.fold(0, collected_result_from_json(largest)));
  const std::size_t bytes = config_map_data_size(kept_results_data(alone, kUid));
  ASSERT_GT(bytes, kConfigMapDataLimit);

  const ReconcilePlan p = plan(o, OperatorConfig{});
  EXPECT_EQ(J(p.status).value("phase", ""), "Failed");
  EXPECT_EQ(J(p.status).value("reason", ""), "ResultsTooLarge");
  EXPECT_NE(J(p.status).value("message", "").find(std::to_string(bytes) + " bytes"),
            std::string::npos)
      << J(p.status).value("message", "");
  // Nothing is kept that the API server would refuse; the run ends, not hangs.
  // The run's record is written, within its bound (compressed, the merge
  // too large for the ConfigMap may fit it).
  EXPECT_EQ(names(p),
            (Strings{"CreateResultRecord checkout-4a1c2d3e", "WriteStatus", "Event ResultsTooLarge",
                     "FinishWorker 0", "FinishWorker 1", "EndJob"}));
  const auto& record = std::get<CreateResultRecord>(p.actions.front()).record;
  EXPECT_LE(json(record).dump().size(), api::kResultRecordSizeLimit);
  EXPECT_EQ(p.requeue_after, kPollForLookup);  // back to prune the test's history

  // Every worker's result in one pass: the final status holds the exact
  // numbers before any worker exits, so nothing needs keeping.
  Observation all = o;
  answer(all, 1, answer_document(1, 200, true));
  const ReconcilePlan done = plan(all, OperatorConfig{});
  EXPECT_EQ(J(done.status).value("phase", ""), "Succeeded");
  EXPECT_EQ(names(done), (Strings{"CreateResultRecord checkout-4a1c2d3e", "WriteStatus",
                                  "Event ThresholdsPassed", "FinishWorker 0", "FinishWorker 1",
                                  "DeleteJob j-1"}));
}

TEST(ReconcilePlan, AResultThatDoesNotMergeIsNeitherKeptNorCounted) {
  Observation o = running(kStartAt + seconds(40));
  answer(o, 0, answer_document(0, 500, true));
  json odd = answer_document(1, 400, true);
  // A histogram of another layout (an incompatible worker build).
  ASSERT_TRUE(odd["result"].contains("histogram")) << odd.dump();
  Histogram other_layout(1, 1000, 2);
  other_layout.record(500);
  odd["result"]["histogram"] = other_layout.encode_base64();
  answer(o, 1, odd);
  const ReconcilePlan p = plan(o, OperatorConfig{});
  EXPECT_EQ(names(p)[0], "KeepResults 0");
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("worker 1"), std::string::npos) << p.warnings[0];
  EXPECT_EQ(J(p.status)["result"]["requests"], 500);
}

// ---- a pass's answers, digested as they arrive ---------------------------------

TEST(PassAnswers, AFinalResultIsFoldedOnArrivalAndOnlyWhatThePlanNeedsIsKeptPerWorker) {
  ResultsConfigMap kept;
  Observation o = five_workers(kept, {});
  o.answers = begin_pass(o);
  // Arrival order is whatever the calls in flight make it.
  for (const uint32_t index : {4u, 0u, 2u, 3u, 1u}) {
    take_answer(o.answers, index,
                digest_answer(kUid, answer_document(index, kFiveWorkers.at(index), true), ""));
  }
  ASSERT_EQ(o.answers.finals.reports().size(), 5u);
  for (const auto& [index, answer] : o.answers.by_worker) {
    EXPECT_TRUE(answer.reached && answer.folded) << index;
    EXPECT_FALSE(answer.partial) << index;  // the final result lives in the merge only
  }
  RunResult all_at_once = run_of(500, true);
  for (uint64_t requests : {70, 1234, 9, 333}) all_at_once.merge(run_of(requests, true));
  ASSERT_TRUE(o.answers.finals.merged());
  EXPECT_EQ(to_json(*o.answers.finals.merged()), to_json(all_at_once));
  expect_the_merge_of_all_five(plan(o, OperatorConfig{}));
}

TEST(PassAnswers, AnswersThatAreNotThisPassesToFoldAreNotFolded) {
  ResultsConfigMap kept;
  ASSERT_TRUE(kept.apply(plan(five_workers(kept, {{0, 500}}), OperatorConfig{})));
  Observation o = five_workers(kept, {});
  PassAnswers pass = begin_pass(o);
  EXPECT_EQ(pass.not_taken, (std::set<uint32_t>{0}));
  // Already kept: its result counts once.
  take_answer(pass, 0, digest_answer(kUid, answer_document(0, 500, true), ""));
  // Outside the Job's five workers.
  take_answer(pass, 5, digest_answer(kUid, answer_document(5, 10, true), ""));
  // Another run's worker at a reused address.
  take_answer(pass, 1, digest_answer(kUid, answer_document(1, 70, true, "another-uid"), ""));
  // Not reached.
  take_answer(pass, 2, digest_answer(kUid, std::nullopt, "10.244.0.12:8080: connection refused"));
  // Still running: counters only.
  take_answer(pass, 3, digest_answer(kUid, answer_document(3, 9, false), ""));
  // Not a result.
  take_answer(pass, 4, digest_answer(kUid, json{{"loadTestUid", kUid}, {"result", 7}}, ""));

  EXPECT_FALSE(pass.finals.merged());
  EXPECT_EQ(pass.by_worker.count(0), 0u);
  EXPECT_EQ(pass.by_worker.count(5), 0u);
  EXPECT_TRUE(pass.by_worker.at(1).other_run);
  EXPECT_FALSE(pass.by_worker.at(2).reached);
  EXPECT_EQ(pass.by_worker.at(2).error, "10.244.0.12:8080: connection refused");
  ASSERT_TRUE(pass.by_worker.at(3).partial);
  EXPECT_EQ(pass.by_worker.at(3).partial->run.result.requests, 9u);
  EXPECT_NE(pass.by_worker.at(4).unreadable.find("unreadable result"), std::string::npos)
      << pass.by_worker.at(4).unreadable;
}

TEST(PassAnswers, AFinalResultThatDoesNotMergeWithThePassIsUnreadableNotFolded) {
  Observation o = running(kStartAt + seconds(40));
  o.answers = begin_pass(o);
  take_answer(o.answers, 0, digest_answer(kUid, answer_document(0, 500, true), ""));
  json odd = answer_document(1, 400, true);
  Histogram other_layout(1, 1000, 2);
  other_layout.record(500);
  odd["result"]["histogram"] = other_layout.encode_base64();
  take_answer(o.answers, 1, digest_answer(kUid, odd, ""));
  EXPECT_TRUE(o.answers.by_worker.at(0).folded);
  EXPECT_FALSE(o.answers.by_worker.at(1).folded);
  EXPECT_FALSE(o.answers.by_worker.at(1).unreadable.empty());
  EXPECT_EQ(o.answers.finals.merged()->result.requests, 500u);
}

TEST(ReconcilePlan, TheRequeueCountsFromTheObservationNotFromTheEndOfThePass) {
  using namespace std::chrono_literals;
  const Timestamp observed = kCreated + seconds(100);
  const struct {
    milliseconds requeue_after;
    milliseconds pass_took;
    milliseconds delay;
  } rows[] = {
      {1000ms, 0ms, 1000ms},   // an instant pass: all of it
      {1000ms, 600ms, 400ms},  // 1,000 workers' results took 600 ms
      {500ms, 499ms, 1ms},     //
      {100ms, 600ms, 0ms},     // past due: at once, never negative
      {1000ms, -5ms, 1000ms},  // a clock that stepped back counts nothing
  };
  for (const auto& row : rows) {
    EXPECT_EQ(requeue_delay(row.requeue_after, observed, observed + row.pass_took), row.delay)
        << row.requeue_after.count() << " ms after a pass of " << row.pass_took.count() << " ms";
  }
}

TEST(ReconcilePlan, StartsAndFinishesInARowAreOneConcurrentBatchEach) {
  const Timestamp at = kStartAt;
  const std::vector<Action> actions = {RecordStartAt{"j-1", at},
                                       StartWorker{0, "10.244.0.10", at},
                                       StartWorker{1, "10.244.0.11", at},
                                       StartWorker{2, "10.244.0.12", at},
                                       WriteStatus{},
                                       FinishWorker{0, "10.244.0.10"},
                                       FinishWorker{1, "10.244.0.11"},
                                       StartWorker{2, "10.244.0.12", at},
                                       DeleteJob{"j-1", kUid}};
  const std::vector<std::size_t> expected = {0, 3, 2, 1, 0, 2, 1, 1, 0};
  for (std::size_t i = 0; i < actions.size(); ++i) {
    EXPECT_EQ(worker_calls_at(actions, i), expected[i]) << "action " << i;
  }
  EXPECT_EQ(worker_calls_at(actions, actions.size()), 0u);
}

TEST(ReconcilePlan, EveryWorkerHearsTheStartBarrierInOneBatch) {
  // Ten ready workers: the plan's starts follow RecordStartAt in a row, so the
  // executor sends them all at once and a slow worker delays none of the others.
  Observation o = observe(loadtest_json(R"({"workers": 10})"), kStartAt);
  o.loadtest.status = S({{"phase", "Starting"}});
  o.job = job_view(job_json(kUid, std::nullopt));
  for (uint32_t i = 0; i < 10; ++i) o.pods.push_back(pod_view(pod_json(i, "Running", true)));
  const ReconcilePlan p = plan(o, test_config());
  const auto first_start = std::find_if(p.actions.begin(), p.actions.end(), [](const Action& a) {
    return std::holds_alternative<StartWorker>(a);
  });
  ASSERT_NE(first_start, p.actions.end()) << testing::PrintToString(names(p));
  EXPECT_EQ(worker_calls_at(p.actions, first_start - p.actions.begin()), 10u);
}

// The status at the CRD's maximum shape: 100 stages, 100 named requests, 100
// thresholds. It holds nothing per worker, so its size is the same at 1 and
// at 1,000 workers, and far below what the API server accepts for the
// whole object (etcd's 1.5 MiB request limit, the spec included).
std::size_t final_status_bytes(uint32_t workers) {
  json spec = {{"workers", workers}, {"load", json::object()}};
  json stages = json::array();
  for (int s = 0; s < 100; ++s) stages.push_back({{"duration", "3s"}, {"connections", 1000 + s}});
  spec["load"]["stages"] = stages;
  json requests = json::array();
  json thresholds = json::array();
  for (int n = 0; n < 100; ++n) {
    const std::string name = "request-" + std::to_string(n);
    requests.push_back({{"name", name}, {"path", "/api/" + name}});
    thresholds.push_back(name + ".p99 < " + std::to_string(1000 + n) + "ms");
  }
  spec["requests"] = requests;
  spec["thresholds"] = thresholds;
  Observation o = running(kStartAt + seconds(400), spec.dump());
  EXPECT_TRUE(o.parsed.ok()) << (o.parsed.errors.empty() ? "" : o.parsed.errors[0].to_string());
  o.pods.clear();
  // Every worker's final result is kept already (their pods gone): the merge
  // (one recorded result stands for it) and each worker's report.
  std::map<uint32_t, WorkerReport> reports;
  for (uint32_t i = 0; i < workers; ++i) {
    reports[i] = WorkerReport{true, unix_ms(kStartAt) + i % 7, ""};
  }
  const WorkerResults kept(
      workers, reports,
      collected_result_from_json(staged_document(0, 100, 100, 50, 30'000'000)).run);
  o.kept_results =
      config_map_view({{"metadata",
                        {{"name", results_config_map_name("checkout", kUid)},
                         {"resourceVersion", "3003"},
                         {"ownerReferences", {{{"uid", kUid}, {"controller", true}}}}}},
                       {"data", kept_results_data(kept, kUid)}});
  const ReconcilePlan p = plan(o, test_config());
  EXPECT_EQ(J(p.status).value("phase", ""), "Succeeded") << J(p.status).value("message", "");
  EXPECT_EQ(J(p.status)["stages"].size(), 100u);
  EXPECT_EQ(J(p.status)["thresholds"].size(), 100u);
  EXPECT_EQ(J(p.status)["result"]["requests"], 50);
  return J(p.status).dump().size();
}

TEST(ReconcilePlan, TheStatusAtTheCrdsMaximumShapeIsBoundedWhateverTheWorkerCount) {
  const std::size_t one = final_status_bytes(1);
  const std::size_t thousand = final_status_bytes(1000);
  RecordProperty("statusBytesAt1000Workers", static_cast<int>(thousand));
  EXPECT_LE(thousand, one + one / 20) << one << " vs " << thousand;
  EXPECT_LE(thousand, std::size_t{512} * 1024) << thousand;
}

// The results ConfigMap as operators before the running merge wrote it.
json legacy_config_map(const std::map<uint32_t, json>& documents) {
  json data = json::object();
  for (const auto& [index, document] : documents) {
    data["worker-" + std::to_string(index)] = document.dump();
  }
  return {{"metadata",
           {{"name", results_config_map_name("checkout", kUid)},
            {"resourceVersion", "3003"},
            {"ownerReferences", {{{"uid", kUid}, {"controller", true}}}}}},
          {"data", data}};
}

// A ConfigMap of the results ConfigMap's name that this LoadTest does not
// control (made before the run by a namespace user, with data naming the
// run's uid, which is no secret) is never read: its forged merge would
// become the run's result. The run fails naming it, and nothing is written
// over it.
TEST(ReconcilePlan, AResultsConfigMapNotControlledByTheRunIsNeverRead) {
  for (const char* owner : {"", "someone-else"}) {
    SCOPED_TRACE(owner);
    Observation o = running(kStartAt + seconds(40));
    json forged = kept_config_map(
        {{0, answer_document(0, 1'000'000, true)}, {1, answer_document(1, 1'000'000, true)}});
    if (*owner == '\0') {
      forged["metadata"].erase("ownerReferences");
    } else {
      forged["metadata"]["ownerReferences"][0]["uid"] = owner;
    }
    o.kept_results = config_map_view(forged);
    EXPECT_TRUE(kept_results_taken(o));
    answer(o, 0, answer_document(0, 500, true));
    const ReconcilePlan p = plan(o, test_config());
    EXPECT_EQ(p.status.phase, api::Phase::Failed);
    EXPECT_EQ(p.status.reason, "ObjectNameTaken");
    EXPECT_NE(p.status.message.find("the name of the results ConfigMap is taken"),
              std::string::npos)
        << p.status.message;
    EXPECT_NE(p.status.message.find(results_config_map_name("checkout", kUid)), std::string::npos);
    const json status = J(p.status);
    EXPECT_NE(status.value("/result/requests"_json_pointer, 0), 2'000'000);
    for (const Action& action : p.actions)
      EXPECT_FALSE(std::holds_alternative<KeepResults>(action));
    // Its workers are not taken for kept: the real ones are still asked.
    EXPECT_EQ(workers_to_ask(o).size(), 2u);
  }
}

TEST(ReconcilePlan, ARunInFlightAcrossAnUpgradeKeepsWhatTheOldOperatorKept) {
  // Worker 0's result was kept by the previous operator version, one
  // document per worker; worker 1 finishes now.
  Observation o = running(kStartAt + seconds(40));
  o.kept_results = config_map_view(legacy_config_map({{0, answer_document(0, 500, true)}}));
  answer(o, 1, answer_document(1, 400, true));
  const ReconcilePlan p = plan(o, test_config());
  EXPECT_EQ(J(p.status).value("phase", ""), "Succeeded") << J(p.status).value("message", "");
  EXPECT_EQ(J(p.status)["result"]["requests"], 900);
  ASSERT_FALSE(p.actions.empty());
  const auto* keep = std::get_if<KeepResults>(&p.actions[0]);
  ASSERT_NE(keep, nullptr) << testing::PrintToString(names(p));
  EXPECT_EQ(keep->added, (std::vector<uint32_t>{1}));
  EXPECT_EQ(keep->resource_version, "3003");
  // The merge patch writes the new form and removes the old key...
  EXPECT_TRUE(keep->data.at("worker-0").is_null()) << keep->data.dump();
  // ... and what it leaves reads back as both workers.
  json after = o.kept_results->data;
  after.merge_patch(keep->data);
  Observation next = running(kStartAt + seconds(41));
  next.kept_results = o.kept_results;
  next.kept_results->data = after;
  next.pods = {pod_view(pod_json(0, "Succeeded", false)),
               pod_view(pod_json(1, "Succeeded", false))};
  EXPECT_EQ(J(plan(next, test_config()).status)["result"]["requests"], 900);
}

TEST(ReconcilePlan, AnOldResultsConfigMapOfAnotherRunIsUnreadableNotMerged) {
  Observation o = running(kStartAt + seconds(40));
  o.kept_results =
      config_map_view(legacy_config_map({{0, answer_document(0, 500, true, kOldUid)}}));
  answer(o, 1, answer_document(1, 400, true));
  const ReconcilePlan p = plan(o, test_config());
  EXPECT_EQ(J(p.status).value("reason", ""), "ResultsUnreadable");
  EXPECT_NE(J(p.status).value("message", "").find("worker-0: not this run's"), std::string::npos)
      << J(p.status).value("message", "");
}

// What observe() reads before the one plan of a pass: each lookup exactly
// when the plan will need it, from the status as stored.
TEST(Lookups, Table) {
  const Timestamp mid = kStartAt + seconds(10);
  const std::string baseline =
      R"({"baseline": {"lastPassed": true, "maxRegression": {"p99": "10%"}}})";
  OperatorConfig with_prometheus = test_config();
  with_prometheus.prometheus_url = "http://prometheus.monitoring:9090";
  with_prometheus.prometheus_scrape_interval = std::chrono::seconds(5);
  struct LookupRow {
    std::string name;
    std::function<Observation()> observed;
    const OperatorConfig* config;
    bool baseline;
    bool history;
    bool target;
  };
  const OperatorConfig config = test_config();
  const std::vector<LookupRow> rows = {
      {"a run without a baseline reads none",
       [=] {
         Observation o = running(mid + seconds(40));
         answer(o, 0, answer_document(0, 500, true));
         answer(o, 1, answer_document(1, 400, true));
         return o;
       },
       &config, false, false, false},
      {"the baseline, once every final result is in this pass",
       [=] {
         Observation o = running(mid + seconds(40), baseline);
         answer(o, 0, answer_document(0, 500, true));
         answer(o, 1, answer_document(1, 400, true));
         return o;
       },
       &config, true, false, false},
      {"not while a worker is still running",
       [=] {
         Observation o = running(mid, baseline);
         answer(o, 0, answer_document(0, 500, true));
         answer(o, 1, answer_document(1, 200, false));
         return o;
       },
       &config, false, false, false},
      {"a final result kept by an earlier pass counts",
       [=] {
         Observation o = running(mid + seconds(40), baseline);
         o.kept_results = config_map_view(kept_config_map({{0, answer_document(0, 500, true)}}));
         answer(o, 1, answer_document(1, 400, true));
         return o;
       },
       &config, true, false, false},
      {"a final status reads no baseline (it was compared when it ended)",
       [=] { return finished(kStartAt + seconds(40 + 10), "Succeeded", "Pass", baseline); },
       &config, false, false, false},
      {"the test's history, once the run's record is written",
       [=] { return recorded(finished(kStartAt + seconds(40 + 1), "Succeeded", "Fail")); }, &config,
       false, true, false},
      {"not before the record is written",
       [=] { return started(finished(kStartAt + seconds(40 + 1), "Succeeded", "Pass")); }, &config,
       false, false, false},
      {"nor once this process pruned it",
       [=] {
         Observation o = recorded(finished(kStartAt + seconds(40 + 600), "Succeeded", "Pass"));
         o.history_pruned = true;
         return o;
       },
       &config, false, false, false},
      {"the target, once a final run's window is three scrapes behind",
       [=] {
         // As a pass that had no Prometheus to ask left it: no TargetMetrics yet.
         Observation o =
             observe(loadtest_json(R"({"target": {"url": "http://checkout.shop.svc:8080/",
                                          "podSelector": {"matchLabels": {"app": "checkout"}}}})"),
                     kStartAt + seconds(40 + 600));
         o.loadtest.status = S({{"phase", "Succeeded"},
                                {"verdict", "Fail"},
                                {"observedGeneration", 1},
                                {"startTime", format_time(kStartAt)},
                                {"completionTime", format_time(kStartAt + seconds(31))},
                                {"result", {{"durationSeconds", 30.0}}}});
         return o;
       },
       &with_prometheus, false, false, true},
      {"no target without a Prometheus",
       [=] {
         return finished(kStartAt + seconds(40 + 600), "Succeeded", "Fail",
                         R"({"target": {"url": "http://checkout.shop.svc:8080/",
                                        "podSelector": {"matchLabels": {"app": "checkout"}}}})");
       },
       &config, false, false, false},
  };
  for (const LookupRow& row : rows) {
    SCOPED_TRACE(row.name);
    const Lookups need = lookups_for(row.observed(), *row.config);
    EXPECT_EQ(need.baseline, row.baseline);
    EXPECT_EQ(need.history, row.history);
    EXPECT_EQ(need.target.has_value(), row.target);
  }
}

// With what lookups_for asked for read, the plan never finds one missing.
TEST(Lookups, ThePlanFindsWhatItNeeds) {
  Observation o = running(kStartAt + seconds(50),
                          R"({"baseline": {"lastPassed": true, "maxRegression": {"p99": "10%"}}})");
  answer(o, 0, answer_document(0, 500, true));
  answer(o, 1, answer_document(1, 400, true));
  ASSERT_TRUE(lookups_for(o, test_config()).baseline);
  o.baseline_looked_up = true;  // what the executor does; none was found
  const ReconcilePlan planned = plan(o, test_config());
  EXPECT_EQ(J(planned.status).value("phase", ""), "Succeeded");
  const std::vector<std::string> acted = names(planned);
  EXPECT_NE(std::find(acted.begin(), acted.end(), "WriteStatus"), acted.end());
}

// Issue 29: where the load goes is recorded in the pass that creates the
// workers, and kept; whether others loaded it is decided when the run ends.
TEST(SharedTargetPlan, AddressesAreRecordedWithTheJobAndKept) {
  const OperatorConfig config = test_config();
  const ReconcilePlan created =
      plan(observe(loadtest_json(), kCreated + seconds(5), config), config);
  ASSERT_TRUE(creates_anything(created));
  ASSERT_TRUE(created.status.target);
  EXPECT_EQ(created.status.target->addresses,
            (Strings{"10.244.0.6", "10.244.0.7", "10.245.0.20", "checkout.shop.svc"}));
  Observation later = running(kStartAt + seconds(10));
  later.loadtest.status.target = created.status.target;
  EXPECT_EQ(plan(later, config).status.target, created.status.target);
  EXPECT_FALSE(lookups_for(later, config).other_runs);  // running: nothing to decide yet
}

TEST(SharedTargetPlan, DecidedWhenTheRunEndsFromTheOtherRuns) {
  const OperatorConfig config = test_config();
  const auto ending = [&] {
    Observation o = running(kStartAt + seconds(40));
    o.loadtest.status.target.emplace();
    o.loadtest.status.target->addresses = {"10.244.0.6", "10.245.0.20", "checkout.shop.svc"};
    answer(o, 0, answer_document(0, 500, true));
    answer(o, 1, answer_document(1, 400, true));
    return o;
  };
  Observation o = ending();
  ASSERT_TRUE(lookups_for(o, config).other_runs);
  o.other_runs_looked_up = true;
  o.other_runs = {{"shop",
                   "other",
                   "u-other",
                   kStartAt + seconds(5),
                   std::nullopt,
                   {"10.244.0.6", "10.245.0.99"}}};
  const ReconcilePlan decided = plan(o, config);
  EXPECT_EQ(J(decided.status)["phase"], "Succeeded");
  EXPECT_EQ(J(decided.status)["verdict"], "Pass");
  const api::Condition* shared =
      api::find_condition(decided.status.conditions, api::ConditionType::TargetShared);
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->status, api::ConditionStatus::True);
  EXPECT_EQ(J(decided.status)["target"]["sharedWith"],
            json::parse(R"([{"namespace": "shop", "name": "other"}])"));
  EXPECT_EQ(api::find_condition(decided.status.conditions, api::ConditionType::Ready)->status,
            api::ConditionStatus::True);

  // The status turned final in a pass that did not read them: decided on the next.
  Observation unread = ending();
  const ReconcilePlan waiting = plan(unread, config);
  EXPECT_EQ(J(waiting.status)["phase"], "Succeeded");
  EXPECT_EQ(api::find_condition(waiting.status.conditions, api::ConditionType::TargetShared),
            nullptr);
  ASSERT_TRUE(waiting.requeue_after);
  EXPECT_LE(*waiting.requeue_after, kPollForLookup);
  Observation next = observe(loadtest_json(), kStartAt + seconds(41), config);
  next.loadtest.status = waiting.status;
  EXPECT_TRUE(lookups_for(next, config).other_runs);
  next.loadtest.status = decided.status;
  EXPECT_FALSE(lookups_for(next, config).other_runs);  // decided once
}

TEST(GeneratorSaturationPlan, AWorkerAtItsCpuLimitIsSaidBesideAPassThatStaysAPass) {
  // Issue 30: worker 1 used 2.91 CPU seconds of its 100m limit in 30 s.
  const OperatorConfig config = test_config();
  Observation o = running(kStartAt + seconds(40));
  json busy = answer_document(1, 400, true);
  busy["cpu"] = api::generator_cpu_json(GeneratorCpu::of(2.91, 30, 0.1, 0.1));
  json idle = answer_document(0, 500, true);
  idle["cpu"] = api::generator_cpu_json(GeneratorCpu::of(0.6, 30, 0.1, 0.1));
  answer(o, 0, idle);
  answer(o, 1, busy);
  const ReconcilePlan p = plan(o, config);
  EXPECT_EQ(J(p.status)["phase"], "Succeeded");
  EXPECT_EQ(J(p.status)["verdict"], "Pass");
  const api::Condition* saturated =
      api::find_condition(p.status.conditions, api::ConditionType::GeneratorSaturated);
  ASSERT_NE(saturated, nullptr) << J(p.status).dump();
  EXPECT_EQ(saturated->status, api::ConditionStatus::True);
  EXPECT_EQ(saturated->reason, "GeneratorSaturated");
  EXPECT_EQ(saturated->message.rfind("worker 1 used 97% of its 100m CPU limit: ", 0), 0u)
      << saturated->message;
  // Green all the same: a warning, not a failure.
  for (const auto type : {api::ConditionType::Ready, api::ConditionType::Passed}) {
    EXPECT_EQ(api::find_condition(p.status.conditions, type)->status, api::ConditionStatus::True);
  }
  EXPECT_EQ(api::find_condition(p.status.conditions, api::ConditionType::Stalled)->status,
            api::ConditionStatus::False);
  ASSERT_TRUE(p.status.workers && p.status.workers->cpu);
  const api::WorkersCpuStatus& cpu = *p.status.workers->cpu;
  EXPECT_EQ(cpu.measured, 2u);
  EXPECT_NEAR(cpu.seconds, 3.51, 1e-9);
  EXPECT_EQ(cpu.busiest_worker, 1u);
  EXPECT_NEAR(cpu.max_utilization, 0.97, 1e-9);
  EXPECT_EQ(cpu.limit_cores, 0.1);
  // What each worker used is kept with its result, for a restarted operator.
  bool kept = false;
  for (const Action& action : p.actions) {
    if (const auto* keep = std::get_if<KeepResults>(&action)) {
      const json workers = json::parse(keep->data["workers"].get<std::string>());
      EXPECT_NEAR(workers["1"]["cpu"]["utilization"].get<double>(), 0.97, 1e-9);
      kept = true;
    }
  }
  EXPECT_TRUE(kept);
}

TEST(GeneratorSaturationPlan, WorkersThatDidNotSayTheirCpuLeaveItUnknown) {
  const OperatorConfig config = test_config();
  Observation o = running(kStartAt + seconds(40));
  answer(o, 0, answer_document(0, 500, true));
  answer(o, 1, answer_document(1, 400, true));
  const ReconcilePlan p = plan(o, config);
  EXPECT_EQ(J(p.status)["phase"], "Succeeded");
  const api::Condition* saturated =
      api::find_condition(p.status.conditions, api::ConditionType::GeneratorSaturated);
  ASSERT_NE(saturated, nullptr);
  EXPECT_EQ(saturated->status, api::ConditionStatus::Unknown);
  EXPECT_EQ(saturated->reason, "GeneratorCpuNotMeasured");
  EXPECT_FALSE(J(p.status)["workers"].contains("cpu"));
}

// The deadline the metrics export is the one the plan fails a run by.
TEST(ReconcilePlan, TheRunDeadlineIsTheBarrierPlusTheRunBound) {
  Observation o = running(kStartAt + seconds(10));
  answer(o, 0, answer_document(0, 200, false));
  answer(o, 1, answer_document(1, 200, false));
  const ReconcilePlan going = plan(o, test_config());
  const Timestamp deadline =
      kStartAt + std::chrono::duration_cast<Timestamp::duration>(run_time_bound(o.parsed.spec));
  EXPECT_EQ(going.run_deadline, std::optional(deadline));

  Observation late = running(deadline + seconds(1));
  answer(late, 0, answer_document(0, 200, false));
  answer(late, 1, answer_document(1, 200, false));
  const ReconcilePlan failed = plan(late, test_config());
  EXPECT_EQ(J(failed.status).value("reason", ""), "RunDeadlineExceeded");

  EXPECT_EQ(plan(finished(kStartAt + seconds(50), "Succeeded", "Pass"), test_config()).run_deadline,
            std::nullopt);
}
