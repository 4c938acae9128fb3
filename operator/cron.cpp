#include "operator/cron.hpp"

#include <date/date.h>
#include <date/tz.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace kubeload::controller {
namespace {

constexpr std::array<std::string_view, 12> kMonthNames{"jan", "feb", "mar", "apr", "may", "jun",
                                                       "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<std::string_view, 7> kWeekdayNames{"sun", "mon", "tue", "wed",
                                                        "thu", "fri", "sat"};

struct FieldRule {
  std::string_view name;  // "minute", as an error names it
  unsigned min;
  unsigned max;
  const std::string_view* names;  // names[i] spells min + i; null: numbers only
  std::size_t name_count;
};

constexpr FieldRule kMinute{"minute", 0, 59, nullptr, 0};
constexpr FieldRule kHour{"hour", 0, 23, nullptr, 0};
constexpr FieldRule kDayOfMonth{"day of month", 1, 31, nullptr, 0};
constexpr FieldRule kMonth{"month", 1, 12, kMonthNames.data(), kMonthNames.size()};
constexpr FieldRule kDayOfWeek{"day of week", 0, 6, kWeekdayNames.data(), kWeekdayNames.size()};

struct Field {
  uint64_t bits = 0;
  bool star = false;
};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

class ScheduleError {
 public:
  explicit ScheduleError(std::string_view schedule) : schedule_(schedule) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument("spec.schedule \"" + schedule_ + "\": " + what);
  }

 private:
  std::string schedule_;
};

unsigned value_of(std::string_view text, const FieldRule& rule, const ScheduleError& error) {
  if (rule.names != nullptr) {
    const std::string name = lower(text);
    for (std::size_t i = 0; i < rule.name_count; ++i) {
      if (rule.names[i] == name) return rule.min + static_cast<unsigned>(i);
    }
  }
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) {
    error.fail(std::string(rule.name) + " \"" + std::string(text) + "\" is not a number" +
               (rule.names != nullptr ? " or a name" : ""));
  }
  if (value < rule.min) {
    error.fail(std::string(rule.name) + " " + std::to_string(value) + " is below " +
               std::to_string(rule.min));
  }
  if (value > rule.max) {
    error.fail(std::string(rule.name) + " " + std::to_string(value) + " is above " +
               std::to_string(rule.max));
  }
  return value;
}

// One comma-separated part: `*`, `?`, `a`, `a-b`, each with an optional `/step`.
Field part_of(std::string_view part, const FieldRule& rule, const ScheduleError& error) {
  std::string_view range = part;
  unsigned step = 1;
  bool stepped = false;
  if (const std::size_t slash = part.find('/'); slash != std::string_view::npos) {
    range = part.substr(0, slash);
    const std::string_view step_text = part.substr(slash + 1);
    const auto [end, ec] =
        std::from_chars(step_text.data(), step_text.data() + step_text.size(), step);
    if (step_text.empty() || ec != std::errc{} || end != step_text.data() + step_text.size() ||
        step == 0) {
      error.fail(std::string(rule.name) + " step \"" + std::string(step_text) +
                 "\" is not a positive number");
    }
    stepped = true;
  }
  Field field;
  unsigned first = 0;
  unsigned last = 0;
  if (range == "*" || range == "?") {
    first = rule.min;
    last = rule.max;
    field.star = step == 1;
  } else if (const std::size_t dash = range.find('-'); dash != std::string_view::npos) {
    first = value_of(range.substr(0, dash), rule, error);
    last = value_of(range.substr(dash + 1), rule, error);
    if (first > last) {
      error.fail(std::string(rule.name) + " range \"" + std::string(range) +
                 "\" begins after it ends");
    }
  } else {
    first = value_of(range, rule, error);
    last = stepped ? rule.max : first;  // `a/n`: from a to the maximum
  }
  for (unsigned v = first; v <= last; v += step) field.bits |= uint64_t{1} << v;
  return field;
}

Field field_of(std::string_view text, const FieldRule& rule, const ScheduleError& error) {
  Field field;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view part = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (part.empty())
      error.fail(std::string(rule.name) + " \"" + std::string(text) + "\" has an empty item");
    const Field one = part_of(part, rule, error);
    field.bits |= one.bits;
    field.star = field.star || one.star;
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return field;
}

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    const std::size_t start = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

std::string_view descriptor(std::string_view word) {
  if (word == "@yearly" || word == "@annually") return "0 0 1 1 *";
  if (word == "@monthly") return "0 0 1 * *";
  if (word == "@weekly") return "0 0 * * 0";
  if (word == "@daily" || word == "@midnight") return "0 0 * * *";
  if (word == "@hourly") return "0 * * * *";
  return {};
}

template <std::size_t N>
std::bitset<N> bits_of(uint64_t bits) {
  return std::bitset<N>(bits & ((N >= 64) ? ~uint64_t{0} : ((uint64_t{1} << N) - 1)));
}

// ---- ticks

using namespace std::chrono;

// Robfig gives up after five years; a day more covers the leap days.
constexpr int kSearchDays = 5 * 366 + 1;

bool day_matches(const CronSchedule& s, date::local_days day) {
  const date::year_month_day ymd{day};
  if (!s.months[static_cast<unsigned>(ymd.month())]) return false;
  const bool dom = s.days_of_month[static_cast<unsigned>(ymd.day())];
  const bool dow = s.days_of_week[date::weekday{day}.c_encoding()];
  if (s.any_day_of_month || s.any_day_of_week) return dom && dow;
  return dom || dow;
}

// Every tick of one local day as instants, in local order. A local time
// that does not exist gives none, one that happens twice gives both.
template <typename Visit>
void ticks_of_day(const CronSchedule& s, const date::time_zone& zone, date::local_days day,
                  Visit visit) {
  for (unsigned h = 0; h < 24; ++h) {
    if (!s.hours[h]) continue;
    for (unsigned m = 0; m < 60; ++m) {
      if (!s.minutes[m]) continue;
      const date::local_seconds local = day + hours{h} + minutes{m};
      const date::local_info info = zone.get_info(local);
      const auto at = [&](seconds offset) {
        return CronTime{duration_cast<CronTime::duration>(local.time_since_epoch() - offset)};
      };
      switch (info.result) {
        case date::local_info::unique:
          visit(at(info.first.offset));
          break;
        case date::local_info::ambiguous:
          visit(at(info.first.offset));
          visit(at(info.second.offset));
          break;
        case date::local_info::nonexistent:
          break;
      }
    }
  }
}

const date::time_zone& zone_of(const CronSchedule& s) {
  return *date::locate_zone(s.time_zone);
}

date::local_days local_day(const date::time_zone& zone, CronTime t) {
  return floor<date::days>(zone.to_local(floor<seconds>(t)));
}

}  // namespace

CronSchedule parse_cron(std::string_view schedule, std::string_view time_zone) {
  const ScheduleError error(schedule);
  std::vector<std::string_view> fields = words(schedule);
  if (fields.empty()) error.fail("is empty");
  if (fields.front().starts_with("TZ=") || fields.front().starts_with("CRON_TZ=")) {
    const std::string_view zone = fields.front().substr(fields.front().find('=') + 1);
    error.fail(
        "a time zone in the schedule is not read (CronJob refuses it too); set "
        "spec.timeZone: " +
        std::string(zone));
  }
  if (fields.front().starts_with("@")) {
    const std::string_view expanded = descriptor(lower(fields.front()));
    if (fields.size() != 1 || expanded.empty()) {
      error.fail("\"" + std::string(fields.front()) +
                 "\" is not one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, "
                 "@hourly");
    }
    fields = words(expanded);
  }
  if (fields.size() != 5) {
    error.fail("has " + std::to_string(fields.size()) +
               " fields, not 5 (minute hour day-of-month month day-of-week)");
  }
  CronSchedule out;
  out.minutes = bits_of<60>(field_of(fields[0], kMinute, error).bits);
  out.hours = bits_of<24>(field_of(fields[1], kHour, error).bits);
  const Field dom = field_of(fields[2], kDayOfMonth, error);
  out.days_of_month = bits_of<32>(dom.bits);
  out.any_day_of_month = dom.star;
  out.months = bits_of<13>(field_of(fields[3], kMonth, error).bits);
  const Field dow = field_of(fields[4], kDayOfWeek, error);
  out.days_of_week = bits_of<7>(dow.bits);
  out.any_day_of_week = dow.star;
  out.time_zone = time_zone.empty() ? std::string("UTC") : std::string(time_zone);
  try {
    (void)date::locate_zone(out.time_zone);
  } catch (const std::exception&) {
    throw std::invalid_argument("spec.timeZone \"" + std::string(time_zone) +
                                "\": not a time zone of the IANA database (such as Europe/Berlin "
                                "or America/New_York)");
  }
  return out;
}

std::optional<CronTime> next_tick(const CronSchedule& s, CronTime after) {
  const date::time_zone& zone = zone_of(s);
  // A day earlier too: around a transition an instant's local day and a
  // tick's may differ.
  date::local_days day = local_day(zone, after) - date::days{1};
  for (int i = 0; i <= kSearchDays; ++i, day += date::days{1}) {
    if (!day_matches(s, day)) continue;
    std::optional<CronTime> best;
    ticks_of_day(s, zone, day, [&](CronTime tick) {
      if (tick > after && (!best || tick < *best)) best = tick;
    });
    if (best) return best;
  }
  return std::nullopt;
}

std::optional<CronTime> latest_tick(const CronSchedule& s, CronTime until) {
  const date::time_zone& zone = zone_of(s);
  date::local_days day = local_day(zone, until) + date::days{1};
  for (int i = 0; i <= kSearchDays; ++i, day -= date::days{1}) {
    if (!day_matches(s, day)) continue;
    std::optional<CronTime> best;
    ticks_of_day(s, zone, day, [&](CronTime tick) {
      if (tick <= until && (!best || tick > *best)) best = tick;
    });
    if (best) return best;
  }
  return std::nullopt;
}

}  // namespace kubeload::controller
