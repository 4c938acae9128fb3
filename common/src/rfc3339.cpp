#include "kubeload/rfc3339.hpp"

#include <cstddef>
#include <cstdio>

#include "kubeload/text.hpp"

namespace kubeload::rfc3339 {

using std::chrono::system_clock;

std::optional<system_clock::time_point> parse(std::string_view text) {
  constexpr std::string_view kMask = "dddd-dd-ddTdd:dd:dd";
  if (text.size() < kMask.size() + 1) return std::nullopt;
  for (std::size_t i = 0; i < kMask.size(); ++i) {
    if (kMask[i] == 'd' ? !is_digit(text[i]) : text[i] != kMask[i]) return std::nullopt;
  }
  const auto number = [&](std::size_t at, std::size_t n) {
    int value = 0;
    for (std::size_t i = at; i < at + n; ++i) value = value * 10 + (text[i] - '0');
    return value;
  };
  const std::chrono::year_month_day date{std::chrono::year(number(0, 4)),
                                         std::chrono::month(static_cast<unsigned>(number(5, 2))),
                                         std::chrono::day(static_cast<unsigned>(number(8, 2)))};
  const int hour = number(11, 2), minute = number(14, 2), second = number(17, 2);
  if (!date.ok() || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  std::string_view rest = text.substr(kMask.size());
  system_clock::duration fraction{};
  if (rest.starts_with('.')) {
    std::size_t digits = 1;
    long long nanos = 0;
    int scale = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
      if (scale < 9) {
        nanos = nanos * 10 + (rest[digits] - '0');
        ++scale;
      }
      ++digits;
    }
    if (digits == 1) return std::nullopt;
    for (; scale < 9; ++scale) nanos *= 10;
    fraction = std::chrono::duration_cast<system_clock::duration>(std::chrono::nanoseconds(nanos));
    rest.remove_prefix(digits);
  }
  std::chrono::minutes offset{0};
  if (rest == "Z" || rest == "z") {
  } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' &&
             is_digit(rest[1]) && is_digit(rest[2]) && is_digit(rest[4]) && is_digit(rest[5])) {
    const int h = (rest[1] - '0') * 10 + (rest[2] - '0');
    const int m = (rest[4] - '0') * 10 + (rest[5] - '0');
    if (h > 23 || m > 59) return std::nullopt;
    offset = std::chrono::minutes(h * 60 + m) * (rest[0] == '-' ? -1 : 1);
  } else {
    return std::nullopt;
  }
  return system_clock::time_point(std::chrono::sys_days(date)) + std::chrono::hours(hour) +
         std::chrono::minutes(minute) + std::chrono::seconds(second) + fraction - offset;
}

std::string format(system_clock::time_point time) {
  const auto seconds = std::chrono::floor<std::chrono::seconds>(time);
  const auto day = std::chrono::floor<std::chrono::days>(seconds);
  const std::chrono::year_month_day date(day);
  const std::chrono::hh_mm_ss clock(seconds - day);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02dZ",
                static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()), static_cast<int>(clock.hours().count()),
                static_cast<int>(clock.minutes().count()),
                static_cast<int>(clock.seconds().count()));
  return buffer;
}

}  // namespace kubeload::rfc3339
