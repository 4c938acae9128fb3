// A LoadTestSchedule's cron (operator/cron.hpp) against arbitrary schedules:
// each is either refused with a message naming spec.schedule or
// spec.timeZone, or read; a schedule read gives ticks on the right side of
// the instant asked about, on whole minutes, and reads again the same. The
// first byte picks the time zone (UTC, Europe/Berlin with its daylight saving
// time, or one given after a newline) and the instant.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "operator/cron.hpp"

using kubeload::controller::CronSchedule;
using kubeload::controller::CronTime;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t pick = data[0];
  std::string_view schedule(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::string_view zone = (pick & 1) ? "Europe/Berlin" : "";
  if (const std::size_t newline = schedule.find('\n'); newline != std::string_view::npos) {
    zone = schedule.substr(newline + 1);
    schedule = schedule.substr(0, newline);
  }
  CronSchedule parsed;
  try {
    parsed = kubeload::controller::parse_cron(schedule, zone);
  } catch (const std::invalid_argument& e) {
    const std::string_view message = e.what();
    if (!message.starts_with("spec.schedule \"") && !message.starts_with("spec.timeZone \"")) {
      std::abort();
    }
    return 0;
  }
  // 2026-03-29T00:00:00Z, shortly before Berlin's clocks go forward, plus
  // up to 255 hours.
  const CronTime at = CronTime{std::chrono::seconds(1774742400)} + std::chrono::hours(pick);
  const std::optional<CronTime> next = kubeload::controller::next_tick(parsed, at);
  if (next &&
      (*next <= at || next->time_since_epoch() % std::chrono::minutes(1) != CronTime::duration{})) {
    std::abort();
  }
  const std::optional<CronTime> latest = kubeload::controller::latest_tick(parsed, at);
  if (latest && *latest > at) std::abort();
  if (next && latest && kubeload::controller::next_tick(parsed, *latest) > next) std::abort();
  if (!(kubeload::controller::parse_cron(schedule, zone) == parsed)) std::abort();
  return 0;
}
