#include "operator/schedule_controller.hpp"

#include <stdexcept>
#include <type_traits>

#include "kubeload/api/meta.hpp"
#include "kubeload/json_access.hpp"
#include "operator/job_builder.hpp"

namespace kubeload::controller {
namespace {

using json_access::member;
using json_access::text;
using nlohmann::json;

}  // namespace

std::optional<std::string> owning_schedule(const json& loadtest) {
  const json& metadata = member(loadtest, "metadata");
  if (!member(member(metadata, "labels"), api::kScheduleLabel).is_string()) return std::nullopt;
  const json& owners = member(metadata, "ownerReferences");
  if (!owners.is_array()) return std::nullopt;
  for (const json& owner : owners) {
    if (text(member(owner, "kind")) == api::kScheduleKind &&
        member(owner, "controller") == json(true)) {
      return text(member(metadata, "namespace")) + "/" + text(member(owner, "name"));
    }
  }
  return std::nullopt;
}

std::optional<std::string> schedule_to_wake(kube::WatchEventType type, const json& loadtest) {
  if (type == kube::WatchEventType::Modified &&
      !api::is_final_phase(text(member(member(loadtest, "status"), "phase")))) {
    return std::nullopt;
  }
  return owning_schedule(loadtest);
}

ScheduleReconciler::ScheduleReconciler(kube::Client& client, Logger& log, ClockFn clock,
                                       MayActFn may_act)
    : client_(client), log_(log), clock_(std::move(clock)), may_act_(std::move(may_act)) {}

std::optional<ScheduleObservation> ScheduleReconciler::observe(const std::string& namespace_,
                                                               const std::string& name,
                                                               json& object) {
  kube::Response fetched = client_.get(kube::resources::loadtestschedules(namespace_), name);
  if (fetched.is_not_found()) return std::nullopt;
  if (!fetched.ok()) {
    throw std::runtime_error("reading schedule " + namespace_ + "/" + name + ": " +
                             fetched.describe());
  }
  object = std::move(fetched.body);
  ScheduleObservation observed;
  observed.schedule = object.get<api::LoadTestSchedule>();
  kube::ListOptions options;
  options.label_selector = std::string(api::kScheduleLabel) + "=" + loadtest_label_value(name);
  kube::Response listed = client_.list(kube::resources::loadtests(namespace_), options);
  if (!listed.ok()) {
    throw std::runtime_error("listing the runs of schedule " + namespace_ + "/" + name + ": " +
                             listed.describe());
  }
  if (const json& items = member(listed.body, "items"); items.is_array()) {
    for (const json& item : items) observed.runs.push_back(scheduled_run(item));
  }
  observed.now = clock_();
  return observed;
}

void ScheduleReconciler::act(const SchedulePlan& plan, const ScheduleObservation& observed,
                             const json& object) {
  const std::string& namespace_ = observed.schedule.metadata.namespace_;
  const std::string& name = observed.schedule.metadata.name;
  const std::string where = namespace_ + "/" + name;
  for (const ScheduleAction& action : plan.actions) {
    if (may_act_ && !may_act_()) {
      throw std::runtime_error("not the leader any more; leaving schedule " + where +
                               " to the new one");
    }
    std::visit(
        [&](const auto& a) {
          using A = std::decay_t<decltype(a)>;
          if constexpr (std::is_same_v<A, DeleteLoadTest>) {
            kube::DeleteOptions options;
            options.precondition_uid = a.uid;
            kube::Response deleted =
                client_.remove(kube::resources::loadtests(namespace_), a.name, options);
            if (!deleted.ok() && !deleted.is_not_found() && !deleted.is_conflict()) {
              throw std::runtime_error("deleting " + namespace_ + "/" + a.name +
                                       " (a run of schedule " + name + "): " + deleted.describe());
            }
            log_.info("deleted a run of a schedule", {{"schedule", where}, {"loadtest", a.name}});
          } else if constexpr (std::is_same_v<A, CreateScheduledRun>) {
            kube::Response created =
                client_.create(kube::resources::loadtests(namespace_), a.loadtest);
            if (!created.ok()) {
              // Refused (a quota, an admission webhook) or not reached: the
              // next pass tries the same tick again, while it is the latest.
              client_.record_event(object, "Warning", api::name(api::Reason::ObjectRejected),
                                   "creating the run for the tick at " + format_time(a.tick) +
                                       ": " + created.describe());
              throw std::runtime_error("creating a run of schedule " + where + ": " +
                                       created.describe());
            }
            const std::string run = text(member(member(created.body, "metadata"), "name"));
            log_.info("created a run",
                      {{"schedule", where}, {"loadtest", run}, {"tick", format_time(a.tick)}});
            client_.record_event(object, "Normal", api::name(api::Reason::RunCreated),
                                 "created " + run + " for the tick at " + format_time(a.tick));
          } else if constexpr (std::is_same_v<A, WriteScheduleStatus>) {
            const json current = observed.schedule.status;
            const json next = a.status;
            kube::Response patched =
                client_.patch_status(kube::resources::loadtestschedules(namespace_), name,
                                     status_patch(current, next, a.resource_version));
            if (patched.is_not_found()) return;  // deleted meanwhile
            if (!patched.ok()) {
              throw std::runtime_error("writing the status of schedule " + where + ": " +
                                       patched.describe());
            }
          } else if constexpr (std::is_same_v<A, RecordEvent>) {
            log_.info("schedule",
                      {{"schedule", where}, {"reason", a.reason}, {"message", a.message}});
            client_.record_event(object, a.type, a.reason, a.message);
          }
        },
        action);
  }
}

ReconcileOutcome ScheduleReconciler::reconcile(const std::string& namespace_,
                                               const std::string& name) {
  json object;
  const std::optional<ScheduleObservation> observed = observe(namespace_, name, object);
  if (!observed) return {};  // deleted: its runs go with it (owner references)
  const SchedulePlan planned = plan_schedule(*observed);
  act(planned, *observed, object);
  if (!planned.requeue_at) return {};
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(*planned.requeue_at - clock_());
  return {std::max(left, std::chrono::milliseconds(0))};
}

}  // namespace kubeload::controller
