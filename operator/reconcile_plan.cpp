#include "operator/reconcile_plan.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "kubeload/duration.hpp"
#include "kubeload/json_access.hpp"
#include "kubeload/text.hpp"
#include "operator/config_map_refs.hpp"
#include "operator/generator_saturation.hpp"
#include "operator/job_builder.hpp"
#include "operator/phase.hpp"
#include "operator/result_record.hpp"
#include "operator/run_policy.hpp"
#include "operator/secret_consent.hpp"
#include "operator/test_history.hpp"
#include "operator/worker_token.hpp"

namespace kubeload::controller {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using namespace std::chrono_literals;
using api::name;

constexpr auto kPollWhileRunning = 1s;
// From kPollWhileEnding before a time-bounded run's planned end, a pass's
// /result calls wait (up to kResultWait) for each worker's final result, so
// the final status follows the last worker by the time its result takes to
// fold, not by a poll's. Until kEndingWindow after the end, while workers
// finish what is in flight, the passes follow each other kPollWhileEnding
// apart. (A run bounded by requests whose pace is not known yet is looked at
// every kPollWhilePaced for as long.)
constexpr auto kPollWhileEnding = 100ms;
constexpr auto kResultWait = 1s;
constexpr auto kEndingWindow = 2s;
// A run bounded by requests whose pace says it ends within the poll: no
// closer than this, since it may stay there while a last request hangs.
constexpr auto kPollWhilePaced = 250ms;
constexpr auto kPollWhileStarting = 2s;
constexpr auto kPollOtherwise = 5s;

const std::string& loadtest_uid(const Observation& o) {
  return o.loadtest.metadata.uid;
}

json results_config_map(const api::LoadTest& loadtest, const std::string& name) {
  const api::ObjectMeta& metadata = loadtest.metadata;
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata",
           {{"name", name},
            {"namespace", metadata.namespace_},
            {"labels",
             {{std::string(kLoadTestLabel), loadtest_label_value(metadata.name)},
              {std::string(kLoadTestUidLabel), metadata.uid},
              {std::string(kManagedByLabel), std::string(kManagedBy)}}},
            {"ownerReferences", json::array({{{"apiVersion", api::kApiVersion},
                                              {"kind", api::kKind},
                                              {"name", metadata.name},
                                              {"uid", metadata.uid},
                                              {"controller", true},
                                              {"blockOwnerDeletion", true}}})}}},
          {"data", json::object()}};
}

// Looks again within `delay`, or sooner if the plan already asked for that.
void look_again_within(ReconcilePlan& out, milliseconds delay) {
  out.requeue_after = std::min(out.requeue_after.value_or(delay), delay);
}

// spec.ttlSecondsAfterFinished: a finished LoadTest goes once its time is
// up and its record is written (baselines read records, so no run is kept
// for them). Never one a GitOps tool applied (said once, when the run ends),
// nor one whose record the API server refused: it is the only copy.
void plan_retention(const Observation& o, const api::LoadTestStatus& current, ReconcilePlan& out) {
  const LoadTestSpec& spec = o.parsed.spec;
  if (!spec.ttl_after_finished) return;
  const std::optional<Timestamp> completed = out.status.completion_time;
  if (!completed) return;
  if (const auto tool = applied_by_gitops(o.loadtest.metadata)) {
    if (!current.final()) {
      out.actions.push_back(RecordEvent{
          "Normal", "TTLNotApplied",
          "ttlSecondsAfterFinished is not applied: the LoadTest was applied by " + *tool +
              ", which would apply it again (a new run); its LoadTestResult record stays "
              "whatever happens to it (docs/gates.md)"});
    }
    return;
  }
  const bool recorded = out.status.result_record.has_value() || !out.status.start_time;
  if (!recorded) return;
  const Timestamp due = *completed + *spec.ttl_after_finished;
  if (o.now < due) {
    look_again_within(
        out, std::max<milliseconds>(std::chrono::duration_cast<milliseconds>(due - o.now), 1s));
    return;
  }
  out.actions.push_back(DeleteLoadTest{o.loadtest.metadata.name, o.loadtest.metadata.uid});
}

// The run's LoadTestResult record: written before the final status that names
// it (so whoever sees the run final finds its record), brought up to date as
// that status changes, and followed by the pruning of its test's history.
void plan_result_record(const Observation& o, const api::LoadTestStatus& current,
                        const std::optional<RunResult>& merged, const OperatorConfig& config,
                        ReconcilePlan& out) {
  out.status.result_record = current.result_record;
  if (!out.status.final() || !out.status.start_time) return;
  if (!current.result_record) {
    if (o.record_refused) {
      if (!current.final()) {
        out.actions.push_back(RecordEvent{"Warning", "ResultNotRecorded",
                                          "the API server refused the run's LoadTestResult "
                                          "record: " +
                                              *o.record_refused});
      }
      return;
    }
    api::LoadTestResult record = build_result_record(o.loadtest, out.status, merged);
    out.status.result_record = record.metadata.name;
    out.actions.push_back(CreateResultRecord{std::move(record)});
    look_again_within(out, kPollForLookup);  // back for the history's pruning
    return;
  }
  if (status_changed(current, out.status)) {
    out.actions.push_back(UpdateResultRecord{*current.result_record, out.status});
  }
  if (o.history_pruned) return;
  if (!o.history_looked_up) {
    look_again_within(out, kPollForLookup);
    return;
  }
  const std::string& namespace_ = o.loadtest.metadata.namespace_;
  std::vector<std::string> prune = records_to_prune(
      o.history, history_limits(o.parsed.spec.history, config.history_policy(namespace_)),
      o.pinned_records, o.now);
  out.actions.push_back(PruneResultRecords{std::move(prune)});
}

// How far a worker's clock was off the operator's when it answered.
std::optional<std::chrono::milliseconds> clock_offset(const WorkerAnswer& answer) {
  if (!answer.clock_ms || !answer.answered_at) return std::nullopt;
  return std::chrono::milliseconds(*answer.clock_ms) -
         std::chrono::duration_cast<std::chrono::milliseconds>(
             answer.answered_at->time_since_epoch());
}

// When to look at a running run again: every second, but at a time-bounded
// run's planned end and closely after it, and for one bounded by requests
// when the pace each running worker has kept since the barrier (`running_done`:
// the requests each worker whose final result is not in has done so far) says
// the slowest will be done. Each worker's own pace, not the sum's: workers on
// a busy node get going at different times, and the ones that started late
// end the run.
milliseconds running_requeue(const LoadTestSpec* spec, uint32_t workers, Timestamp start_at,
                             Timestamp now, const std::vector<uint64_t>& running_done) {
  if (spec == nullptr) return kPollWhileRunning;
  if (const auto length = planned_length(spec->load)) {
    const Timestamp end = start_at + *length;
    if (const Timestamp ending = end - kPollWhileEnding; now < ending) {
      return std::min<milliseconds>(kPollWhileRunning,
                                    std::chrono::ceil<milliseconds>(ending - now));
    }
    return now < end + kEndingWindow ? kPollWhileEnding : kPollWhileRunning;
  }
  if (!spec->load.requests) return kPollWhileRunning;
  const double elapsed = std::chrono::duration<double>(now - start_at).count();
  const bool no_pace = elapsed <= 0 || running_done.empty() ||
                       std::ranges::find(running_done, uint64_t{0}) != running_done.end();
  if (no_pace) {
    // The first look comes just after the barrier (a short run may be over
    // by then). A worker on a busy node may have no request done by then, and
    // a run of a few hundred requests is over soon after: look as often as a
    // paced poll for the ending window, then every second.
    const Timestamp first_pace = start_at + kPollWhilePaced;
    if (now >= first_pace) {
      return now < first_pace + kEndingWindow ? kPollWhilePaced : kPollWhileRunning;
    }
    return std::clamp<milliseconds>(std::chrono::ceil<milliseconds>(first_pace - now),
                                    kPollWhileEnding, kPollWhileRunning);
  }
  // Each worker's share as the planned requests split evenly (loadgen splits
  // them by connections, which are split evenly too). A request that hangs
  // at the end keeps the polls at the paced rate until it times out.
  const double share = static_cast<double>(*spec->load.requests) / std::max(workers, 1u);
  double remaining = 0;
  for (const uint64_t done : running_done) {
    const auto d = static_cast<double>(done);
    remaining = std::max(remaining, elapsed * (share - d) / d);
  }
  if (remaining >= std::chrono::duration<double>(kPollWhileRunning).count()) {
    return kPollWhileRunning;
  }
  return std::clamp<milliseconds>(
      milliseconds(static_cast<int64_t>(remaining * 1000)) + kPollWhileEnding, kPollWhilePaced,
      kPollWhileRunning);
}

}  // namespace

bool is_rejection(int http_status) {
  return http_status >= 400 && http_status < 500 && http_status != 409 && http_status != 429 &&
         http_status != 401;
}

std::string results_config_map_name(const std::string& loadtest_name, const std::string& uid) {
  // The uid keeps a recreated LoadTest of the same name apart from the old
  // one's ConfigMap while that is being garbage-collected.
  return worker_job_name(loadtest_name) + "-results-" + uid.substr(0, 8);
}

json kept_results_data(const WorkerResults& kept, const std::string& loadtest_uid) {
  return api::to_config_map_data(api::KeptResults{loadtest_uid, kept.reports(), kept.merged()});
}

std::size_t config_map_data_size(const json& data) {
  std::size_t size = 0;
  for (const auto& [key, value] : data.items()) {
    size += key.size() + (value.is_string() ? value.get_ref<const std::string&>().size() : 0);
  }
  return size;
}

std::vector<std::string> legacy_result_keys(const json& data) {
  return api::legacy_result_keys(data);
}

bool kept_results_taken(const Observation& o) {
  return o.kept_results && o.kept_results->controller_uid != loadtest_uid(o);
}

WorkerResults kept_merge(const Observation& o, std::vector<std::string>& problems) {
  const uint32_t workers = o.parsed.ok() ? o.parsed.spec.workers : 0;
  if (!o.kept_results) return WorkerResults(workers);
  if (kept_results_taken(o)) {
    // Not ours, whatever its data says (the run's uid is no secret): its
    // merge is never folded in, nor are its workers taken for kept.
    problems.push_back("the results ConfigMap is not this run's");
    return WorkerResults(workers);
  }
  try {
    std::optional<api::KeptResults> kept =
        api::kept_results_from_config_map_data(o.kept_results->data, loadtest_uid(o));
    if (!kept) return WorkerResults(workers);
    if (!kept->workers.empty() && kept->workers.rbegin()->first >= workers) {
      throw std::invalid_argument("worker " + std::to_string(kept->workers.rbegin()->first) +
                                  " is not one of the " + std::to_string(workers) + " workers");
    }
    return WorkerResults(workers, std::move(kept->workers), std::move(kept->merged));
  } catch (const std::exception& e) {
    problems.push_back(std::string("the results ConfigMap: ") + e.what());
    return WorkerResults(workers);
  }
}

std::map<uint32_t, std::string> workers_to_ask(const Observation& o) {
  std::map<uint32_t, std::string> ask;
  const std::optional<JobView> job = own_job(o);
  if (!o.parsed.ok() || !job || !job->start_at || o.loadtest.status.final()) {
    return ask;
  }
  std::vector<std::string> ignored;
  const WorkerResults kept = kept_merge(o, ignored);
  for (const PodView& pod : own_pods(o)) {
    if (!pod.index || *pod.index >= o.parsed.spec.workers || pod.ip.empty()) continue;
    if (pod.phase != "Running" || kept.reports().contains(*pod.index)) continue;
    ask[*pod.index] = pod.ip;
  }
  return ask;
}

std::optional<Timestamp> result_wait_until(const Observation& o) {
  const std::optional<JobView> job = own_job(o);
  if (!o.parsed.ok() || !job || !job->start_at || o.loadtest.status.final()) return std::nullopt;
  const std::optional<std::chrono::nanoseconds> length = planned_length(o.parsed.spec.load);
  if (!length || o.now < *job->start_at + *length - kPollWhileEnding) return std::nullopt;
  return o.now + kResultWait;
}

PassAnswers begin_pass(const Observation& o) {
  PassAnswers answers;
  answers.uid = loadtest_uid(o);
  std::vector<std::string> ignored;  // plan() reports them
  const WorkerResults kept = kept_merge(o, ignored);
  answers.finals = WorkerResults(kept.workers());
  for (const auto& [index, report] : kept.reports()) answers.not_taken.insert(index);
  return answers;
}

DigestedAnswer digest_answer(const std::string& uid, const std::optional<json>& document,
                             std::string error, bool token_refused) {
  DigestedAnswer digested;
  WorkerAnswer& answer = digested.answer;
  if (!document) {
    answer.error = std::move(error);
    answer.token_refused = token_refused;
    return digested;
  }
  answer.reached = true;
  try {
    // Whose it is first: another run's document is not ours to read.
    if (api::result_head_from_json(*document).loadtest_uid != uid) {
      answer.other_run = true;
      return digested;
    }
    CollectedResult collected = collected_result_from_json(*document);
    answer.clock_ms = collected.clock_ms;
    if (collected.run.finished) {
      digested.final_result = std::move(collected);
    } else {
      answer.partial = std::move(collected);
    }
  } catch (const std::invalid_argument& e) {
    answer.unreadable = std::string("unreadable result: ") + e.what();
  }
  return digested;
}

void take_answer(PassAnswers& answers, uint32_t index, DigestedAnswer digested) {
  if (index >= answers.finals.workers() || answers.not_taken.contains(index)) return;
  WorkerAnswer& answer = digested.answer;
  if (digested.final_result) {
    try {
      answer.folded = answers.finals.fold(index, std::move(*digested.final_result));
    } catch (const std::invalid_argument& e) {
      answer.unreadable = std::string("unreadable result: ") + e.what();
    }
  }
  answers.by_worker[index] = std::move(answer);
}

std::optional<std::string> applied_by_gitops(const api::ObjectMeta& meta) {
  // What each tool writes on the objects it applies (Argo CD's label only
  // when configured for label tracking with its own key: its legacy default,
  // app.kubernetes.io/instance, is on every Helm chart's objects too).
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 3> kLabels{{
      {"kustomize.toolkit.fluxcd.io/name", "Flux"},
      {"helm.toolkit.fluxcd.io/name", "Flux"},
      {"argocd.argoproj.io/instance", "Argo CD"},
  }};
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 1> kAnnotations{{
      {"argocd.argoproj.io/tracking-id", "Argo CD"},
  }};
  for (const auto& [key, tool] : kLabels) {
    if (meta.labels.contains(std::string(key))) {
      return std::string(tool) + " (label " + std::string(key) + ")";
    }
  }
  for (const auto& [key, tool] : kAnnotations) {
    if (meta.annotations.contains(std::string(key))) {
      return std::string(tool) + " (annotation " + std::string(key) + ")";
    }
  }
  return std::nullopt;
}

Lookups lookups_for(const Observation& o, const OperatorConfig& config) {
  Lookups need;
  if (!o.parsed.ok()) return need;
  const LoadTestSpec& spec = o.parsed.spec;
  const api::LoadTestStatus& current = o.loadtest.status;
  if (!current.final()) {
    if (!o.job && !current.start_time && !o.create_refused) {
      need.target_service =
          target_cluster_host(spec, o.loadtest.metadata.namespace_, config.cluster_domain);
      if (need.target_service && need.target_service->kind != ClusterHost::Kind::Service) {
        need.target_service.reset();
      }
      need.secrets = secrets_to_read(spec);
      need.config_maps = config_maps_to_read(spec);
    }
    // Every worker's final result in: kept by an earlier pass (not taken
    // again) or folded in this one.
    bool all_in = spec.workers > 0;
    for (uint32_t index = 0; index < spec.workers && all_in; ++index) {
      const auto answer = o.answers.by_worker.find(index);
      all_in = o.answers.not_taken.contains(index) ||
               (answer != o.answers.by_worker.end() && answer->second.folded);
    }
    need.baseline = spec.baseline && all_in;
    need.other_runs = all_in && shared_target_undecided(current);
    return need;
  }
  need.other_runs = shared_target_undecided(current);
  need.history = current.result_record && !o.history_pruned;
  api::LoadTestStatus status = current;
  need.target = plan_target_usage(current, status, o.parsed, config, std::nullopt, o.now).measure;
  return need;
}

namespace {

// "the target Service ns/name does not exist" when the spec names a Service
// (spec.target.service, or a url in one of a Service's own forms) that
// observe() did not find; a short url host that is no Service is the
// worker's to resolve.
std::optional<std::string> missing_target_service(const Observation& o) {
  const std::optional<TargetServiceView>& target = o.target_service;
  if (!target || target->found || !target->unreadable.empty() || !target->host.by_form) {
    return std::nullopt;
  }
  return "the target Service " + target->host.namespace_ + "/" + target->host.name +
         " does not exist";
}

}  // namespace

ReconcilePlan plan(const Observation& o, const OperatorConfig& config) {
  ReconcilePlan out;
  const api::ObjectMeta& metadata = o.loadtest.metadata;
  const api::LoadTestStatus& current = o.loadtest.status;
  const std::string& name = metadata.name;
  const std::string& uid = metadata.uid;
  const bool already_final = current.final() && current.observed_generation == metadata.generation;
  const bool valid = o.parsed.ok();
  const LoadTestSpec& spec = o.parsed.spec;
  const uint32_t workers = valid ? spec.workers : 0;

  const std::optional<JobView> job = own_job(o);
  const std::vector<PodView> pods = own_pods(o);

  RunState run;
  std::optional<RunFailure>& failure = run.failure;
  bool waiting_for_old_job = false;
  bool waiting_for_lookup = false;  // what lookups_for asks for, before anything is created
  // A Secret, the target Service or a ConfigMap key the spec names, that
  // does not exist yet.
  bool waiting_for_named_object = false;
  // Applied with the LoadTest, what it names may come a moment after it: the
  // run waits for it as it waits for its workers, until timeouts.start, then
  // fails for `reason`, naming it.
  const auto wait_for_named_object = [&](Reason reason, const std::string& missing) {
    const std::string start_timeout = format_duration(spec.start_timeout);
    if (const auto deadline = start_deadline(o); deadline && o.now > *deadline) {
      failure = RunFailure{reason, missing + " after timeouts.start (" + start_timeout + ")"};
    } else {
      waiting_for_named_object = true;
      run.waiting_for =
          missing + " yet: waiting for it until timeouts.start (" + start_timeout + ")";
    }
  };
  std::vector<uint64_t> running_done;  // requests done by each worker still running
  std::set<uint32_t> finishing;        // workers told to exit in this plan
  // Those of them whose results this pass keeps: told after the status is
  // written, so the last worker's result reaches the status without waiting
  // for a call to each of 1,000 workers (the ConfigMap holds it already).
  std::vector<Action> finish_kept;
  // Where the load goes, recorded in the pass that creates the workers.
  std::optional<std::vector<std::string>> recorded_addresses;

  if (!already_final && valid) {
    // ---- the Job: ours, another incarnation's, or someone else's
    const bool started_before = current.start_time.has_value();
    if (o.job && !job) {
      if (o.job->managed_by_us) {
        // The Job of an earlier LoadTest of this name, still being
        // garbage-collected: it goes first (only that uid), then ours.
        waiting_for_old_job = true;
        if (!o.job->deleting) out.actions.push_back(DeleteJob{o.job->name, o.job->uid});
      } else {
        failure =
            RunFailure{Reason::JobNameTaken, "a Job named \"" + o.job->name +
                                                 "\" exists and does not belong to this LoadTest"};
      }
    } else if (!job && !started_before) {
      if (o.create_refused) {
        using Object = CreateRefusal::Object;
        const Object refused = o.create_refused->object;
        const std::string object(describe(refused));
        failure =
            o.create_refused->name_taken
                ? RunFailure{Reason::ObjectNameTaken,
                             "the name of " + object + " is taken: " + o.create_refused->message}
                : RunFailure{refused == Object::Job ? Reason::JobRejected : Reason::ObjectRejected,
                             "the API server refused " + object + ": " + o.create_refused->message};
      } else if (const Lookups need = lookups_for(o, config);
                 (need.target_service && !o.target_service_looked_up) ||
                 (!need.secrets.empty() && !o.secrets_looked_up) ||
                 (!need.config_maps.empty() && !o.config_maps_looked_up)) {
        // Where the target leads, whether the owners of the Secrets it
        // names consent and whether the ConfigMap keys it mounts are there
        // are decided before anything is created.
        waiting_for_lookup = true;
      } else if (const ConsentDecision consent = decide_secret_consent(o.loadtest, spec, o.secrets);
                 consent.refused) {
        failure = RunFailure{Reason::SecretNotConsented, *consent.refused};
      } else if (auto refused = policy_refusal(o.loadtest, spec, config, o.target_service)) {
        // The admin's ceilings, target and scheduling rules, checked before
        // anything is created (a run already going is never stopped by a new
        // rule).
        failure = RunFailure{Reason::PolicyViolation, *refused};
      } else if (consent.missing) {
        wait_for_named_object(Reason::SecretNotConsented, *consent.missing);
      } else if (const auto missing = missing_target_service(o)) {
        // Without it, no cluster address of it is decided for the workers.
        wait_for_named_object(Reason::TargetNotFound, *missing);
      } else if (const auto missing =
                     missing_config_map_key(spec, metadata.namespace_, o.config_maps)) {
        // Without it the workers' pods would never start, and timeouts.start
        // would fail the run without saying why: its workers are what is not
        // ready.
        wait_for_named_object(Reason::WorkersNotReady, *missing);
      } else {
        const TargetServiceView* target = o.target_service ? &*o.target_service : nullptr;
        recorded_addresses =
            target_addresses(spec, o.target_service, metadata.namespace_, config.cluster_domain);
        if (worker_network_policy_wanted(config)) {
          out.actions.push_back(
              CreateNetworkPolicy{build_worker_network_policy(o.loadtest, spec, config, target)});
        }
        out.actions.push_back(CreateTokenSecret{build_worker_token_secret(
            o.loadtest, spec, worker_token(config.worker_token_key, uid))});
        out.actions.push_back(CreateSpecConfigMap{build_worker_spec_config_map(o.loadtest, spec)});
        out.actions.push_back(CreateJob{build_worker_job(
            o.loadtest, spec, config,
            target ? decided_destinations(*target) : std::vector<DecidedDestination>{})});
      }
    }

    // ---- the start barrier
    std::optional<Timestamp> start_at = job ? job->start_at : std::nullopt;
    if (job && !start_at && !job->deleting && !job->failed) {
      std::map<uint32_t, std::string> ready;
      for (const PodView& pod : pods) {
        if (pod.ready && !pod.deleting && pod.index && *pod.index < workers) {
          ready[*pod.index] = pod.ip;
        }
      }
      if (ready.size() == workers) {
        start_at = o.now + kStartLead;
        out.actions.push_back(RecordStartAt{job->name, *start_at});
        for (const auto& [index, ip] : ready)
          out.actions.push_back(StartWorker{index, ip, *start_at});
      }
    }
    run.start_issued_at = start_at;

    // ---- results: the kept merge of final results, then this pass's answers,
    // folded as they come (exact in any order: RunResult::merge)
    std::vector<std::string> problems;
    std::vector<std::string> kept_problems;
    WorkerResults kept = kept_merge(o, kept_problems);
    if (kept_results_taken(o)) {
      // Made by someone else (or its owner was changed): a forged merge
      // must never reach the status, nor may the run write over it.
      failure =
          RunFailure{Reason::ObjectNameTaken,
                     "the name of the results ConfigMap is taken: ConfigMap \"" +
                         o.kept_results->name + "\" exists and is not controlled by this LoadTest"};
    } else if (!kept_problems.empty()) {
      // Writing over it would lose the workers it holds, who may have exited.
      failure = RunFailure{Reason::ResultsUnreadable,
                           "the kept results cannot be read: " + kept_problems.front()};
    }
    std::vector<uint32_t> newly_kept;
    std::vector<std::pair<uint32_t, CollectedResult>> partial;
    std::vector<std::string> unreachable;
    std::vector<std::string> refusing;     // of those, the ones that refused the run's token
    std::optional<std::string> clock_off;  // a worker whose clock is too far off: how far
    for (const auto& [index, answer] : o.answers.by_worker) {
      if (index >= workers || kept.reports().contains(index)) continue;
      const auto pod = std::find_if(pods.begin(), pods.end(), [index = index](const PodView& p) {
        return p.index == index && !p.ip.empty();
      });
      const std::string who = "worker " + std::to_string(index);
      if (!answer.reached) {
        if (const auto since = o.unreachable_since.find(index);
            since != o.unreachable_since.end() &&
            o.now - since->second >= config.worker_unreachable_timeout) {
          unreachable.push_back(who + " (" + answer.error + ")");
          if (answer.token_refused) refusing.push_back(unreachable.back());
        }
        continue;
      }
      if (answer.other_run) continue;  // not ours to merge
      if (const auto off = clock_offset(answer);
          off && !clock_off && !answer.folded && std::chrono::abs(*off) > kMaxWorkerClockOffset) {
        clock_off = who + "'s clock is " +
                    fixed(std::abs(std::chrono::duration<double>(*off).count()), 1) + " s " +
                    (off->count() < 0 ? "behind" : "ahead of") + " the operator's";
      }
      if (!answer.unreadable.empty()) {
        problems.push_back(who + ": " + answer.unreadable);
      } else if (answer.folded) {
        newly_kept.push_back(index);
      } else if (answer.partial) {
        partial.emplace_back(index, *answer.partial);
        if (!answer.partial->started_at_ms && pod != pods.end() && pod->ready && start_at) {
          // Not started yet: the barrier is idempotent, so sending it again
          // is safe and covers a start lost to a restart.
          out.actions.push_back(StartWorker{index, pod->ip, *start_at});
        }
      }
    }
    // The pass folded the final results as they arrived; they join the kept
    // merge here (exact in any order: RunResult::merge).
    if (!newly_kept.empty()) {
      try {
        if (!kept.absorb(o.answers.finals)) {
          problems.push_back("this pass's results are not of this Job's workers; not kept");
          newly_kept.clear();
        }
      } catch (const std::invalid_argument& e) {
        problems.push_back(std::string("this pass's results do not merge with the kept ones: ") +
                           e.what());
        newly_kept.clear();
      }
    }
    if (!newly_kept.empty() && !failure) {
      json data = kept_results_data(kept, uid);
      const std::size_t size = config_map_data_size(data);
      if (o.kept_results) {
        // Written as a merge patch: the previous format's keys go (null).
        for (const std::string& key : legacy_result_keys(o.kept_results->data)) {
          data[key] = nullptr;
        }
      }
      if (size > kConfigMapDataLimit) {
        failure = RunFailure{
            Reason::ResultsTooLarge,
            "the merged result of " + std::to_string(kept.reports().size()) + " worker(s) is " +
                std::to_string(size) + " bytes, over the " + std::to_string(kConfigMapDataLimit) +
                " bytes a ConfigMap may hold; fewer stages or named requests keep it smaller"};
      } else {
        // Kept before the workers may exit: a final result is never held in
        // one place only.
        const std::string config_map = results_config_map_name(name, uid);
        const std::string kept_version =
            o.kept_results ? o.kept_results->resource_version : std::string();
        out.actions.push_back(KeepResults{config_map, results_config_map(o.loadtest, config_map),
                                          kept_version, std::move(data), newly_kept});
        for (const uint32_t index : newly_kept) {
          const auto pod = std::find_if(pods.begin(), pods.end(), [&](const PodView& p) {
            return p.index == index && !p.ip.empty();
          });
          finish_kept.push_back(FinishWorker{index, pod == pods.end() ? "" : pod->ip});
          finishing.insert(index);
        }
      }
    }
    for (const auto& [index, collected] : partial)
      running_done.push_back(collected.run.result.requests);
    run.results = std::move(kept);
    for (auto& [index, collected] : partial) run.results.fold(index, std::move(collected));

    // ---- deadlines
    const auto final_ok = static_cast<uint32_t>(std::count_if(
        run.results.reports().begin(), run.results.reports().end(),
        [](const auto& entry) { return entry.second.finished && entry.second.error.empty(); }));
    if (!failure && clock_off && final_ok < workers) {
      // The workers start at a wall-clock barrier (start-at): a worker whose
      // clock is off starts that much early or late, or refuses a barrier
      // more than 10 minutes from its clock; said now, not as a run that
      // never ends.
      failure = RunFailure{Reason::WorkerClockSkew,
                           *clock_off + " (more than " +
                               std::to_string(kMaxWorkerClockOffset.count() / 1000) +
                               " s): the workers start together at a wall-clock time, so it "
                               "would start out of step; synchronize the nodes' clocks (NTP)"};
    }
    if (!failure && !refusing.empty()) {
      // It answered, so no network is in the way: the key the token is
      // derived from is not the one the run was started with.
      failure = RunFailure{
          Reason::WorkerTokenRefused,
          std::to_string(refusing.size()) + " worker(s) refused the operator's token for " +
              format_duration(config.worker_unreachable_timeout) + ": " + refusing.front() +
              "; the run was started by an operator with another worker token key (every "
              "operator process must read one key: the Secret of --worker-token-key-secret, "
              "kubeload-worker-token-key by default, or --worker-token-key-file; deleting that "
              "Secret makes a new key)"};
    }
    if (!failure && !unreachable.empty()) {
      failure = RunFailure{
          Reason::WorkersUnreachable,
          "no answer from " + std::to_string(unreachable.size()) + " worker(s) for " +
              format_duration(config.worker_unreachable_timeout) + ": " + unreachable.front() +
              "; the operator must reach every worker pod on TCP port " +
              std::to_string(config.worker_port) +
              " (check NetworkPolicy, service mesh, firewall)"};
    }
    if (start_at) {
      out.run_deadline =
          *start_at + std::chrono::duration_cast<Timestamp::duration>(run_time_bound(spec));
    }
    if (!failure && out.run_deadline && final_ok < workers && o.now > *out.run_deadline) {
      failure = RunFailure{Reason::RunDeadlineExceeded,
                           "the run did not end within " + format_duration(run_time_bound(spec)) +
                               " of its start (spec.timeouts.run); " + std::to_string(final_ok) +
                               " of " + std::to_string(workers) + " workers finished"};
    }
    out.warnings = std::move(problems);

    // ---- the baseline, looked up once, when the result is final
    if (!failure && spec.baseline && final_ok >= workers && workers > 0 && !o.baseline_looked_up) {
      // Never without the comparison: nothing is kept or written until the
      // baseline was read (lookups_for asks for it in this very case).
      out.status = current;
      out.actions.clear();
      out.requeue_after = kPollForLookup;
      return out;
    }
  }

  out.status = compute_status(o, run, o.now);
  const TargetUsageStep target =
      plan_target_usage(current, out.status, o.parsed, config, o.target_measurement, o.now);
  // A measurement due but not read in this pass (the status turned final in
  // it) is read on the next.
  const std::optional<milliseconds> target_again =
      target.measure ? std::optional(kPollForLookup) : target.requeue_after;
  const bool shared_again = plan_shared_target(
      current, out.status, uid, recorded_addresses,
      o.other_runs_looked_up ? std::optional(o.other_runs) : std::nullopt, o.now);
  plan_generator_saturation(current, out.status, run.results.reports(), workers, o.now);
  if (valid) plan_result_record(o, current, run.results.merged(), config, out);
  if (status_changed(current, out.status)) {
    out.actions.push_back(WriteStatus{out.status, metadata.resource_version});
  }
  if (out.status.phase != current.phase) {
    const std::string& reason = out.status.reason;
    const std::string phase(out.status.phase ? to_string(*out.status.phase) : "");
    out.actions.push_back(RecordEvent{out.status.phase == Phase::Failed ? "Warning" : "Normal",
                                      reason.empty() ? phase : reason, out.status.message});
  }
  if (!current.phase && !o.job) {
    // First sight: the status (Pending, Reconciling) goes out before anything
    // is created, so no tool reads a LoadTest without a status of ours as done.
    std::stable_partition(out.actions.begin(), out.actions.end(), [](const Action& action) {
      return std::holds_alternative<WriteStatus>(action) ||
             std::holds_alternative<RecordEvent>(action);
    });
  }

  out.actions.insert(out.actions.end(), finish_kept.begin(), finish_kept.end());
  if (out.status.final()) {
    // After the final status is stored (the executor stops at a failed
    // write): the workers may exit, and the Job goes per the cleanup policy.
    for (const PodView& pod : pods) {
      if (!pod.index || pod.ip.empty() || pod.phase != "Running" || pod.deleting) continue;
      if (finishing.count(*pod.index) != 0) continue;
      out.actions.push_back(FinishWorker{*pod.index, pod.ip});
    }
    if (job && valid) {
      const bool succeeded =
          out.status.phase == Phase::Succeeded && out.status.verdict != Verdict::Fail;
      const bool remove = spec.cleanup == CleanupPolicy::Always ||
                          (spec.cleanup == CleanupPolicy::OnSuccess && succeeded);
      if (remove && !job->deleting) {
        out.actions.push_back(DeleteJob{job->name, job->uid});
      } else if (!remove && out.status.phase == Phase::Failed && !job->failed && !job->complete &&
                 !job->deleting) {
        out.actions.push_back(EndJob{job->name});
      }
    }
    if (valid) plan_retention(o, current, out);
    if (target_again) {
      look_again_within(out, *target_again);
    }
    if (shared_again) look_again_within(out, kPollForLookup);
    return out;
  }

  if (waiting_for_old_job) {
    out.requeue_after = kPollWhileStarting;
  } else if (waiting_for_lookup) {
    out.requeue_after = kPollForLookup;
  } else if (waiting_for_named_object) {
    // Nothing watched tells of the Secret's or Service's creation: look again, and at
    // the deadline.
    out.requeue_after = kPollWhileStarting;
    if (const auto deadline = start_deadline(o)) {
      const auto until = std::chrono::duration_cast<milliseconds>(*deadline - o.now);
      out.requeue_after = std::clamp<milliseconds>(until + 1ms, 100ms, kPollWhileStarting);
    }
  } else if (run.start_issued_at) {
    out.requeue_after = running_requeue(valid ? &spec : nullptr, workers, *run.start_issued_at,
                                        o.now, running_done);
  } else if (job) {
    out.requeue_after = kPollWhileStarting;
    if (const auto deadline = start_deadline(o)) {
      const auto until = std::chrono::duration_cast<milliseconds>(*deadline - o.now);
      out.requeue_after = std::clamp<milliseconds>(until, 100ms, kPollWhileStarting);
    }
  } else {
    out.requeue_after = kPollOtherwise;
  }
  return out;
}

milliseconds requeue_delay(milliseconds requeue_after, Timestamp observed_at, Timestamp now) {
  const auto spent = std::chrono::ceil<milliseconds>(now - observed_at);
  return std::max(milliseconds(0), requeue_after - std::max(spent, milliseconds(0)));
}

std::size_t worker_calls_at(const std::vector<Action>& actions, std::size_t first) {
  if (first >= actions.size()) return 0;
  const std::size_t kind = actions[first].index();
  if (!std::holds_alternative<StartWorker>(actions[first]) &&
      !std::holds_alternative<FinishWorker>(actions[first])) {
    return 0;
  }
  std::size_t end = first;
  while (end < actions.size() && actions[end].index() == kind) ++end;
  return end - first;
}

}  // namespace kubeload::controller
