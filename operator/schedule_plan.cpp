#include "operator/schedule_plan.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "kubeload/api/meta.hpp"
#include "kubeload/spec.hpp"
#include "kubeload/spec_in_cluster.hpp"
#include "operator/conditions.hpp"
#include "operator/cron.hpp"
#include "operator/job_builder.hpp"
#include "operator/views.hpp"

namespace kubeload::controller {
namespace {

using api::ConcurrencyPolicy;
using api::ConditionStatus;
using api::ConditionType;
using api::Reason;

// A finished run passed: it Succeeded and its gate did not say Fail.
bool passed(const ScheduledRun& run) {
  return run.phase == api::Phase::Succeeded && run.verdict != api::Verdict::Fail;
}
bool passed(const api::LastRun& run) {
  return run.phase == api::Phase::Succeeded && run.verdict != api::Verdict::Fail;
}
bool finished(const ScheduledRun& run) {
  return run.phase && api::is_final(*run.phase);
}
// When a run counts as scheduled: its tick, else its creation.
Timestamp when(const ScheduledRun& run) {
  return run.scheduled_at.value_or(run.created.value_or(Timestamp{}));
}
Timestamp when(const api::LastRun& run) {
  return run.scheduled_at.value_or(run.completion_time.value_or(Timestamp{}));
}

api::LastRun last_run(const ScheduledRun& run) {
  return {run.name, run.scheduled_at, run.phase, run.verdict, run.completion_time, run.message};
}

// The finished runs seen now and those the status remembers (deleted
// since), newest first, at most kLastRunsShown.
std::vector<api::LastRun> last_runs(const std::vector<api::LastRun>& remembered,
                                    const std::vector<const ScheduledRun*>& finished_now) {
  std::map<std::string, api::LastRun> by_name;
  for (const api::LastRun& run : remembered) by_name[run.name] = run;
  for (const ScheduledRun* run : finished_now) by_name[run->name] = last_run(*run);
  std::vector<api::LastRun> out;
  for (auto& [name, run] : by_name) out.push_back(std::move(run));
  std::sort(out.begin(), out.end(), [](const api::LastRun& a, const api::LastRun& b) {
    if (when(a) != when(b)) return when(a) > when(b);
    return a.name > b.name;
  });
  if (out.size() > kLastRunsShown) out.resize(kLastRunsShown);
  return out;
}

std::string describe(const api::LastRun& run) {
  std::string out = run.name;
  if (run.scheduled_at) out += " (the tick at " + format_time(*run.scheduled_at) + ")";
  return out;
}

// Ready and Stalled, from the spec's validity and the newest finished run.
std::vector<ConditionValue> decide(const std::string& invalid,
                                   const std::vector<api::LastRun>& runs,
                                   const std::optional<Timestamp>& next) {
  const auto two = [](ConditionStatus ready, Reason reason, const std::string& message) {
    const ConditionStatus stalled =
        ready == ConditionStatus::False ? ConditionStatus::True : ConditionStatus::False;
    return std::vector<ConditionValue>{
        {api::name(ConditionType::Ready), api::name(ready), api::name(reason), message},
        {api::name(ConditionType::Stalled), api::name(stalled), api::name(reason), message}};
  };
  if (!invalid.empty()) return two(ConditionStatus::False, Reason::InvalidSpec, invalid);
  if (runs.empty()) {
    return two(ConditionStatus::True, Reason::NoRunFinished,
               "no run has finished yet" +
                   (next ? "; the next tick is at " + format_time(*next) : std::string()));
  }
  const api::LastRun& newest = runs.front();
  const std::string said = newest.message.empty() ? "" : ": " + newest.message;
  if (passed(newest)) {
    return two(ConditionStatus::True, Reason::LastRunPassed, describe(newest) + " passed" + said);
  }
  return two(ConditionStatus::False, Reason::LastRunFailed, describe(newest) + " failed" + said);
}

// What is wrong with the spec ("" when nothing): the cron, the time zone,
// then the template's LoadTest as it would be created, by the LoadTest's
// own parser, its fields named under spec.template.
std::string spec_problem(const api::LoadTestSchedule& schedule, std::optional<CronSchedule>& cron,
                         Timestamp now) {
  try {
    cron = parse_cron(schedule.spec.schedule, schedule.spec.time_zone);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  const ParsedLoadTest parsed = parse_loadtest_for_cluster(
      build_scheduled_loadtest(schedule, api::whole_seconds(now)).dump());
  if (parsed.ok()) return "";
  std::string out;
  for (const FieldError& error : parsed.errors) {
    if (!out.empty()) out += "; ";
    out += error.path.empty() ? "spec.template: " + error.message
                              : "spec.template." + error.to_string();
  }
  return out;
}

// The finished runs of one kind beyond `limit`, oldest ones: to delete.
void beyond_limit(std::vector<const ScheduledRun*> runs, int64_t limit,
                  std::vector<const ScheduledRun*>& out) {
  std::sort(runs.begin(), runs.end(), [](const ScheduledRun* a, const ScheduledRun* b) {
    if (when(*a) != when(*b)) return when(*a) > when(*b);
    return a->name > b->name;
  });
  const std::size_t keep = static_cast<std::size_t>(std::max<int64_t>(limit, 0));
  for (std::size_t i = keep; i < runs.size(); ++i) out.push_back(runs[i]);
}

}  // namespace

ScheduledRun scheduled_run(const nlohmann::json& object) {
  const api::LoadTest loadtest = object.get<api::LoadTest>();
  ScheduledRun run;
  run.name = loadtest.metadata.name;
  run.uid = loadtest.metadata.uid;
  run.controller_uid = controller_uid(object);
  if (const auto at = loadtest.metadata.annotations.find(std::string(api::kScheduledAtAnnotation));
      at != loadtest.metadata.annotations.end()) {
    run.scheduled_at = parse_time(at->second);
  }
  run.created = loadtest.metadata.creation_timestamp;
  run.deleting = loadtest.metadata.deleting;
  run.phase = loadtest.status.phase;
  run.verdict = loadtest.status.verdict;
  run.completion_time = loadtest.status.completion_time;
  run.message = loadtest.status.message;
  return run;
}

// GCC 12 at -O2 warns that a ScheduleAction moved while the vector grows
// "may be used uninitialized": a false positive in std::variant's move
// constructor with an nlohmann::json inside (every alternative is built
// whole before it is pushed).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
SchedulePlan plan_schedule(const ScheduleObservation& observed) {
  const api::LoadTestSchedule& schedule = observed.schedule;
  const api::LoadTestScheduleSpec& spec = schedule.spec;
  const Timestamp now = observed.now;
  SchedulePlan out;
  api::LoadTestScheduleStatus& status = out.status;
  status.observed_generation = schedule.metadata.generation;
  status.last_schedule_time = schedule.status.last_schedule_time;
  status.last_skipped_time = schedule.status.last_skipped_time;

  std::vector<const ScheduledRun*> active;
  std::vector<const ScheduledRun*> done;
  for (const ScheduledRun& run : observed.runs) {
    if (run.controller_uid != schedule.metadata.uid) continue;  // not this schedule's
    // One run per tick: a run of a tick counts as handled whether or not
    // the status says so yet (a pass repeated after a lost status write).
    if (run.scheduled_at &&
        (!status.last_schedule_time || *run.scheduled_at > *status.last_schedule_time)) {
      status.last_schedule_time = api::whole_seconds(*run.scheduled_at);
    }
    if (run.deleting) continue;
    if (finished(run)) {
      done.push_back(&run);
    } else {
      active.push_back(&run);
    }
  }

  std::optional<CronSchedule> cron;
  const std::string invalid = spec_problem(schedule, cron, now);
  const bool may_run = invalid.empty() && !spec.suspend && !schedule.metadata.deleting;
  const auto event = [&](const char* type, Reason reason, std::string message) {
    out.actions.push_back(RecordEvent{type, api::name(reason), std::move(message)});
  };

  // ---- the tick due now, if any
  if (may_run) {
    Timestamp earliest = schedule.metadata.creation_timestamp.value_or(Timestamp{});
    for (const auto& handled : {status.last_schedule_time, status.last_skipped_time}) {
      if (handled) earliest = std::max(earliest, *handled);
    }
    const std::optional<Timestamp> tick = latest_tick(*cron, now);
    if (tick && *tick > earliest) {
      const std::string at = format_time(*tick);
      const auto late = std::chrono::duration_cast<std::chrono::seconds>(now - *tick);
      if (spec.starting_deadline_seconds && late.count() > *spec.starting_deadline_seconds) {
        status.last_skipped_time = *tick;
        event("Warning", Reason::MissedSchedule,
              "skipped the tick at " + at + ": " + std::to_string(late.count()) +
                  "s late, past startingDeadlineSeconds (" +
                  std::to_string(*spec.starting_deadline_seconds) + ")");
      } else if (!active.empty() && spec.concurrency_policy == ConcurrencyPolicy::Forbid) {
        status.last_skipped_time = *tick;
        std::string names;
        for (const ScheduledRun* run : active) names += (names.empty() ? "" : ", ") + run->name;
        event("Normal", Reason::RunStillActive,
              "skipped the tick at " + at + ": " + names + (active.size() == 1 ? " has" : " have") +
                  " not finished (concurrencyPolicy Forbid)");
      } else {
        if (spec.concurrency_policy == ConcurrencyPolicy::Replace) {
          for (const ScheduledRun* run : active) {
            out.actions.push_back(DeleteLoadTest{run->name, run->uid});
            event("Normal", Reason::RunReplaced,
                  "deleted " + run->name + ", not finished at the tick at " + at +
                      " (concurrencyPolicy Replace)");
          }
          active.clear();
        }
        out.actions.push_back(CreateScheduledRun{build_scheduled_loadtest(schedule, *tick), *tick});
        status.last_schedule_time = *tick;
      }
    }
  }

  // ---- history: the finished runs beyond the limits go, oldest first
  std::vector<const ScheduledRun*> passed_runs;
  std::vector<const ScheduledRun*> failed_runs;
  for (const ScheduledRun* run : done) (passed(*run) ? passed_runs : failed_runs).push_back(run);
  std::vector<const ScheduledRun*> expired;
  beyond_limit(passed_runs, spec.successful_runs_history_limit, expired);
  beyond_limit(failed_runs, spec.failed_runs_history_limit, expired);
  if (!schedule.metadata.deleting) {
    for (const ScheduledRun* run : expired) {
      out.actions.push_back(DeleteLoadTest{run->name, run->uid});
    }
  }

  // ---- the status
  for (const ScheduledRun* run : active) status.active.push_back({run->name, run->uid});
  std::sort(status.active.begin(), status.active.end(),
            [](const api::ActiveRun& a, const api::ActiveRun& b) { return a.name < b.name; });
  status.last_runs = last_runs(schedule.status.last_runs, done);
  if (may_run) {
    if (const std::optional<Timestamp> next = next_tick(*cron, now)) {
      status.next_schedule_time = api::whole_seconds(*next);
      out.requeue_at = *next;
    }
  }
  for (const ConditionValue& value : decide(invalid, status.last_runs, status.next_schedule_time)) {
    set_condition(status.conditions,
                  condition(value, schedule.metadata.generation, schedule.status.conditions, now));
  }
  // An invalid spec is told once, when it becomes so (the condition's
  // reason changes), not at every pass.
  if (!invalid.empty()) {
    const api::Condition* before =
        api::find_condition(schedule.status.conditions, ConditionType::Ready);
    if (!before || before->reason != api::name(Reason::InvalidSpec) || before->message != invalid) {
      event("Warning", Reason::InvalidSpec, invalid);
    }
  }
  if (status != schedule.status) {
    out.actions.push_back(WriteScheduleStatus{status, schedule.metadata.resource_version});
  }
  return out;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

}  // namespace kubeload::controller
