#pragma once
// Reconcile(namespace, name) of a LoadTestSchedule: observe -> plan -> act,
// as the LoadTest's Reconciler (controller.hpp). observe() reads the
// schedule fresh from the API server and its LoadTests by the
// kubeload.dev/schedule label (a consistent list, so a run created in the
// last pass is seen); plan_schedule (schedule_plan.hpp) decides; act() does
// the I/O in order, stopping at the first failure (thrown: the caller
// retries with backoff). The requeue is the next tick.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "operator/controller.hpp"
#include "operator/kube/client.hpp"
#include "operator/log.hpp"
#include "operator/schedule_plan.hpp"

namespace kubeload::controller {

// The LoadTestSchedule ("namespace/name") a LoadTest was created by: its
// controlling owner of that kind, when it carries the kubeload.dev/schedule
// label. The LoadTest watch wakes the schedule with it, so a run that ends
// updates its schedule's status at once.
std::optional<std::string> owning_schedule(const nlohmann::json& loadtest);
// The schedule a LoadTest watch event should wake: its owning_schedule when
// the run appeared, went, or is finished. The status writes of a run going
// on (every second or so) change nothing the schedule reads (it is active
// either way), so they wake nothing: each would cost the schedule a read
// and a list of its runs.
std::optional<std::string> schedule_to_wake(kube::WatchEventType type,
                                            const nlohmann::json& loadtest);

class ScheduleReconciler {
 public:
  using ClockFn = Reconciler::ClockFn;
  using MayActFn = Reconciler::MayActFn;

  ScheduleReconciler(kube::Client& client, Logger& log, ClockFn clock, MayActFn may_act = {});

  // Throws on transient failures; requeue_after is the time to the next tick.
  ReconcileOutcome reconcile(const std::string& namespace_, const std::string& name);

 private:
  std::optional<ScheduleObservation> observe(const std::string& namespace_, const std::string& name,
                                             nlohmann::json& object);
  void act(const SchedulePlan& plan, const ScheduleObservation& observed,
           const nlohmann::json& object);

  kube::Client& client_;
  Logger& log_;
  ClockFn clock_;
  MayActFn may_act_;
};

}  // namespace kubeload::controller
