#include "operator/controller.hpp"

#include <algorithm>
#include <set>

#include "operator/job_builder.hpp"

namespace kubeload::controller {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// Workers get the barrier's time this long before it, so that all of them
// hold it when it passes.
constexpr auto kStartLead = 1500ms;
constexpr auto kPollWhileRunning = 1s;
constexpr auto kPollWhileStarting = 2s;
constexpr auto kPollOtherwise = 5s;

int64_t unix_ms(Timestamp t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

const json& field(const json& object, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* at = &object;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return kNull;
    at = &(*at)[key];
  }
  return *at;
}

std::string string_at(const json& object, std::initializer_list<const char*> path) {
  const json& value = field(object, path);
  return value.is_string() ? value.get<std::string>() : std::string{};
}

bool is_final_phase(const std::string& phase) {
  return phase == "Succeeded" || phase == "Failed";
}

std::optional<uint32_t> worker_index(const json& pod) {
  const std::string index =
      string_at(pod, {"metadata", "annotations", std::string(kCompletionIndexAnnotation).c_str()});
  if (index.empty()) return std::nullopt;
  try {
    return static_cast<uint32_t>(std::stoul(index));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

bool pod_ready(const json& pod) {
  if (string_at(pod, {"status", "phase"}) != "Running") return false;
  if (string_at(pod, {"status", "podIP"}).empty()) return false;
  const json& conditions = field(pod, {"status", "conditions"});
  if (!conditions.is_array()) return false;
  return std::any_of(conditions.begin(), conditions.end(), [](const json& c) {
    return c.value("type", "") == "Ready" && c.value("status", "") == "True";
  });
}

// A merge patch that turns `current` into `next`: keys that disappear are
// set to null (RFC 7386), everything else is replaced wholesale.
json status_patch(const json& current, const json& next) {
  json status = next;
  if (current.is_object()) {
    for (const auto& [key, value] : current.items()) {
      if (!next.contains(key)) status[key] = nullptr;
    }
  }
  return json{{"status", status}};
}

}  // namespace

Reconciler::Reconciler(kube::Client& client, const kube::ListWatch& jobs,
                       const kube::ListWatch& pods, OperatorConfig config,
                       const WorkerClient& workers, Logger& log, OperatorMetrics& metrics,
                       ClockFn clock)
    : client_(client),
      jobs_(jobs),
      pods_(pods),
      config_(std::move(config)),
      workers_(workers),
      log_(log),
      metrics_(metrics),
      clock_(std::move(clock)) {}

std::optional<std::string> owning_loadtest(const json& object, const kube::ListWatch* jobs) {
  const std::string namespace_ = string_at(object, {"metadata", "namespace"});
  auto owner_of_kind = [&](const json& o, const char* kind) -> std::optional<std::string> {
    const json& owners = field(o, {"metadata", "ownerReferences"});
    if (!owners.is_array()) return std::nullopt;
    for (const json& owner : owners) {
      if (owner.value("kind", "") == kind) return owner.value("name", "");
    }
    return std::nullopt;
  };
  // List items carry no kind, so the owner references tell a Job from a Pod.
  if (auto name = owner_of_kind(object, "LoadTest")) return namespace_ + "/" + *name;
  auto job_name = owner_of_kind(object, "Job");
  if (!job_name || jobs == nullptr) return std::nullopt;
  const auto job = jobs->get(namespace_ + "/" + *job_name);
  if (!job) return std::nullopt;
  if (auto name = owner_of_kind(*job, "LoadTest")) return namespace_ + "/" + *name;
  return std::nullopt;
}

std::vector<json> Reconciler::worker_pods(const std::string& namespace_,
                                          const std::string& name) const {
  const std::string label = loadtest_label_value(name);
  std::vector<json> pods;
  for (json& pod : pods_.items()) {
    if (string_at(pod, {"metadata", "namespace"}) != namespace_) continue;
    if (string_at(pod, {"metadata", "labels", std::string(kLoadTestLabel).c_str()}) != label) {
      continue;
    }
    pods.push_back(std::move(pod));
  }
  return pods;
}

std::optional<json> Reconciler::ensure_job(const json& loadtest, const LoadTestSpec& spec) {
  const std::string namespace_ = string_at(loadtest, {"metadata", "namespace"});
  const std::string job_name = worker_job_name(string_at(loadtest, {"metadata", "name"}));
  if (auto cached = jobs_.get(namespace_ + "/" + job_name)) return cached;
  const kube::ResourceRef jobs = kube::resources::jobs(namespace_);
  kube::Response created = client_.create(jobs, build_worker_job(loadtest, spec, config_));
  if (created.ok()) {
    log_.info("created worker job", {{"namespace", namespace_}, {"job", job_name}});
    return created.body;
  }
  if (!created.is_already_exists()) {
    throw std::runtime_error("creating job " + namespace_ + "/" + job_name + ": " +
                             created.describe());
  }
  kube::Response existing = client_.get(jobs, job_name);
  if (!existing.ok())
    throw std::runtime_error("reading job " + job_name + ": " + existing.describe());
  return existing.body;
}

std::optional<Timestamp> Reconciler::start_workers(const json& job, const std::vector<json>& pods,
                                                   uint32_t workers) {
  const std::string recorded =
      string_at(job, {"metadata", "annotations", std::string(kStartAtAnnotation).c_str()});
  if (!recorded.empty()) {
    try {
      return Timestamp(std::chrono::milliseconds(std::stoll(recorded)));
    } catch (const std::exception&) {
      log_.warn("ignoring a malformed start-at annotation", {{"value", recorded}});
    }
  }
  std::set<uint32_t> ready;
  for (const json& pod : pods) {
    if (const auto index = worker_index(pod); index && pod_ready(pod)) ready.insert(*index);
  }
  if (ready.size() < workers) return std::nullopt;
  // The intent is recorded before any worker hears of it, so a restarted
  // operator starts the stragglers at the same barrier.
  const Timestamp at = clock_() + kStartLead;
  const std::string namespace_ = string_at(job, {"metadata", "namespace"});
  const std::string job_name = string_at(job, {"metadata", "name"});
  json patch = {
      {"metadata",
       {{"annotations", {{std::string(kStartAtAnnotation), std::to_string(unix_ms(at))}}}}}};
  kube::Response patched = client_.merge_patch(kube::resources::jobs(namespace_), job_name, patch);
  if (!patched.ok())
    throw std::runtime_error("annotating job " + job_name + ": " + patched.describe());
  log_.info("starting workers", {{"namespace", namespace_},
                                 {"job", job_name},
                                 {"workers", workers},
                                 {"startAtMs", unix_ms(at)}});
  return at;
}

void Reconciler::collect_results(const std::vector<json>& pods, Observed& observed) {
  observed.results = WorkerResults(observed.parsed.spec.workers);
  for (const json& pod : pods) {
    const auto index = worker_index(pod);
    const std::string ip = string_at(pod, {"status", "podIP"});
    if (!index || ip.empty()) continue;
    const WorkerAddress address{ip, config_.worker_port};
    std::string error;
    const auto document = workers_.result(address, error);
    if (document) {
      try {
        CollectedResult collected = collected_result_from_json(*document);
        const bool started = collected.started_at_ms.has_value();
        observed.results.fold(*index, std::move(collected));
        if (started) continue;
      } catch (const std::invalid_argument& e) {
        log_.warn("unreadable worker result", {{"pod", ip}, {"error", e.what()}});
      }
    }
    // Not started yet (or not answering): the barrier time is idempotent, so
    // sending it again is safe and covers a start lost to a restart.
    if (observed.start_issued_at && pod_ready(pod) &&
        !workers_.start(address, unix_ms(*observed.start_issued_at), error)) {
      log_.warn("worker did not take the start", {{"pod", ip}, {"error", error}});
    }
  }
}

void Reconciler::finish_workers(const std::vector<json>& pods) {
  for (const json& pod : pods) {
    const std::string ip = string_at(pod, {"status", "podIP"});
    if (ip.empty() || string_at(pod, {"status", "phase"}) != "Running") continue;
    std::string error;
    workers_.finish(WorkerAddress{ip, config_.worker_port}, error);
  }
}

void Reconciler::clean_up(const json& loadtest, const LoadTestSpec& spec, const json& status,
                          const std::optional<json>& job) {
  if (!job) return;
  const bool succeeded =
      status.value("phase", "") == "Succeeded" && status.value("verdict", "None") != "Fail";
  const bool remove = spec.cleanup == CleanupPolicy::Always ||
                      (spec.cleanup == CleanupPolicy::OnSuccess && succeeded);
  if (!remove || !field(*job, {"metadata", "deletionTimestamp"}).is_null()) return;
  const std::string namespace_ = string_at(loadtest, {"metadata", "namespace"});
  const std::string job_name = string_at(*job, {"metadata", "name"});
  kube::DeleteOptions options;
  options.propagation = kube::Propagation::Background;
  kube::Response deleted = client_.remove(kube::resources::jobs(namespace_), job_name, options);
  if (!deleted.ok() && !deleted.is_not_found()) {
    throw std::runtime_error("deleting job " + job_name + ": " + deleted.describe());
  }
  log_.info("cleaned up worker job", {{"namespace", namespace_}, {"job", job_name}});
}

void Reconciler::write_status(const json& loadtest, const json& status) {
  const std::string namespace_ = string_at(loadtest, {"metadata", "namespace"});
  const std::string name = string_at(loadtest, {"metadata", "name"});
  kube::Response patched = client_.patch_status(kube::resources::loadtests(namespace_), name,
                                                status_patch(field(loadtest, {"status"}), status));
  if (patched.is_not_found()) return;  // deleted meanwhile
  if (!patched.ok()) {
    throw std::runtime_error("writing status of " + namespace_ + "/" + name + ": " +
                             patched.describe());
  }
}

void Reconciler::find_baseline(const LoadTestSpec& spec, const json& loadtest, Observed& observed) {
  if (!spec.baseline) return;
  const std::string namespace_ = string_at(loadtest, {"metadata", "namespace"});
  const std::string self = string_at(loadtest, {"metadata", "name"});
  const kube::ResourceRef loadtests = kube::resources::loadtests(namespace_);
  if (!spec.baseline->load_test_name.empty()) {
    kube::Response found = client_.get(loadtests, spec.baseline->load_test_name);
    if (found.ok() && found.body.contains("status")) {
      observed.baseline_status = found.body["status"];
      observed.baseline_name = spec.baseline->load_test_name;
    }
    return;
  }
  const auto test = spec.labels.find("kubeload.dev/test");
  if (test == spec.labels.end()) return;
  kube::ListOptions options;
  options.label_selector = "kubeload.dev/test=" + test->second;
  kube::Response listed = client_.list(loadtests, options);
  if (!listed.ok() || !listed.body.contains("items")) return;
  std::string newest;
  for (const json& item : listed.body["items"]) {
    const std::string name = string_at(item, {"metadata", "name"});
    const std::string completed = string_at(item, {"status", "completionTime"});
    if (name == self || string_at(item, {"status", "verdict"}) != "Pass") continue;
    if (completed > newest) {  // RFC 3339 in UTC sorts as text
      newest = completed;
      observed.baseline_status = item["status"];
      observed.baseline_name = name;
    }
  }
}

ReconcileOutcome Reconciler::reconcile(const std::string& namespace_, const std::string& name) {
  const kube::ResourceRef loadtests = kube::resources::loadtests(namespace_);
  kube::Response fetched = client_.get(loadtests, name);
  if (fetched.is_not_found()) {
    metrics_.forget_loadtest(namespace_, name);
    return {};  // deleted: its Job and pods go with it (owner references)
  }
  if (!fetched.ok())
    throw std::runtime_error("reading " + namespace_ + "/" + name + ": " + fetched.describe());
  const json& loadtest = fetched.body;
  const json& current = field(loadtest, {"status"});
  const int64_t generation = field(loadtest, {"metadata", "generation"}).is_number()
                                 ? loadtest["metadata"]["generation"].get<int64_t>()
                                 : 0;
  const bool already_final =
      is_final_phase(current.is_object() ? current.value("phase", "") : "") &&
      current.value("observedGeneration", int64_t{-1}) == generation;

  Observed observed;
  observed.loadtest = loadtest;
  observed.parsed = parse_loadtest(loadtest.dump());
  const std::string job_key = namespace_ + "/" + worker_job_name(name);
  observed.job = jobs_.get(job_key);
  const std::vector<json> pods = worker_pods(namespace_, name);

  if (already_final) {
    // The final status is stored: the workers may go, and the Job per policy.
    finish_workers(pods);
    if (observed.parsed.ok()) clean_up(loadtest, observed.parsed.spec, current, observed.job);
    metrics_.observe_loadtest(loadtest, current);
    return {};
  }

  // A run that started and lost its Job is not run again behind the user's
  // back: compute_status reports it.
  const bool started_before = current.is_object() && current.contains("startTime");
  if (observed.parsed.ok() && (observed.job || !started_before)) {
    observed.job = ensure_job(loadtest, observed.parsed.spec);
    observed.pods = pods;
    if (observed.job) {
      observed.start_issued_at = start_workers(*observed.job, pods, observed.parsed.spec.workers);
    }
    if (observed.start_issued_at) collect_results(pods, observed);
    find_baseline(observed.parsed.spec, loadtest, observed);
  }

  const Timestamp now = clock_();
  const json status = compute_status(observed, now);
  const std::string old_phase = current.is_object() ? current.value("phase", "") : "";
  const std::string phase = status.value("phase", "");
  if (status_changed(current, status)) write_status(loadtest, status);
  metrics_.observe_loadtest(loadtest, status);
  if (phase != old_phase) {
    const std::string reason = status.value("reason", phase);
    log_.info("phase", {{"namespace", namespace_},
                        {"loadtest", name},
                        {"phase", phase},
                        {"reason", reason},
                        {"message", status.value("message", "")}});
    client_.record_event(loadtest, phase == "Failed" ? "Warning" : "Normal", reason,
                         status.value("message", phase));
  }
  if (is_final_phase(phase)) {
    // One more pass acknowledges the workers and cleans up, now that the
    // final status is stored.
    return {std::chrono::milliseconds(100)};
  }
  if (observed.start_issued_at) return {kPollWhileRunning};
  if (observed.job) {
    if (const auto deadline = start_deadline(observed)) {
      const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - now);
      return {std::clamp<std::chrono::milliseconds>(until, 100ms, kPollWhileStarting)};
    }
    return {kPollWhileStarting};
  }
  return {kPollOtherwise};
}

}  // namespace kubeload::controller
