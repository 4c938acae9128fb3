#include "operator/timestamp.hpp"

#include <cstdio>

#include "kubeload/rfc3339.hpp"

namespace kubeload::controller {

std::string format_time(Timestamp time) {
  return rfc3339::format(time);
}

std::string unix_seconds(Timestamp time) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f",
                std::chrono::duration<double>(time.time_since_epoch()).count());
  return buffer;
}

std::optional<Timestamp> parse_time(const std::string& value) {
  // YYYY-MM-DDTHH:MM:SS[.fraction]Z: what the API server writes, in UTC;
  // sub-second precision is not kept.
  if (!value.ends_with('Z')) return std::nullopt;
  const std::optional<Timestamp> time = rfc3339::parse(value);
  if (!time) return std::nullopt;
  return std::chrono::floor<std::chrono::seconds>(*time);
}

}  // namespace kubeload::controller
