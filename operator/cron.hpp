#pragma once
// A LoadTestSchedule's `schedule` and `timeZone`: the five-field cron syntax
// as Kubernetes' CronJob reads it (robfig/cron's standard parser), and the
// next or latest tick in a time zone. Pure (the time zone database is read
// once, from the system's tzdata, by Howard Hinnant's date/tz).
//
// Hand-written: Debian packages no C++ cron parser. What it reads, as
// CronJob does:
//   minute hour day-of-month month day-of-week
//   each field `*` (or `?`), a number, a range `a-b`, a step `*/n`, `a-b/n`
//   or `a/n` (a to the field's maximum), or a comma list of these; months
//   `jan`..`dec` and weekdays `sun`..`sat` by name (any case); weekdays 0-6,
//   Sunday 0. `@yearly` (`@annually`), `@monthly`, `@weekly`, `@daily`
//   (`@midnight`) and `@hourly`. `TZ=` or `CRON_TZ=` in the string is
//   refused, pointing at spec.timeZone, as CronJob refuses it.
// Day of month and day of week both restricted (neither starts with `*` or
// `?`): a day matching either runs (cron's OR rule); one of them `*`: both
// must match. `*/2` is a restriction, not a star (robfig's rule).
//
// Daylight saving time, as CronJob (robfig/cron) runs it: the local times
// of the zone are walked, so a tick at a local time that does not exist
// (02:30 on the night the clocks go forward in Europe/Berlin) is skipped
// that day, and a local time that happens twice (02:30 on the night they go
// back) is a tick both times, an hour apart.

#include <bitset>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace kubeload::controller {

struct CronSchedule {
  std::bitset<60> minutes;
  std::bitset<24> hours;
  std::bitset<32> days_of_month;  // 1..31
  std::bitset<13> months;         // 1..12
  std::bitset<7> days_of_week;    // 0 (Sunday)..6
  // The field was `*` or `?`: cron's OR rule between the two day fields
  // applies only when neither is.
  bool any_day_of_month = false;
  bool any_day_of_week = false;
  // The IANA name ticks are read in; "UTC" when spec.timeZone is unset.
  std::string time_zone;
  bool operator==(const CronSchedule&) const = default;
};

// Reads spec.schedule and spec.timeZone ("" = UTC). Throws
// std::invalid_argument naming the field and the bad value
// (`spec.schedule "61 * * * *": minute 61 is above 59`).
CronSchedule parse_cron(std::string_view schedule, std::string_view time_zone);

using CronTime = std::chrono::system_clock::time_point;

// The first tick strictly after `after`; nullopt when there is none within
// five years (`0 0 30 2 *`, February 30th), as robfig gives up.
std::optional<CronTime> next_tick(const CronSchedule& schedule, CronTime after);
// The latest tick at or before `until`; nullopt when there is none in the
// five years before it.
std::optional<CronTime> latest_tick(const CronSchedule& schedule, CronTime until);

}  // namespace kubeload::controller
