// The cron of a LoadTestSchedule (operator/cron.hpp): every field form as
// CronJob reads it, errors that name the bad value, and the ticks it gives,
// in UTC and across daylight saving time in Europe/Berlin.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "operator/cron.hpp"
#include "operator/timestamp.hpp"

namespace {

using namespace kubeload::controller;

CronTime at(const std::string& rfc3339) {
  const std::optional<Timestamp> parsed = parse_time(rfc3339);
  EXPECT_TRUE(parsed) << rfc3339;
  return parsed.value_or(Timestamp{});
}

std::string next(const std::string& schedule, const std::string& zone, const std::string& after) {
  const std::optional<CronTime> tick = next_tick(parse_cron(schedule, zone), at(after));
  return tick ? format_time(*tick) : "never";
}

// The first `n` ticks after `after`, each the next of the one before.
std::vector<std::string> ticks(const std::string& schedule, const std::string& zone,
                               const std::string& after, int n) {
  const CronSchedule parsed = parse_cron(schedule, zone);
  std::vector<std::string> out;
  CronTime from = at(after);
  for (int i = 0; i < n; ++i) {
    const std::optional<CronTime> tick = next_tick(parsed, from);
    if (!tick) break;
    out.push_back(format_time(*tick));
    from = *tick;
  }
  return out;
}

std::string error_of(const std::string& schedule, const std::string& zone = "") {
  try {
    parse_cron(schedule, zone);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<unsigned> set_bits(const auto& bits) {
  std::vector<unsigned> out;
  for (unsigned i = 0; i < bits.size(); ++i) {
    if (bits[i]) out.push_back(i);
  }
  return out;
}

TEST(Cron, ReadsEveryFieldForm) {
  using V = std::vector<unsigned>;
  EXPECT_EQ(set_bits(parse_cron("*/15 * * * *", "").minutes), (V{0, 15, 30, 45}));
  EXPECT_EQ(set_bits(parse_cron("10-40/10 * * * *", "").minutes), (V{10, 20, 30, 40}));
  EXPECT_EQ(set_bits(parse_cron("5/20 * * * *", "").minutes), (V{5, 25, 45}));
  EXPECT_EQ(set_bits(parse_cron("1,2,5-7 * * * *", "").minutes), (V{1, 2, 5, 6, 7}));
  EXPECT_EQ(set_bits(parse_cron("0 9-17/4 * * *", "").hours), (V{9, 13, 17}));
  EXPECT_EQ(set_bits(parse_cron("0 0 1,15 * *", "").days_of_month), (V{1, 15}));
  EXPECT_EQ(set_bits(parse_cron("0 0 * jan-mar,DEC *", "").months), (V{1, 2, 3, 12}));
  EXPECT_EQ(set_bits(parse_cron("0 0 * * Mon-fri", "").days_of_week), (V{1, 2, 3, 4, 5}));
  EXPECT_EQ(set_bits(parse_cron("0 0 * * sun,6", "").days_of_week), (V{0, 6}));
  EXPECT_EQ(set_bits(parse_cron("0 0 ? * *", "").days_of_month).size(), 31u);
  EXPECT_EQ(set_bits(parse_cron("  0   0  *  *  * ", "").hours), (V{0}));
}

TEST(Cron, StarsAreWhatTheDayRuleLooksAt) {
  EXPECT_TRUE(parse_cron("0 0 * * 1", "").any_day_of_month);
  EXPECT_FALSE(parse_cron("0 0 * * 1", "").any_day_of_week);
  EXPECT_TRUE(parse_cron("0 0 ? * 1", "").any_day_of_month);
  EXPECT_TRUE(parse_cron("0 0 */1 * 1", "").any_day_of_month);
  // robfig's rule, which CronJob follows: a stepped star restricts.
  EXPECT_FALSE(parse_cron("0 0 */2 * 1", "").any_day_of_month);
}

TEST(Cron, DescriptorsAreTheirFiveFields) {
  const auto same = [](const char* descriptor, const char* fields) {
    EXPECT_EQ(parse_cron(descriptor, ""), parse_cron(fields, "")) << descriptor;
  };
  same("@yearly", "0 0 1 1 *");
  same("@annually", "0 0 1 1 *");
  same("@monthly", "0 0 1 * *");
  same("@weekly", "0 0 * * 0");
  same("@daily", "0 0 * * *");
  same("@midnight", "0 0 * * *");
  same("@hourly", "0 * * * *");
  same("@DAILY", "0 0 * * *");
}

TEST(Cron, ErrorsNameTheFieldAndTheValue) {
  EXPECT_EQ(error_of("61 * * * *"), "spec.schedule \"61 * * * *\": minute 61 is above 59");
  EXPECT_EQ(error_of("0 24 * * *"), "spec.schedule \"0 24 * * *\": hour 24 is above 23");
  EXPECT_EQ(error_of("0 0 0 * *"), "spec.schedule \"0 0 0 * *\": day of month 0 is below 1");
  EXPECT_EQ(error_of("0 0 * 13 *"), "spec.schedule \"0 0 * 13 *\": month 13 is above 12");
  EXPECT_EQ(error_of("0 0 * * 7"), "spec.schedule \"0 0 * * 7\": day of week 7 is above 6");
  EXPECT_EQ(error_of("0 0 * * funday"),
            "spec.schedule \"0 0 * * funday\": day of week \"funday\" is not a number or a name");
  EXPECT_EQ(error_of("x * * * *"), "spec.schedule \"x * * * *\": minute \"x\" is not a number");
  EXPECT_EQ(error_of("*/0 * * * *"),
            "spec.schedule \"*/0 * * * *\": minute step \"0\" is not a positive number");
  EXPECT_EQ(error_of("0 5-3 * * *"),
            "spec.schedule \"0 5-3 * * *\": hour range \"5-3\" begins after it ends");
  EXPECT_EQ(error_of("1,,2 * * * *"),
            "spec.schedule \"1,,2 * * * *\": minute \"1,,2\" has an empty item");
  EXPECT_EQ(error_of("* * * *"),
            "spec.schedule \"* * * *\": has 4 fields, not 5 (minute hour day-of-month month "
            "day-of-week)");
  EXPECT_EQ(error_of("0 0 * * * *"),
            "spec.schedule \"0 0 * * * *\": has 6 fields, not 5 (minute hour day-of-month month "
            "day-of-week)");
  EXPECT_EQ(error_of(""), "spec.schedule \"\": is empty");
  EXPECT_EQ(error_of("@every 1h"),
            "spec.schedule \"@every 1h\": \"@every\" is not one of @yearly, @annually, @monthly, "
            "@weekly, @daily, @midnight, @hourly");
  EXPECT_EQ(error_of("TZ=Europe/Berlin 0 2 * * *"),
            "spec.schedule \"TZ=Europe/Berlin 0 2 * * *\": a time zone in the schedule is not "
            "read (CronJob refuses it too); set spec.timeZone: Europe/Berlin");
  EXPECT_EQ(error_of("CRON_TZ=UTC 0 2 * * *"),
            "spec.schedule \"CRON_TZ=UTC 0 2 * * *\": a time zone in the schedule is not read "
            "(CronJob refuses it too); set spec.timeZone: UTC");
  EXPECT_EQ(error_of("0 2 * * *", "Mars/Olympus_Mons"),
            "spec.timeZone \"Mars/Olympus_Mons\": not a time zone of the IANA database (such as "
            "Europe/Berlin or America/New_York)");
}

TEST(Cron, UnsetTimeZoneIsUtc) {
  EXPECT_EQ(parse_cron("0 2 * * *", "").time_zone, "UTC");
  EXPECT_EQ(next("0 2 * * *", "", "2026-06-01T12:00:00Z"), "2026-06-02T02:00:00Z");
  EXPECT_EQ(next("0 2 * * *", "UTC", "2026-06-01T12:00:00Z"), "2026-06-02T02:00:00Z");
}

TEST(Cron, NextTickIsStrictlyAfter) {
  EXPECT_EQ(next("* * * * *", "", "2026-06-01T12:00:00Z"), "2026-06-01T12:01:00Z");
  EXPECT_EQ(next("* * * * *", "", "2026-06-01T12:00:30Z"), "2026-06-01T12:01:00Z");
  EXPECT_EQ(next("*/15 * * * *", "", "2026-06-01T12:14:59Z"), "2026-06-01T12:15:00Z");
  EXPECT_EQ(next("@hourly", "", "2026-12-31T23:30:00Z"), "2027-01-01T00:00:00Z");
  EXPECT_EQ(next("@monthly", "", "2026-01-31T00:00:00Z"), "2026-02-01T00:00:00Z");
  EXPECT_EQ(next("@yearly", "", "2026-01-01T00:00:00Z"), "2027-01-01T00:00:00Z");
  EXPECT_EQ(next("0 0 31 * *", "", "2026-04-01T00:00:00Z"), "2026-05-31T00:00:00Z");
}

TEST(Cron, February29thComesEveryLeapYear) {
  EXPECT_EQ(next("0 0 29 2 *", "", "2026-01-01T00:00:00Z"), "2028-02-29T00:00:00Z");
  EXPECT_EQ(next("0 0 29 2 *", "", "2028-02-29T00:00:00Z"), "2032-02-29T00:00:00Z");
  EXPECT_EQ(next("0 0 30 2 *", "", "2026-01-01T00:00:00Z"), "never");
}

TEST(Cron, BothDayFieldsRestrictedRunOnEither) {
  // 1 February 2026 is a Sunday: Mondays or the 10th.
  EXPECT_EQ(ticks("0 0 10 * mon", "", "2026-02-01T00:00:00Z", 4),
            (std::vector<std::string>{"2026-02-02T00:00:00Z", "2026-02-09T00:00:00Z",
                                      "2026-02-10T00:00:00Z", "2026-02-16T00:00:00Z"}));
  // One of them a star: both must match (the 13th only when a Friday).
  EXPECT_EQ(next("0 0 13 * *", "", "2026-02-01T00:00:00Z"), "2026-02-13T00:00:00Z");
  EXPECT_EQ(next("0 0 ? * fri", "", "2026-02-01T00:00:00Z"), "2026-02-06T00:00:00Z");
  // A stepped star is a restriction: odd days or Mondays.
  EXPECT_EQ(ticks("0 0 */2 * 1", "", "2026-02-01T00:00:00Z", 3),
            (std::vector<std::string>{"2026-02-02T00:00:00Z", "2026-02-03T00:00:00Z",
                                      "2026-02-05T00:00:00Z"}));
}

TEST(Cron, TicksAreLocalTimesOfTheZone) {
  EXPECT_EQ(next("0 9 * * *", "America/New_York", "2026-01-01T00:00:00Z"), "2026-01-01T14:00:00Z");
  EXPECT_EQ(next("0 9 * * *", "America/New_York", "2026-07-01T00:00:00Z"), "2026-07-01T13:00:00Z");
  EXPECT_EQ(next("0 2 * * *", "Europe/Berlin", "2026-01-10T12:00:00Z"), "2026-01-11T01:00:00Z");
}

TEST(Cron, ALocalTimeThatDoesNotExistIsSkipped) {
  // 29 March 2026, Europe/Berlin: 02:00 CET becomes 03:00 CEST.
  EXPECT_EQ(ticks("30 2 * * *", "Europe/Berlin", "2026-03-28T00:00:00Z", 2),
            (std::vector<std::string>{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"}));
  // Hourly: 01:00 CET, then 03:00 CEST, an hour of real time later.
  EXPECT_EQ(ticks("0 * * * *", "Europe/Berlin", "2026-03-28T23:30:00Z", 3),
            (std::vector<std::string>{"2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z",
                                      "2026-03-29T02:00:00Z"}));
}

TEST(Cron, ALocalTimeThatHappensTwiceTicksTwice) {
  // 25 October 2026, Europe/Berlin: 03:00 CEST becomes 02:00 CET again.
  EXPECT_EQ(ticks("30 2 * * *", "Europe/Berlin", "2026-10-24T22:00:00Z", 3),
            (std::vector<std::string>{"2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z",
                                      "2026-10-26T01:30:00Z"}));
}

TEST(Cron, LatestTickIsAtOrBefore) {
  const CronSchedule every5 = parse_cron("*/5 * * * *", "");
  EXPECT_EQ(format_time(*latest_tick(every5, at("2026-06-01T12:07:00Z"))), "2026-06-01T12:05:00Z");
  EXPECT_EQ(format_time(*latest_tick(every5, at("2026-06-01T12:05:00Z"))), "2026-06-01T12:05:00Z");
  EXPECT_EQ(format_time(*latest_tick(parse_cron("0 0 29 2 *", ""), at("2026-06-01T00:00:00Z"))),
            "2024-02-29T00:00:00Z");
  EXPECT_FALSE(latest_tick(parse_cron("0 0 30 2 *", ""), at("2026-06-01T00:00:00Z")));
  // Across the night the clocks go back: the second 02:30 is the latest.
  EXPECT_EQ(format_time(*latest_tick(parse_cron("30 2 * * *", "Europe/Berlin"),
                                     at("2026-10-25T02:00:00Z"))),
            "2026-10-25T01:30:00Z");
}

}  // namespace
