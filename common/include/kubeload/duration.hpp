#pragma once
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace kubeload {

// Go-style durations as Kubernetes users write them: "250ms", "30s", "2m",
// "1h30m", "1.5s", "100us" (also "µs", "ns"). A bare "0" is zero. Signs,
// numbers without a unit and values beyond int64 nanoseconds (~292 years) are
// rejected (nullopt). Fractions below one nanosecond are truncated.
std::optional<std::chrono::nanoseconds> parse_duration(std::string_view text);

// The shortest readable form that parses back to the same value: "0s", "30s",
// "2m", "1h30m", "1h5s", "250ms", "1.5s", "1.5ms", "100us", "12ns".
// Negative values are written with a leading '-' (parse_duration rejects them).
std::string format_duration(std::chrono::nanoseconds d);

}  // namespace kubeload
