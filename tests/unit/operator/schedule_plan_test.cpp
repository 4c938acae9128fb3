// A LoadTestSchedule's plan (operator/schedule_plan.hpp), table by table:
// which tick runs, Forbid, Replace and Allow, startingDeadlineSeconds,
// suspend, one run per tick across restarts, the history limits, the status
// and its Ready and Stalled conditions, and a bad spec said in the status.

#include <gtest/gtest.h>

#include "golden_files.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "kubeload/api/meta.hpp"
#include "operator/schedule_controller.hpp"
#include "operator/schedule_plan.hpp"

#ifndef KUBELOAD_SOURCE_DIR
#error "KUBELOAD_SOURCE_DIR must point at the repository"
#endif

namespace {

using nlohmann::json;
using namespace kubeload;
using namespace kubeload::controller;

constexpr const char* kScheduleUid = "5c5c5c5c-0000-4000-8000-000000000001";

Timestamp at(const std::string& rfc3339) {
  return *parse_time(rfc3339);
}

// Every minute... no: 02:00 UTC daily, created the day before the first tick.
ScheduleObservation observe(const std::string& now) {
  ScheduleObservation o;
  api::LoadTestSchedule& s = o.schedule;
  s.metadata.name = "nightly";
  s.metadata.namespace_ = "shop";
  s.metadata.uid = kScheduleUid;
  s.metadata.generation = 1;
  s.metadata.resource_version = "77";
  s.metadata.creation_timestamp = at("2026-06-01T12:00:00Z");
  s.spec.schedule = "0 2 * * *";
  s.spec.template_.spec = json::parse(R"({
    "target": {"url": "http://checkout.shop.svc:8080/"},
    "load": {"connections": 20, "duration": "60s"}
  })");
  o.now = at(now);
  return o;
}

ScheduledRun run(const std::string& name, const std::string& tick,
                 std::optional<api::Phase> phase = std::nullopt,
                 std::optional<api::Verdict> verdict = std::nullopt) {
  ScheduledRun r;
  r.name = name;
  r.uid = "uid-" + name;
  r.controller_uid = kScheduleUid;
  r.scheduled_at = at(tick);
  r.created = at(tick);
  r.phase = phase;
  r.verdict = verdict;
  if (phase && api::is_final(*phase)) r.completion_time = at(tick) + std::chrono::minutes(2);
  r.message = phase == api::Phase::Failed ? "p99 < 250ms: 312ms" : "";
  return r;
}

template <typename A>
std::vector<A> all(const SchedulePlan& plan) {
  std::vector<A> out;
  for (const ScheduleAction& action : plan.actions) {
    if (const auto* a = std::get_if<A>(&action)) out.push_back(*a);
  }
  return out;
}

std::vector<std::string> created_ticks(const SchedulePlan& plan) {
  std::vector<std::string> out;
  for (const CreateScheduledRun& c : all<CreateScheduledRun>(plan)) {
    out.push_back(format_time(c.tick));
  }
  return out;
}
std::vector<std::string> deleted(const SchedulePlan& plan) {
  std::vector<std::string> out;
  for (const DeleteLoadTest& d : all<DeleteLoadTest>(plan)) out.push_back(d.name + "/" + d.uid);
  return out;
}
std::vector<std::string> event_reasons(const SchedulePlan& plan) {
  std::vector<std::string> out;
  for (const RecordEvent& e : all<RecordEvent>(plan)) out.push_back(e.reason);
  return out;
}
const api::Condition& condition_of(const SchedulePlan& plan, api::ConditionType type) {
  const api::Condition* c = api::find_condition(plan.status.conditions, type);
  EXPECT_TRUE(c != nullptr) << api::to_string(type);
  static const api::Condition kNone;
  return c ? *c : kNone;
}

using Strings = std::vector<std::string>;

// ---- which tick runs

TEST(SchedulePlan, NothingRunsBeforeTheFirstTickAfterCreation) {
  const SchedulePlan plan = plan_schedule(observe("2026-06-01T23:00:00Z"));
  EXPECT_TRUE(created_ticks(plan).empty());
  EXPECT_EQ(format_time(*plan.requeue_at), "2026-06-02T02:00:00Z");
  EXPECT_EQ(format_time(*plan.status.next_schedule_time), "2026-06-02T02:00:00Z");
}

TEST(SchedulePlan, ATickDueCreatesOneRunOfIt) {
  const SchedulePlan plan = plan_schedule(observe("2026-06-02T02:00:03Z"));
  ASSERT_EQ(created_ticks(plan), Strings{"2026-06-02T02:00:00Z"});
  const json loadtest = all<CreateScheduledRun>(plan)[0].loadtest;
  EXPECT_EQ(loadtest["metadata"]["generateName"], "nightly-");
  EXPECT_EQ(loadtest["metadata"]["annotations"][std::string(api::kScheduledAtAnnotation)],
            "2026-06-02T02:00:00Z");
  EXPECT_EQ(format_time(*plan.status.last_schedule_time), "2026-06-02T02:00:00Z");
  EXPECT_EQ(format_time(*plan.requeue_at), "2026-06-03T02:00:00Z");
  // The create comes before the status that records it.
  ASSERT_GE(plan.actions.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<CreateScheduledRun>(plan.actions[0]));
  EXPECT_TRUE(std::holds_alternative<WriteScheduleStatus>(plan.actions.back()));
}

TEST(SchedulePlan, ARunOfTheTickExistingIsThatTicksRun) {
  // The operator restarted after the create, before the status write.
  ScheduleObservation o = observe("2026-06-02T02:00:09Z");
  o.runs = {run("nightly-a1b2c", "2026-06-02T02:00:00Z", api::Phase::Running)};
  const SchedulePlan plan = plan_schedule(o);
  EXPECT_TRUE(created_ticks(plan).empty());
  EXPECT_EQ(format_time(*plan.status.last_schedule_time), "2026-06-02T02:00:00Z");
  EXPECT_EQ(plan.status.active,
            (std::vector<api::ActiveRun>{{"nightly-a1b2c", "uid-nightly-a1b2c"}}));
}

TEST(SchedulePlan, OnlyTheLatestMissedTickRuns) {
  // The operator was away for three nights.
  ScheduleObservation o = observe("2026-06-05T09:00:00Z");
  const SchedulePlan plan = plan_schedule(o);
  EXPECT_EQ(created_ticks(plan), Strings{"2026-06-05T02:00:00Z"});
}

TEST(SchedulePlan, ATickAlreadyHandledIsNotRunAgain) {
  ScheduleObservation o = observe("2026-06-02T05:00:00Z");
  o.schedule.status.last_schedule_time = at("2026-06-02T02:00:00Z");
  EXPECT_TRUE(created_ticks(plan_schedule(o)).empty());
  o.schedule.status.last_schedule_time.reset();
  o.schedule.status.last_skipped_time = at("2026-06-02T02:00:00Z");
  EXPECT_TRUE(created_ticks(plan_schedule(o)).empty());
}

TEST(SchedulePlan, AnotherSchedulesRunDoesNotCount) {
  ScheduleObservation o = observe("2026-06-02T02:00:05Z");
  ScheduledRun other = run("nightly-zzzzz", "2026-06-02T02:00:00Z", api::Phase::Running);
  other.controller_uid = "an-earlier-incarnation";
  o.runs = {other};
  const SchedulePlan plan = plan_schedule(o);
  EXPECT_EQ(created_ticks(plan), Strings{"2026-06-02T02:00:00Z"});
  EXPECT_TRUE(plan.status.active.empty());
}

// ---- startingDeadlineSeconds

TEST(SchedulePlan, StartingDeadline) {
  struct Row {
    const char* name;
    std::optional<int64_t> deadline;
    const char* now;
    bool created;
  };
  const Row rows[] = {
      {"no deadline: however late", std::nullopt, "2026-06-02T09:00:00Z", true},
      {"within it", 300, "2026-06-02T02:04:59Z", true},
      {"at it", 300, "2026-06-02T02:05:00Z", true},
      {"past it", 300, "2026-06-02T02:05:01Z", false},
  };
  for (const Row& row : rows) {
    ScheduleObservation o = observe(row.now);
    o.schedule.spec.starting_deadline_seconds = row.deadline;
    const SchedulePlan plan = plan_schedule(o);
    EXPECT_EQ(!created_ticks(plan).empty(), row.created) << row.name;
    if (!row.created) {
      EXPECT_EQ(event_reasons(plan), Strings{"MissedSchedule"}) << row.name;
      EXPECT_EQ(all<RecordEvent>(plan)[0].message,
                "skipped the tick at 2026-06-02T02:00:00Z: 301s late, past "
                "startingDeadlineSeconds (300)");
      EXPECT_EQ(format_time(*plan.status.last_skipped_time), "2026-06-02T02:00:00Z");
      EXPECT_FALSE(plan.status.last_schedule_time) << row.name;
    }
  }
}

// ---- concurrencyPolicy

TEST(SchedulePlan, ConcurrencyPolicy) {
  struct Row {
    const char* name;
    api::ConcurrencyPolicy policy;
    std::optional<api::Phase> earlier;  // the run of the tick before, as it is now
    Strings created;
    Strings deleted;
    Strings events;
  };
  const Strings tick{"2026-06-03T02:00:00Z"};
  const Strings none;
  const Row rows[] = {
      {"Forbid, earlier running: skipped",
       api::ConcurrencyPolicy::Forbid,
       api::Phase::Running,
       none,
       none,
       {"RunStillActive"}},
      {"Forbid, earlier pending: skipped",
       api::ConcurrencyPolicy::Forbid,
       api::Phase::Pending,
       none,
       none,
       {"RunStillActive"}},
      {"Forbid, no phase yet: skipped",
       api::ConcurrencyPolicy::Forbid,
       std::nullopt,
       none,
       none,
       {"RunStillActive"}},
      {"Forbid, earlier finished: runs", api::ConcurrencyPolicy::Forbid, api::Phase::Succeeded,
       tick, none, none},
      {"Replace, earlier running: deleted, then runs",
       api::ConcurrencyPolicy::Replace,
       api::Phase::Running,
       tick,
       {"nightly-first/uid-nightly-first"},
       {"RunReplaced"}},
      {"Replace, earlier finished: runs", api::ConcurrencyPolicy::Replace, api::Phase::Failed, tick,
       none, none},
      {"Allow, earlier running: both run", api::ConcurrencyPolicy::Allow, api::Phase::Running, tick,
       none, none},
  };
  for (const Row& row : rows) {
    ScheduleObservation o = observe("2026-06-03T02:00:01Z");
    o.schedule.spec.concurrency_policy = row.policy;
    o.schedule.status.last_schedule_time = at("2026-06-02T02:00:00Z");
    o.runs = {run("nightly-first", "2026-06-02T02:00:00Z", row.earlier)};
    const SchedulePlan plan = plan_schedule(o);
    EXPECT_EQ(created_ticks(plan), row.created) << row.name;
    EXPECT_EQ(deleted(plan), row.deleted) << row.name;
    EXPECT_EQ(event_reasons(plan), row.events) << row.name;
    const bool skipped = row.created.empty();
    EXPECT_EQ(plan.status.last_skipped_time.has_value(), skipped) << row.name;
    if (!row.deleted.empty()) {
      // Deleted first, with its uid as the precondition; then created.
      EXPECT_TRUE(std::holds_alternative<DeleteLoadTest>(plan.actions[0])) << row.name;
      EXPECT_TRUE(plan.status.active.empty()) << row.name;
    }
  }
}

TEST(SchedulePlan, ForbidSaysWhichRunIsStillGoing) {
  ScheduleObservation o = observe("2026-06-03T02:00:01Z");
  o.schedule.status.last_schedule_time = at("2026-06-02T02:00:00Z");
  o.runs = {run("nightly-first", "2026-06-02T02:00:00Z", api::Phase::Running)};
  const SchedulePlan plan = plan_schedule(o);
  ASSERT_EQ(all<RecordEvent>(plan).size(), 1u);
  EXPECT_EQ(all<RecordEvent>(plan)[0].message,
            "skipped the tick at 2026-06-03T02:00:00Z: nightly-first has not finished "
            "(concurrencyPolicy Forbid)");
  // The skipped tick is not run once the earlier run ends.
  o.schedule.status = plan.status;
  o.runs[0].phase = api::Phase::Succeeded;
  o.now = at("2026-06-03T02:30:00Z");
  EXPECT_TRUE(created_ticks(plan_schedule(o)).empty());
}

TEST(SchedulePlan, ARunBeingDeletedIsNotActive) {
  ScheduleObservation o = observe("2026-06-03T02:00:01Z");
  o.schedule.status.last_schedule_time = at("2026-06-02T02:00:00Z");
  o.runs = {run("nightly-first", "2026-06-02T02:00:00Z", api::Phase::Running)};
  o.runs[0].deleting = true;
  EXPECT_EQ(created_ticks(plan_schedule(o)), Strings{"2026-06-03T02:00:00Z"});
}

// ---- suspend, deletion

TEST(SchedulePlan, SuspendedCreatesNothingAndHasNoNextTick) {
  ScheduleObservation o = observe("2026-06-02T02:00:05Z");
  o.schedule.spec.suspend = true;
  const SchedulePlan plan = plan_schedule(o);
  EXPECT_TRUE(created_ticks(plan).empty());
  EXPECT_FALSE(plan.requeue_at);
  EXPECT_FALSE(plan.status.next_schedule_time);
  // Resumed: the latest tick missed runs, as a CronJob's would.
  o.schedule.spec.suspend = false;
  o.now = at("2026-06-02T07:00:00Z");
  EXPECT_EQ(created_ticks(plan_schedule(o)), Strings{"2026-06-02T02:00:00Z"});
}

TEST(SchedulePlan, ABeingDeletedScheduleCreatesAndDeletesNothing) {
  ScheduleObservation o = observe("2026-06-02T02:00:05Z");
  o.schedule.metadata.deleting = true;
  o.schedule.spec.failed_runs_history_limit = 0;
  o.runs = {run("nightly-old", "2026-06-01T02:00:00Z", api::Phase::Failed)};
  const SchedulePlan plan = plan_schedule(o);
  EXPECT_TRUE(created_ticks(plan).empty());
  EXPECT_TRUE(deleted(plan).empty());
}

// ---- history

TEST(SchedulePlan, HistoryLimitsDeleteTheOldestFinishedRuns) {
  ScheduleObservation o = observe("2026-06-10T12:00:00Z");
  o.schedule.status.last_schedule_time = at("2026-06-10T02:00:00Z");
  o.schedule.spec.successful_runs_history_limit = 2;
  o.schedule.spec.failed_runs_history_limit = 1;
  o.runs = {
      run("p1", "2026-06-01T02:00:00Z", api::Phase::Succeeded, api::Verdict::Pass),
      run("p2", "2026-06-02T02:00:00Z", api::Phase::Succeeded, api::Verdict::None),
      run("f3", "2026-06-03T02:00:00Z", api::Phase::Failed),
      run("p4", "2026-06-04T02:00:00Z", api::Phase::Succeeded, api::Verdict::Pass),
      // Succeeded with the gate failed counts as failed.
      run("g5", "2026-06-05T02:00:00Z", api::Phase::Succeeded, api::Verdict::Fail),
      run("r10", "2026-06-10T02:00:00Z", api::Phase::Running),
  };
  const SchedulePlan plan = plan_schedule(o);
  EXPECT_EQ(deleted(plan), (Strings{"p1/uid-p1", "f3/uid-f3"}));
  EXPECT_EQ(plan.status.active, (std::vector<api::ActiveRun>{{"r10", "uid-r10"}}));
  ASSERT_EQ(plan.status.last_runs.size(), 5u);
  EXPECT_EQ(plan.status.last_runs[0].name, "g5");
  EXPECT_EQ(plan.status.last_runs[4].name, "p1");
}

TEST(SchedulePlan, ZeroKeepsNoFinishedRunButItsVerdictStays) {
  ScheduleObservation o = observe("2026-06-02T12:00:00Z");
  o.schedule.status.last_schedule_time = at("2026-06-02T02:00:00Z");
  o.schedule.spec.successful_runs_history_limit = 0;
  o.schedule.spec.failed_runs_history_limit = 0;
  o.runs = {run("f1", "2026-06-02T02:00:00Z", api::Phase::Failed)};
  SchedulePlan plan = plan_schedule(o);
  EXPECT_EQ(deleted(plan), Strings{"f1/uid-f1"});
  EXPECT_EQ(condition_of(plan, api::ConditionType::Ready).reason, "LastRunFailed");
  // The next pass no longer sees the run; the status remembers it.
  o.schedule.status = plan.status;
  o.runs.clear();
  plan = plan_schedule(o);
  EXPECT_EQ(condition_of(plan, api::ConditionType::Ready).reason, "LastRunFailed");
  EXPECT_EQ(plan.status.last_runs.size(), 1u);
  EXPECT_TRUE(all<WriteScheduleStatus>(plan).empty()) << "nothing changed";
}

// ---- conditions

TEST(SchedulePlan, ReadyAndStalledFollowTheNewestFinishedRun) {
  struct Row {
    const char* name;
    std::vector<ScheduledRun> runs;
    api::ConditionStatus ready;
    api::ConditionStatus stalled;
    const char* reason;
    const char* message;
  };
  using api::ConditionStatus;
  const Row rows[] = {
      {"no run yet",
       {},
       ConditionStatus::True,
       ConditionStatus::False,
       "NoRunFinished",
       "no run has finished yet; the next tick is at 2026-06-03T02:00:00Z"},
      {"only one running",
       {run("r", "2026-06-02T02:00:00Z", api::Phase::Running)},
       ConditionStatus::True,
       ConditionStatus::False,
       "NoRunFinished",
       "no run has finished yet; the next tick is at 2026-06-03T02:00:00Z"},
      {"newest passed",
       {run("f", "2026-06-01T02:00:00Z", api::Phase::Failed),
        run("p", "2026-06-02T02:00:00Z", api::Phase::Succeeded, api::Verdict::Pass)},
       ConditionStatus::True,
       ConditionStatus::False,
       "LastRunPassed",
       "p (the tick at 2026-06-02T02:00:00Z) passed"},
      {"newest failed",
       {run("p", "2026-06-01T02:00:00Z", api::Phase::Succeeded, api::Verdict::Pass),
        run("f", "2026-06-02T02:00:00Z", api::Phase::Failed)},
       ConditionStatus::False,
       ConditionStatus::True,
       "LastRunFailed",
       "f (the tick at 2026-06-02T02:00:00Z) failed: p99 < 250ms: 312ms"},
      {"newest gate failed",
       {run("g", "2026-06-02T02:00:00Z", api::Phase::Succeeded, api::Verdict::Fail)},
       ConditionStatus::False,
       ConditionStatus::True,
       "LastRunFailed",
       "g (the tick at 2026-06-02T02:00:00Z) failed"},
  };
  for (const Row& row : rows) {
    ScheduleObservation o = observe("2026-06-02T12:00:00Z");
    o.schedule.status.last_schedule_time = at("2026-06-02T02:00:00Z");
    o.runs = row.runs;
    const SchedulePlan plan = plan_schedule(o);
    const api::Condition& ready = condition_of(plan, api::ConditionType::Ready);
    const api::Condition& stalled = condition_of(plan, api::ConditionType::Stalled);
    EXPECT_EQ(ready.status, row.ready) << row.name;
    EXPECT_EQ(stalled.status, row.stalled) << row.name;
    EXPECT_EQ(ready.reason, row.reason) << row.name;
    EXPECT_EQ(ready.message, row.message) << row.name;
    EXPECT_EQ(ready.observed_generation, 1) << row.name;
    EXPECT_EQ(plan.status.observed_generation, 1) << row.name;
  }
}

TEST(SchedulePlan, TheTransitionTimeMovesOnlyWithTheStatus) {
  ScheduleObservation o = observe("2026-06-02T12:00:00Z");
  o.schedule.status.last_schedule_time = at("2026-06-02T02:00:00Z");
  o.runs = {run("f", "2026-06-02T02:00:00Z", api::Phase::Failed)};
  const SchedulePlan first = plan_schedule(o);
  o.schedule.status = first.status;
  o.now = at("2026-06-02T13:00:00Z");
  const SchedulePlan second = plan_schedule(o);
  EXPECT_EQ(condition_of(second, api::ConditionType::Ready).last_transition_time,
            at("2026-06-02T12:00:00Z"));
  EXPECT_TRUE(all<WriteScheduleStatus>(second).empty());
}

// ---- a bad spec

TEST(SchedulePlan, ABadSpecIsSaidInTheStatusAndNothingRuns) {
  struct Row {
    const char* name;
    const char* schedule;
    const char* time_zone;
    json template_spec;
    const char* message;
  };
  const json good = observe("2026-06-02T02:00:05Z").schedule.spec.template_.spec;
  const Row rows[] = {
      {"cron", "0 25 * * *", "", good, "spec.schedule \"0 25 * * *\": hour 25 is above 23"},
      {"time zone", "0 2 * * *", "Europe/Atlantis", good,
       "spec.timeZone \"Europe/Atlantis\": not a time zone of the IANA database (such as "
       "Europe/Berlin or America/New_York)"},
      {"TZ= in the cron", "TZ=UTC 0 2 * * *", "", good,
       "spec.schedule \"TZ=UTC 0 2 * * *\": a time zone in the schedule is not read (CronJob "
       "refuses it too); set spec.timeZone: UTC"},
      {"template", "0 2 * * *", "",
       json::parse(R"({"target": {"url": "http://x/"}, "load": {"connections": 0,
                       "duration": "60s"}})"),
       nullptr},
  };
  for (const Row& row : rows) {
    ScheduleObservation o = observe("2026-06-02T02:00:05Z");
    o.schedule.spec.schedule = row.schedule;
    o.schedule.spec.time_zone = row.time_zone;
    o.schedule.spec.template_.spec = row.template_spec;
    const SchedulePlan plan = plan_schedule(o);
    EXPECT_TRUE(created_ticks(plan).empty()) << row.name;
    EXPECT_FALSE(plan.requeue_at) << row.name;
    const api::Condition& ready = condition_of(plan, api::ConditionType::Ready);
    EXPECT_EQ(ready.status, api::ConditionStatus::False) << row.name;
    EXPECT_EQ(ready.reason, "InvalidSpec") << row.name;
    EXPECT_EQ(condition_of(plan, api::ConditionType::Stalled).status, api::ConditionStatus::True)
        << row.name;
    if (row.message) {
      EXPECT_EQ(ready.message, row.message) << row.name;
    } else {
      EXPECT_TRUE(ready.message.starts_with("spec.template.spec.load.connections"))
          << row.name << ": " << ready.message;
    }
    EXPECT_EQ(event_reasons(plan), Strings{"InvalidSpec"}) << row.name;
    // Told once: the next pass, with this status, records no Event again.
    o.schedule.status = plan.status;
    EXPECT_TRUE(event_reasons(plan_schedule(o)).empty()) << row.name;
  }
}

// ---- owning_schedule: which schedule a LoadTest's event wakes

TEST(SchedulePlan, ARunsEventWakesItsSchedule) {
  json loadtest = json::parse(R"({
    "metadata": {"name": "nightly-a1b2c", "namespace": "shop",
                 "labels": {"kubeload.dev/schedule": "nightly"},
                 "ownerReferences": [{"kind": "LoadTestSchedule", "name": "nightly",
                                      "uid": "s1", "controller": true}]}
  })");
  EXPECT_EQ(owning_schedule(loadtest), "shop/nightly");
  json unlabelled = loadtest;
  unlabelled["metadata"].erase("labels");
  EXPECT_FALSE(owning_schedule(unlabelled));
  json not_controller = loadtest;
  not_controller["metadata"]["ownerReferences"][0]["controller"] = false;
  EXPECT_FALSE(owning_schedule(not_controller));
  // A run going on changes nothing the schedule reads; one appearing,
  // finishing or going does.
  using kube::WatchEventType;
  EXPECT_FALSE(schedule_to_wake(WatchEventType::Modified, loadtest));
  json final = loadtest;
  final["status"]["phase"] = "Failed";
  EXPECT_EQ(schedule_to_wake(WatchEventType::Modified, final), "shop/nightly");
  EXPECT_EQ(schedule_to_wake(WatchEventType::Added, loadtest), "shop/nightly");
  EXPECT_EQ(schedule_to_wake(WatchEventType::Deleted, loadtest), "shop/nightly");
  json other_kind = loadtest;
  other_kind["metadata"]["ownerReferences"][0]["kind"] = "CronJob";
  EXPECT_FALSE(owning_schedule(other_kind));
}

// ---- the view of a LoadTest

TEST(SchedulePlan, ReadsARunFromItsObject) {
  const json object = json::parse(R"({
    "metadata": {"name": "nightly-a1b2c", "uid": "u1", "creationTimestamp": "2026-06-02T02:00:01Z",
                 "annotations": {"kubeload.dev/scheduled-at": "2026-06-02T02:00:00Z"},
                 "ownerReferences": [{"kind": "LoadTestSchedule", "name": "nightly",
                                      "uid": "s1", "controller": true}]},
    "status": {"phase": "Failed", "verdict": "None", "message": "worker 0 exited 1",
               "completionTime": "2026-06-02T02:03:00Z"}
  })");
  const ScheduledRun r = scheduled_run(object);
  EXPECT_EQ(r.name, "nightly-a1b2c");
  EXPECT_EQ(r.uid, "u1");
  EXPECT_EQ(r.controller_uid, "s1");
  EXPECT_EQ(format_time(*r.scheduled_at), "2026-06-02T02:00:00Z");
  EXPECT_EQ(r.phase, api::Phase::Failed);
  EXPECT_EQ(r.verdict, api::Verdict::None);
  EXPECT_EQ(r.message, "worker 0 exited 1");
  EXPECT_EQ(format_time(*r.completion_time), "2026-06-02T02:03:00Z");
}

TEST(SchedulePlan, EveryMinuteMakesTwoRunsInTwoMinutes) {
  // The e2e's case, as passes of the plan: each pass sees the runs created.
  ScheduleObservation o = observe("2026-06-02T10:00:30Z");
  o.schedule.metadata.creation_timestamp = at("2026-06-02T10:00:30Z");
  o.schedule.spec.schedule = "* * * * *";
  o.schedule.spec.concurrency_policy = api::ConcurrencyPolicy::Allow;
  Strings ticks;
  for (const char* now : {"2026-06-02T10:00:45Z", "2026-06-02T10:01:01Z", "2026-06-02T10:01:30Z",
                          "2026-06-02T10:02:02Z", "2026-06-02T10:02:30Z"}) {
    o.now = at(now);
    const SchedulePlan plan = plan_schedule(o);
    for (const std::string& tick : created_ticks(plan)) {
      ticks.push_back(tick);
      o.runs.push_back(run("nightly-" + std::to_string(ticks.size()), tick, api::Phase::Running));
    }
    o.schedule.status = plan.status;
  }
  EXPECT_EQ(ticks, (Strings{"2026-06-02T10:01:00Z", "2026-06-02T10:02:00Z"}));
}

// A YAML document as the API server would hand it over: numbers and
// booleans typed, everything else a string.
json to_json(const YAML::Node& node) {
  if (node.IsMap()) {
    json out = json::object();
    for (const auto& entry : node) out[entry.first.as<std::string>()] = to_json(entry.second);
    return out;
  }
  if (node.IsSequence()) {
    json out = json::array();
    for (const YAML::Node& item : node) out.push_back(to_json(item));
    return out;
  }
  if (node.IsNull()) return nullptr;
  const std::string text = node.as<std::string>();
  if (node.Tag() != "!") {  // not quoted
    int64_t integer = 0;
    bool flag = false;
    if (YAML::convert<int64_t>::decode(node, integer)) return integer;
    if (YAML::convert<bool>::decode(node, flag)) return flag;
  }
  return text;
}

TEST(SchedulePlan, TheNightlyExampleIsValidAndRunsAt0215Berlin) {
  json object =
      to_json(YAML::LoadFile(std::string(KUBELOAD_SOURCE_DIR) + "/examples/schedule/nightly.yaml"));
  object["metadata"]["namespace"] = "shop";
  object["metadata"]["uid"] = kScheduleUid;
  object["metadata"]["generation"] = 1;
  object["metadata"]["creationTimestamp"] = "2026-06-01T12:00:00Z";
  ScheduleObservation o;
  o.schedule = object.get<api::LoadTestSchedule>();
  o.now = at("2026-06-02T00:15:30Z");  // 02:15:30 CEST
  const SchedulePlan plan = plan_schedule(o);
  EXPECT_NE(condition_of(plan, api::ConditionType::Ready).reason, "InvalidSpec")
      << condition_of(plan, api::ConditionType::Ready).message;
  EXPECT_EQ(created_ticks(plan), Strings{"2026-06-02T00:15:00Z"});
  EXPECT_EQ(o.schedule.spec.concurrency_policy, api::ConcurrencyPolicy::Forbid);
  EXPECT_EQ(o.schedule.spec.starting_deadline_seconds, 3600);
}

// ---- the objects tests/gitops reads with kstatus (sigs.k8s.io and Flux's)

json schedule_object(const ScheduleObservation& o, const json& status) {
  json object = o.schedule;
  object["status"] = status;
  return object;
}

std::map<std::string, json> gitops_schedule_fixtures() {
  std::map<std::string, json> out;
  const auto planned = [](ScheduleObservation o) {
    return schedule_object(o, json(plan_schedule(o).status));
  };
  ScheduleObservation o = observe("2026-06-01T12:00:01Z");
  // As the API server returns it before the operator wrote a status (the
  // CRD's default).
  out["unseen"] = schedule_object(o, json{{"observedGeneration", 0}});
  out["no-run-yet"] = planned(o);
  o.now = at("2026-06-02T12:00:00Z");
  o.schedule.status.last_schedule_time = at("2026-06-02T02:00:00Z");
  o.runs = {run("nightly-a1b2c", "2026-06-02T02:00:00Z", api::Phase::Running)};
  out["running"] = planned(o);
  o.runs = {
      run("nightly-a1b2c", "2026-06-02T02:00:00Z", api::Phase::Succeeded, api::Verdict::Pass)};
  out["passed"] = planned(o);
  json stale = out["passed"];
  stale["metadata"]["generation"] = 2;
  stale["spec"]["schedule"] = "0 3 * * *";
  out["stale-passed"] = stale;
  o.runs = {
      run("nightly-a1b2c", "2026-06-02T02:00:00Z", api::Phase::Succeeded, api::Verdict::Fail)};
  out["last-run-failed"] = planned(o);
  o.schedule.spec.schedule = "0 2 * * 8";
  out["invalid-spec"] = planned(o);
  return out;
}

TEST(SchedulePlanGolden, GitopsFixturesAreWhatThePlanWrites) {
  kubeload::golden::expect_golden_files(
      std::filesystem::path(KUBELOAD_SOURCE_DIR) / "tests/gitops/testdata/schedule",
      gitops_schedule_fixtures(), "and run the tests in tests/gitops");
}

}  // namespace
