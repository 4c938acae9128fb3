#include "operator/controller.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <mutex>
#include <span>
#include <stdexcept>
#include <type_traits>

#include "kubeload/json_access.hpp"
#include "kubeload/names.hpp"
#include "kubeload/spec_in_cluster.hpp"
#include "operator/bounded_parallel.hpp"
#include "operator/experiment_plan.hpp"
#include "operator/job_builder.hpp"
#include "operator/search_plan.hpp"
#include "operator/test_history.hpp"
#include "operator/worker_token.hpp"

namespace kubeload::controller {
namespace {

using json_access::member;
using json_access::text;
using nlohmann::json;

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

}  // namespace

json status_patch(const json& current, const json& next, const std::string& resource_version) {
  json status = next;
  if (current.is_object()) {
    for (const auto& [key, value] : current.items()) {
      if (!next.contains(key)) status[key] = nullptr;
    }
  }
  json patch = {{"status", status}};
  if (!resource_version.empty()) patch["metadata"]["resourceVersion"] = resource_version;
  return patch;
}

Reconciler::Reconciler(kube::Client& client, const kube::ListWatch& loadtests,
                       const kube::ListWatch& jobs, const kube::ListWatch& pods,
                       OperatorConfig config, const WorkerClient& workers, Logger& log,
                       OperatorMetrics& metrics, ClockFn clock, MayActFn may_act)
    : client_(client),
      loadtests_(loadtests),
      jobs_(jobs),
      pods_(pods),
      config_(std::move(config)),
      workers_(workers),
      log_(log),
      metrics_(metrics),
      clock_(std::move(clock)),
      may_act_(std::move(may_act)),
      result_budget_(config_.worker_result_budget_bytes) {
  if (!config_.prometheus_url.empty()) prometheus_.emplace(config_.prometheus_url);
}

std::optional<std::string> owning_loadtest(const json& object, const kube::ListWatch* jobs) {
  const std::string namespace_ = string_at(object, {"metadata", "namespace"});
  auto owner_of_kind = [&](const json& o, std::string_view kind) -> std::optional<std::string> {
    const json& owners = field(o, {"metadata", "ownerReferences"});
    if (!owners.is_array()) return std::nullopt;
    for (const json& owner : owners) {
      if (owner.value("kind", "") == kind) return owner.value("name", "");
    }
    return std::nullopt;
  };
  // List items carry no kind, so the owner references tell a Job from a Pod.
  if (auto name = owner_of_kind(object, api::kKind)) return namespace_ + "/" + *name;
  auto job_name = owner_of_kind(object, "Job");
  if (!job_name || jobs == nullptr) return std::nullopt;
  const auto job = jobs->get(namespace_ + "/" + *job_name);
  if (!job) return std::nullopt;
  if (auto name = owner_of_kind(*job, api::kKind)) return namespace_ + "/" + *name;
  return std::nullopt;
}

std::optional<std::string> experiment_to_wake(kube::WatchEventType type, const json& loadtest) {
  if (type == kube::WatchEventType::Modified &&
      !api::is_final_phase(string_at(loadtest, {"status", "phase"}))) {
    return std::nullopt;
  }
  if (string_at(loadtest, {"metadata", "labels", std::string(api::kExperimentLabel).c_str()})
          .empty() &&
      string_at(loadtest, {"metadata", "labels", std::string(api::kSearchLabel).c_str()}).empty()) {
    return std::nullopt;
  }
  const json& owners = field(loadtest, {"metadata", "ownerReferences"});
  if (!owners.is_array()) return std::nullopt;
  for (const json& owner : owners) {
    if (owner.value("kind", "") == api::kKind && owner.value("controller", false)) {
      return string_at(loadtest, {"metadata", "namespace"}) + "/" + owner.value("name", "");
    }
  }
  return std::nullopt;
}

std::optional<Observation> Reconciler::observe(const std::string& namespace_,
                                               const std::string& name) {
  kube::Response fetched = client_.get(kube::resources::loadtests(namespace_), name);
  if (fetched.is_not_found()) return std::nullopt;
  if (!fetched.ok()) {
    throw std::runtime_error("reading " + namespace_ + "/" + name + ": " + fetched.describe());
  }
  Observation observed;
  observed.parsed = parse_loadtest_for_cluster(fetched.body.dump());
  observed.loadtest = fetched.body.get<api::LoadTest>();
  observed.now = clock_();
  // reconcile_experiment lists their rounds or steps
  if (is_experiment(observed.parsed) || is_search(observed.parsed)) return observed;
  if (auto job = jobs_.get(namespace_ + "/" + worker_job_name(name))) {
    observed.job = job_view(*job);
  }
  const std::string label = loadtest_label_value(name);
  for (auto& pod : pods_.items()) {
    if (string_at(*pod, {"metadata", "namespace"}) != namespace_) continue;
    if (string_at(*pod, {"metadata", "labels", std::string(kLoadTestLabel).c_str()}) != label) {
      continue;
    }
    observed.pods.push_back(pod_view(std::move(pod)));
  }
  const std::string uid = observed.loadtest.metadata.uid;
  if (const auto job = own_job(observed); job && job->start_at) {
    kube::Response kept =
        client_.get(kube::resources::configmaps(namespace_), results_config_map_name(name, uid));
    if (kept.ok()) {
      observed.kept_results = config_map_view(kept.body);
    } else if (!kept.is_not_found()) {
      throw std::runtime_error("reading the kept results of " + namespace_ + "/" + name + ": " +
                               kept.describe());
    }
  }
  ask_workers(uid, observed);
  {
    std::lock_guard lock(memory_mutex_);
    if (const auto refused = create_refused_.find(uid); refused != create_refused_.end()) {
      observed.create_refused = refused->second;
    }
    if (const auto record = records_.find(namespace_ + "/" + name);
        record != records_.end() && record->second.uid == uid) {
      observed.record_refused = record->second.refused;
      observed.history_pruned = record->second.pruned;
    }
  }
  const Lookups need = lookups_for(observed, config_);
  if (need.baseline) look_up_baseline(observed);
  if (need.history) look_up_history(observed);
  if (need.target) measure_target(*need.target, observed);
  if (need.target_service) look_up_target_service(*need.target_service, observed);
  if (!need.secrets.empty()) look_up_secrets(need.secrets, observed);
  if (!need.config_maps.empty()) look_up_config_maps(need.config_maps, observed);
  if (need.other_runs) look_up_other_runs(observed);
  return observed;
}

void Reconciler::look_up_other_runs(Observation& observed) {
  observed.other_runs_looked_up = true;
  for (const auto& loadtest : loadtests_.items()) {
    observed.other_runs.push_back(other_run_view(*loadtest));
  }
}

void Reconciler::look_up_secrets(const std::set<std::string>& names, Observation& observed) {
  observed.secrets_looked_up = true;
  const std::string& namespace_ = observed.loadtest.metadata.namespace_;
  for (const std::string& name : names) {
    // Metadata only: the operator has no use for a Secret's data, so it
    // never asks for it (the kubelet reads it into the worker pods).
    const kube::Response read = client_.get_metadata(kube::resources::secrets(namespace_), name);
    SecretMetadataView view;
    if (read.ok()) {
      view = secret_metadata_view(read.body);
    } else if (read.http_status == 403) {
      view.unreadable = read.describe();
    } else if (!read.is_not_found()) {
      throw std::runtime_error("reading the metadata of Secret " + namespace_ + "/" + name + ": " +
                               read.describe());
    }
    observed.secrets[name] = std::move(view);
  }
}

void Reconciler::look_up_config_maps(const std::set<std::string>& names, Observation& observed) {
  observed.config_maps_looked_up = true;
  const std::string& namespace_ = observed.loadtest.metadata.namespace_;
  for (const std::string& name : names) {
    // The whole object: its keys are what the decision needs, and the
    // kubelet will read the data anyway (at most 1 MiB, once, before the
    // Job exists).
    const kube::Response read = client_.get(kube::resources::configmaps(namespace_), name);
    ConfigMapKeysView view;
    if (read.ok()) {
      view = config_map_keys_view(read.body);
    } else if (read.http_status == 403) {
      view.unreadable = read.describe();
    } else if (!read.is_not_found()) {
      throw std::runtime_error("reading ConfigMap " + namespace_ + "/" + name + ": " +
                               read.describe());
    }
    observed.config_maps[name] = std::move(view);
  }
}

void Reconciler::look_up_target_service(const ClusterHost& host, Observation& observed) {
  observed.target_service_looked_up = true;
  kube::Response service = client_.get(kube::resources::services(host.namespace_), host.name);
  std::optional<json> read;
  json slices = json::object();
  std::string unreadable;
  if (service.ok()) {
    read = std::move(service.body);
    if (text(member(member(*read, "spec"), "type")) != "ExternalName") {
      kube::ListOptions options;
      options.label_selector = "kubernetes.io/service-name=" + host.name;
      kube::Response listed =
          client_.list(kube::resources::endpointslices(host.namespace_), options);
      if (listed.ok()) {
        slices = std::move(listed.body);
      } else if (listed.http_status == 403) {
        unreadable = "listing its EndpointSlices: " + listed.describe();
      } else {
        throw std::runtime_error("listing the EndpointSlices of " + host.namespace_ + "/" +
                                 host.name + ": " + listed.describe());
      }
    }
  } else if (service.http_status == 403) {
    unreadable = service.describe();
  } else if (!service.is_not_found()) {
    throw std::runtime_error("reading the target Service " + host.namespace_ + "/" + host.name +
                             ": " + service.describe());
  }
  observed.target_service =
      target_service_view(host, unreadable.empty() ? read : std::nullopt, slices);
  observed.target_service->unreadable = std::move(unreadable);
}

void Reconciler::ask_workers(const std::string& uid, Observation& observed) {
  const std::map<uint32_t, std::string> ask = workers_to_ask(observed);
  const std::vector<std::pair<uint32_t, std::string>> asked(ask.begin(), ask.end());
  // Each answer is digested and folded as it arrives, so the pass holds the
  // documents in flight and one merge, whatever the worker count.
  observed.answers = begin_pass(observed);
  const std::string run_uid = observed.answers.uid;
  std::mutex taking;
  // What a worker of this spec can answer; never more held at once than the
  // budget: each call leases what it holds (WorkerClient::result), so a call
  // held open until its worker's run ends takes little of it.
  const api::ResultLimits limits = api::result_limits(observed.parsed.spec);
  // One deadline for the whole pass: a worker that does not end in time
  // costs the calls still queued no wait of their own.
  const std::optional<Timestamp> wait_until = result_wait_until(observed);
  for_each_bounded(asked.size(), config_.worker_calls_in_flight, [&](std::size_t i) {
    std::string error;
    bool token_refused = false;
    ByteBudget::Lease lease = result_budget_.reserve(kResultCallBytes);
    const auto wait =
        wait_until ? std::max(std::chrono::milliseconds(0),
                              std::chrono::floor<std::chrono::milliseconds>(*wait_until - clock_()))
                   : std::chrono::milliseconds(0);
    std::optional<json> document = workers_.result(worker_address(asked[i].second, uid), limits,
                                                   error, &token_refused, wait, &lease);
    DigestedAnswer digested = digest_answer(run_uid, document, std::move(error), token_refused);
    digested.answer.answered_at = clock_();
    document.reset();
    std::lock_guard lock(taking);
    take_answer(observed.answers, asked[i].first, std::move(digested));
  });
  std::lock_guard lock(memory_mutex_);
  if (ask.empty()) {
    unreachable_since_.erase(uid);
    return;
  }
  auto& since = unreachable_since_[uid];
  for (const auto& [index, answer] : observed.answers.by_worker) {
    if (answer.reached) {
      since.erase(index);
    } else {
      since.emplace(index, observed.now);
    }
  }
  observed.unreachable_since = since;
}

WorkerAddress Reconciler::worker_address(const std::string& ip, const std::string& uid) const {
  return WorkerAddress{ip, config_.worker_port, worker_token(config_.worker_token_key, uid)};
}

namespace {

// The label selector of a run's test's records: its kubeload.dev/test label,
// or for a run without one, its LoadTest's name.
std::string history_selector(const api::ObjectMeta& loadtest) {
  const auto test = loadtest.labels.find(std::string(kTestLabel));
  if (test != loadtest.labels.end()) return std::string(kTestLabel) + "=" + test->second;
  return std::string(kLoadTestLabel) + "=" + loadtest_label_value(loadtest.name) + ",!" +
         std::string(kTestLabel);
}

}  // namespace

void Reconciler::look_up_baseline(Observation& observed) {
  observed.baseline_looked_up = true;
  const LoadTestSpec& spec = observed.parsed.spec;
  if (!spec.baseline) return;
  const BaselineSpec& baseline = *spec.baseline;
  const api::ObjectMeta& self = observed.loadtest.metadata;
  const kube::ResourceRef records = kube::resources::loadtestresults(self.namespace_);
  std::vector<api::LoadTestResult> candidates;
  if (!baseline.result_name.empty()) {
    kube::Response found = client_.get(records, baseline.result_name);
    if (found.ok()) {
      candidates.push_back(found.body.get<api::LoadTestResult>());
    } else if (!found.is_not_found()) {
      throw std::runtime_error("reading the baseline record " + baseline.result_name + ": " +
                               found.describe());
    }
  } else {
    kube::ListOptions options;
    if (!baseline.load_test_name.empty()) {
      options.label_selector =
          std::string(kLoadTestLabel) + "=" + loadtest_label_value(baseline.load_test_name);
    } else {
      const auto test = spec.labels.find(std::string(kTestLabel));
      if (test == spec.labels.end()) return;  // refused by the spec's rules
      options.label_selector = std::string(kTestLabel) + "=" + test->second + "," +
                               std::string(api::kVerdictLabel) + "=" +
                               api::name(api::Verdict::Pass);
    }
    kube::Response listed = client_.list(records, options);
    if (!listed.ok()) {
      throw std::runtime_error("listing the records for the baseline (" + options.label_selector +
                               "): " + listed.describe());
    }
    candidates = result_records(listed.body);
  }
  for (const std::size_t index : baseline_records(candidates, baseline, self.uid)) {
    observed.baseline_records.push_back(std::move(candidates[index]));
  }
}

void Reconciler::look_up_history(Observation& observed) {
  observed.history_looked_up = true;
  const api::ObjectMeta& self = observed.loadtest.metadata;
  kube::ListOptions options;
  options.label_selector = history_selector(self);
  kube::Response listed = client_.list(kube::resources::loadtestresults(self.namespace_), options);
  if (!listed.ok()) {
    throw std::runtime_error("listing the records of " + options.label_selector + ": " +
                             listed.describe());
  }
  observed.history = result_records(listed.body);
  kube::Response loadtests = client_.list(kube::resources::loadtests(self.namespace_), {});
  if (!loadtests.ok()) {
    throw std::runtime_error("listing the LoadTests of " + self.namespace_ + ": " +
                             loadtests.describe());
  }
  std::vector<api::LoadTest> runs;
  for (const json& item : member(loadtests.body, "items"))
    runs.push_back(item.get<api::LoadTest>());
  const auto test = self.labels.find(std::string(kTestLabel));
  observed.pinned_records = pinned_records(
      runs, observed.history, test == self.labels.end() ? std::string() : test->second);
}

void Reconciler::measure_target(const TargetRequest& request, Observation& observed) {
  const std::string& namespace_ = request.namespace_;
  TargetFindings found;
  for (;;) {
    TargetStep step = judge_target(request, found, config_.prometheus_url);
    if (!step.read) {
      observed.target_measurement = std::move(step.measurement);
      return;
    }
    switch (*step.read) {
      case TargetRead::Service: {
        kube::Response read = client_.get(kube::resources::services(namespace_), request.service);
        if (!read.ok() && !read.is_not_found() && read.http_status != 403) {
          throw std::runtime_error("reading the target Service " + namespace_ + "/" +
                                   request.service + ": " + read.describe());
        }
        found.service_status = read.http_status;
        found.service_error = read.describe();
        for (const auto& [key, value] : member(member(read.body, "spec"), "selector").items()) {
          if (value.is_string()) found.service_selector[key] = value.get<std::string>();
        }
        break;
      }
      case TargetRead::Pods: {
        kube::ListOptions options;
        options.label_selector = step.measurement.selector;
        kube::Response listed = client_.list(kube::resources::pods(namespace_), options);
        if (!listed.ok() && listed.http_status != 403) {
          throw std::runtime_error("listing the target pods (" + options.label_selector + ") in " +
                                   namespace_ + ": " + listed.describe());
        }
        found.pods_status = listed.http_status;
        found.pods_error = listed.describe();
        const json& items = member(listed.body, "items");
        if (items.is_array()) {
          for (const json& pod : items) {
            found.pods.push_back(string_at(pod, {"metadata", "name"}));
          }
        }
        break;
      }
      case TargetRead::Usage: {
        found.usage_read = true;
        const std::string matcher = container_matcher(namespace_, step.measurement.pods);
        const auto usage_over = [&](const UsageWindow& window) {
          const UsageQueries queries =
              usage_queries(matcher, window, config_.prometheus_scrape_interval);
          Usage usage;
          usage.cpu_mean = prometheus_->scalar(queries.cpu_mean, queries.at);
          if (!queries.cpu_max.empty()) {
            usage.cpu_max = prometheus_->scalar(queries.cpu_max, queries.at);
          }
          usage.memory_max_bytes = prometheus_->scalar(queries.memory_max, queries.at);
          if (usage.cpu_mean) {
            // count() of nothing is no sample: no container started in the window.
            const std::optional<double> started = prometheus_->scalar(queries.restarts, queries.at);
            usage.restarts = started ? static_cast<uint64_t>(std::llround(*started)) : 0;
          }
          return usage;
        };
        try {
          found.run = usage_over(request.windows.run);
          if (found.run.cpu_mean) {
            for (const UsageWindow& stage : request.windows.stages) {
              found.stages.push_back(usage_over(stage));
            }
          }
        } catch (const PrometheusError& e) {
          found.prometheus_error = e.what();
          found.prometheus_transient = e.transient();
        }
        break;
      }
    }
  }
}

void Reconciler::call_workers(std::span<const Action> calls, const std::string& uid,
                              const std::string& where) {
  std::vector<std::string> errors(calls.size());
  for_each_bounded(calls.size(), config_.worker_calls_in_flight, [&](std::size_t i) {
    if (const auto* start = std::get_if<StartWorker>(&calls[i])) {
      if (!workers_.start(worker_address(start->ip, uid), unix_ms(start->at), errors[i]) &&
          errors[i].empty()) {
        errors[i] = "refused";
      }
    } else if (const auto* finish = std::get_if<FinishWorker>(&calls[i])) {
      // A worker that does not hear it exits after its linger; nothing is lost.
      std::string ignored;
      workers_.finish(worker_address(finish->ip, uid), ignored);
    }
  });
  for (std::size_t i = 0; i < calls.size(); ++i) {
    if (errors[i].empty()) continue;
    log_.warn("worker did not take the start", {{"loadtest", where},
                                                {"worker", std::get<StartWorker>(calls[i]).index},
                                                {"error", errors[i]}});
  }
}

bool Reconciler::act(const ReconcilePlan& plan, Observation& observed) {
  const json loadtest = observed.loadtest;  // the involved object of its Events
  const std::string& namespace_ = observed.loadtest.metadata.namespace_;
  const std::string& name = observed.loadtest.metadata.name;
  const std::string where = namespace_ + "/" + name;
  const std::string& uid = observed.loadtest.metadata.uid;
  for (const std::string& warning : plan.warnings) {
    log_.warn("ignoring a result", {{"loadtest", where}, {"detail", warning}});
  }
  for (std::size_t next = 0; next < plan.actions.size(); ++next) {
    if (may_act_ && !may_act_()) {
      throw std::runtime_error("not the leader any more; leaving " + where + " to the new one");
    }
    // Consecutive starts or finishes go to their workers concurrently: one
    // slow or unreachable worker costs the pass one call timeout, and the
    // others still hear the start barrier before it passes.
    if (const std::size_t calls = worker_calls_at(plan.actions, next); calls > 0) {
      call_workers(std::span(plan.actions).subspan(next, calls), uid, where);
      next += calls - 1;
      continue;
    }
    const Action& action = plan.actions[next];
    bool rejected = false;
    std::visit(
        [&](const auto& a) {
          using A = std::decay_t<decltype(a)>;
          // Objects the run owns that are the same whoever creates them:
          // one that exists already (409) is this run's.
          // A refusal a retry would not fix is remembered for the next
          // pass, whose plan fails the run with the API server's message;
          // one that exists already (409) is this run's.
          const auto refuse = [&](CreateRefusal refusal) {
            std::lock_guard lock(memory_mutex_);
            create_refused_[uid] = std::move(refusal);
            rejected = true;
            return false;
          };
          // check_owner: an object of that name that exists (409) is this
          // run's only when the LoadTest is its controller.
          const auto create_once = [&](const kube::ResourceRef& resource, const json& object,
                                       CreateRefusal::Object what, bool check_owner) {
            const std::string named(describe(what));
            kube::Response created = client_.create(resource, object);
            if (created.ok()) return true;
            if (created.is_already_exists()) {
              if (!check_owner) return false;
              const std::string object_name = string_at(object, {"metadata", "name"});
              kube::Response existing = client_.get(resource, object_name);
              if (!existing.ok()) {
                throw std::runtime_error("reading " + named + " " + object_name + " of " + where +
                                         ": " + existing.describe());
              }
              const std::string controller = controller_uid(existing.body);
              if (controller == uid) return false;
              return refuse(CreateRefusal{
                  what,
                  "\"" + object_name + "\" exists and is not this run's (" +
                      (controller.empty() ? std::string("it has no controller")
                                          : "its controller is " + controller) +
                      ", this LoadTest is " + uid + "); delete it or rename the LoadTest",
                  true});
            }
            if (is_rejection(created.http_status)) {
              return refuse(
                  CreateRefusal{what, created.error ? created.error->message : created.describe()});
            }
            throw std::runtime_error("creating " + named + " of " + where + ": " +
                                     created.describe());
          };
          if constexpr (std::is_same_v<A, CreateNetworkPolicy>) {
            create_once(kube::resources::networkpolicies(namespace_), a.policy,
                        CreateRefusal::Object::NetworkPolicy, true);
          } else if constexpr (std::is_same_v<A, CreateTokenSecret>) {
            create_once(kube::resources::secrets(namespace_), a.secret,
                        CreateRefusal::Object::TokenSecret, true);
          } else if constexpr (std::is_same_v<A, CreateSpecConfigMap>) {
            create_once(kube::resources::configmaps(namespace_), a.config_map,
                        CreateRefusal::Object::SpecConfigMap, true);
          } else if constexpr (std::is_same_v<A, CreateJob>) {
            // A Job of that name is judged from the observation (own_job,
            // JobNameTaken), which reads it anyway.
            if (create_once(kube::resources::jobs(namespace_), a.job, CreateRefusal::Object::Job,
                            false)) {
              log_.info("created worker job",
                        {{"loadtest", where}, {"job", string_at(a.job, {"metadata", "name"})}});
            }
          } else if constexpr (std::is_same_v<A, RecordStartAt>) {
            const json patch = {
                {"metadata",
                 {{"annotations",
                   {{std::string(kStartAtAnnotation), std::to_string(unix_ms(a.at))}}}}}};
            kube::Response patched =
                client_.merge_patch(kube::resources::jobs(namespace_), a.job_name, patch);
            if (!patched.ok()) {
              throw std::runtime_error("annotating job " + a.job_name + ": " + patched.describe());
            }
            log_.info("starting workers", {{"loadtest", where}, {"startAtMs", unix_ms(a.at)}});
          } else if constexpr (std::is_same_v<A, KeepResults>) {
            const kube::ResourceRef configmaps = kube::resources::configmaps(namespace_);
            kube::Response kept;
            if (a.resource_version.empty()) {
              json object = a.config_map_object;
              object["data"] = a.data;
              kept = client_.create(configmaps, object);
            } else {
              const json patch = {{"metadata", {{"resourceVersion", a.resource_version}}},
                                  {"data", a.data}};
              kept = client_.merge_patch(configmaps, a.config_map, patch);
            }
            if (!kept.ok()) {
              // A conflict (another pass wrote first) is observed again, like
              // any failure: the workers stay until their results are kept.
              throw std::runtime_error("keeping the results of " + where + " in " + a.config_map +
                                       ": " + kept.describe());
            }
          } else if constexpr (std::is_same_v<A, WriteStatus>) {
            kube::Response patched = client_.patch_status(
                kube::resources::loadtests(namespace_), name,
                status_patch(observed.loadtest.status, a.status, a.resource_version));
            if (patched.is_not_found()) return;  // deleted meanwhile
            if (!patched.ok()) {
              throw std::runtime_error("writing the status of " + where + ": " +
                                       patched.describe());
            }
          } else if constexpr (std::is_same_v<A, RecordEvent>) {
            log_.info("phase", {{"loadtest", where},
                                {"phase", plan.status.phase ? to_string(*plan.status.phase)
                                                            : std::string_view()},
                                {"reason", a.reason},
                                {"message", a.message}});
            client_.record_event(loadtest, a.type, a.reason, a.message);
          } else if constexpr (std::is_same_v<A, CreateResultRecord>) {
            const std::string& record = a.record.metadata.name;
            kube::Response created =
                client_.create(kube::resources::loadtestresults(namespace_), json(a.record));
            if (created.ok()) {
              log_.info("recorded the run", {{"loadtest", where}, {"record", record}});
            } else if (!created.is_already_exists()) {
              // The record's name is the run's own (result_record_name): one
              // that exists was written by an earlier pass.
              if (!is_rejection(created.http_status)) {
                throw std::runtime_error("writing the record " + record + " of " + where + ": " +
                                         created.describe());
              }
              std::lock_guard lock(memory_mutex_);
              records_[namespace_ + "/" + name] = {
                  uid, created.error ? created.error->message : created.describe(), false};
              rejected = true;
            }
          } else if constexpr (std::is_same_v<A, UpdateResultRecord>) {
            kube::Response patched = client_.merge_patch(
                kube::resources::loadtestresults(namespace_), a.name, json{{"run", a.run}});
            if (!patched.ok() && !patched.is_not_found()) {
              throw std::runtime_error("updating the record " + a.name + " of " + where + ": " +
                                       patched.describe());
            }
          } else if constexpr (std::is_same_v<A, PruneResultRecords>) {
            for (const std::string& record : a.names) {
              kube::Response deleted =
                  client_.remove(kube::resources::loadtestresults(namespace_), record, {});
              if (!deleted.ok() && !deleted.is_not_found()) {
                throw std::runtime_error("deleting the record " + record + " (history of " + where +
                                         "): " + deleted.describe());
              }
            }
            if (!a.names.empty()) {
              log_.info("pruned the test's history",
                        {{"loadtest", where}, {"records", static_cast<int64_t>(a.names.size())}});
            }
            std::lock_guard lock(memory_mutex_);
            RecordMemory& memory = records_[namespace_ + "/" + name];
            if (memory.uid != uid) memory = {uid, std::nullopt, false};
            memory.pruned = true;
          } else if constexpr (std::is_same_v<A, DeleteJob>) {
            kube::DeleteOptions options;
            options.propagation = kube::Propagation::Background;
            options.precondition_uid = a.uid;
            kube::Response deleted =
                client_.remove(kube::resources::jobs(namespace_), a.name, options);
            if (!deleted.ok() && !deleted.is_not_found() && !deleted.is_conflict()) {
              throw std::runtime_error("deleting job " + a.name + ": " + deleted.describe());
            }
            log_.info("deleted worker job", {{"loadtest", where}, {"job", a.name}});
          } else if constexpr (std::is_same_v<A, EndJob>) {
            const json patch = {{"spec", {{"activeDeadlineSeconds", 1}}}};
            kube::Response patched =
                client_.merge_patch(kube::resources::jobs(namespace_), a.name, patch);
            if (!patched.ok() && !patched.is_not_found()) {
              throw std::runtime_error("ending job " + a.name + ": " + patched.describe());
            }
          } else if constexpr (std::is_same_v<A, DeleteLoadTest>) {
            kube::DeleteOptions options;
            options.precondition_uid = a.uid;
            kube::Response deleted =
                client_.remove(kube::resources::loadtests(namespace_), a.name, options);
            if (!deleted.ok() && !deleted.is_not_found() && !deleted.is_conflict()) {
              throw std::runtime_error("deleting " + where +
                                       " (ttlSecondsAfterFinished): " + deleted.describe());
            }
            log_.info("deleted a finished LoadTest (ttlSecondsAfterFinished)",
                      {{"loadtest", where}});
          }
        },
        action);
    if (rejected) return false;
  }
  return true;
}

ReconcileOutcome Reconciler::reconcile(const std::string& namespace_, const std::string& name) {
  std::optional<Observation> observed = observe(namespace_, name);
  if (!observed) {
    metrics_.forget_loadtest(namespace_, name);
    std::lock_guard lock(memory_mutex_);
    records_.erase(namespace_ + "/" + name);
    return {};  // deleted: its Job, pods and kept results go with it (owner references)
  }
  if (is_experiment(observed->parsed) || is_search(observed->parsed)) {
    return reconcile_experiment(*observed);
  }
  const ReconcilePlan planned = plan(*observed, config_);
  const bool acted = act(planned, *observed);
  const std::string& uid = observed->loadtest.metadata.uid;
  if (planned.status.final()) {
    std::lock_guard lock(memory_mutex_);
    create_refused_.erase(uid);
  }
  std::optional<double> run_deadline;
  if (planned.run_deadline) {
    run_deadline = std::chrono::duration<double>(planned.run_deadline->time_since_epoch()).count();
  }
  metrics_.observe_loadtest(observed->loadtest, planned.status, run_deadline);
  if (!acted) return {std::chrono::milliseconds(0)};  // a create was refused: say so now
  if (!planned.requeue_after) return {};
  return {requeue_delay(*planned.requeue_after, observed->now, clock_())};
}

ReconcileOutcome Reconciler::reconcile_experiment(const Observation& observed) {
  const api::ObjectMeta& meta = observed.loadtest.metadata;
  const std::string where = meta.namespace_ + "/" + meta.name;
  const bool search = is_search(observed.parsed);
  kube::ListOptions options;
  options.label_selector = std::string(search ? api::kSearchLabel : api::kExperimentLabel) + "=" +
                           loadtest_label_value(meta.name);
  kube::Response listed = client_.list(kube::resources::loadtests(meta.namespace_), options);
  if (!listed.ok()) {
    throw std::runtime_error("listing the LoadTests of " + where + ": " + listed.describe());
  }
  std::vector<RoundRun> runs;
  for (const json& item :
       field(listed.body, {"items"}).is_array() ? listed.body["items"] : json::array()) {
    RoundRun run;
    const api::LoadTest round = item.get<api::LoadTest>();
    run.name = round.metadata.name;
    run.deleting = round.metadata.deleting;
    run.status = round.status;
    const auto label = [&](std::string_view key) {
      const auto found = round.metadata.labels.find(std::string(key));
      return found == round.metadata.labels.end() ? std::string() : found->second;
    };
    run.variant = label(api::kVariantLabel);
    const std::string round_label = label(search ? api::kStepLabel : api::kRoundLabel);
    std::from_chars(round_label.data(), round_label.data() + round_label.size(), run.round);
    for (const char* load : {"rate", "connections"}) {
      if (const json& value = field(item, {"spec", "load", load}); value.is_number()) {
        run.value = value.get<double>();
      }
    }
    const json& owners = field(item, {"metadata", "ownerReferences"});
    for (const json& owner : owners.is_array() ? owners : json::array()) {
      if (owner.value("controller", false)) run.controller_uid = owner.value("uid", "");
    }
    runs.push_back(std::move(run));
  }
  std::optional<std::string> create_refused;
  {
    std::lock_guard lock(memory_mutex_);
    if (const auto refused = round_refused_.find(meta.uid); refused != round_refused_.end()) {
      create_refused = refused->second;
    }
  }
  ExperimentPlan planned;
  if (search) {
    SearchObservation searched{observed.loadtest, observed.parsed.spec,      std::move(runs),
                               observed.now,      std::move(create_refused), std::nullopt};
    if (observed.parsed.spec.search->over == SearchOver::rate) {
      searched.ceiling = config_.max_rate;
    } else if (config_.max_connections) {
      searched.ceiling = static_cast<double>(*config_.max_connections);
    }
    planned = plan_search(searched);
  } else {
    planned = plan_experiment({observed.loadtest, observed.parsed.spec, std::move(runs),
                               observed.now, std::move(create_refused)});
  }
  if (may_act_ && !may_act_()) return {};
  if (planned.create) {
    const std::string round = field(*planned.create, {"metadata", "name"}).get<std::string>();
    kube::Response created =
        client_.create(kube::resources::loadtests(meta.namespace_), *planned.create);
    if (created.ok()) {
      log_.info(search ? "started a step" : "started a round",
                {{search ? "search" : "experiment", where}, {"loadtest", round}});
    } else if (is_rejection(created.http_status) && !created.is_already_exists()) {
      std::lock_guard lock(memory_mutex_);
      round_refused_[meta.uid] = created.describe();
      return {std::chrono::milliseconds(0)};  // the next pass fails the experiment with it
    } else if (!created.is_already_exists()) {
      throw std::runtime_error("creating " + round + " of " + where + ": " + created.describe());
    }
  }
  for (const RecordEvent& event : planned.events) {
    log_.info("phase", {{"loadtest", where}, {"reason", event.reason}, {"message", event.message}});
    client_.record_event(json(observed.loadtest), event.type, event.reason, event.message);
  }
  if (planned.status != observed.loadtest.status) {
    kube::Response patched = client_.patch_status(
        kube::resources::loadtests(meta.namespace_), meta.name,
        status_patch(json(observed.loadtest.status), json(planned.status), meta.resource_version));
    if (!patched.is_not_found() && !patched.ok()) {
      throw std::runtime_error("writing the status of " + where + ": " + patched.describe());
    }
  }
  if (planned.status.final()) {
    std::lock_guard lock(memory_mutex_);
    round_refused_.erase(meta.uid);
  }
  metrics_.observe_loadtest(observed.loadtest, planned.status, std::nullopt);
  if (!planned.requeue_after) return {};
  return {requeue_delay(*planned.requeue_after, observed.now, clock_())};
}

}  // namespace kubeload::controller
