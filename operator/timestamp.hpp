#pragma once
// The operator's wall-clock times and how its documents write them: status
// times, Leases, log lines and Prometheus queries.

#include <chrono>
#include <optional>
#include <string>

namespace kubeload::controller {

using Timestamp = std::chrono::system_clock::time_point;

// RFC 3339 in UTC with seconds, as metav1.Time serializes.
std::string format_time(Timestamp time);
std::optional<Timestamp> parse_time(const std::string& text);
// Unix seconds with milliseconds ("1796032805.000"), as PromQL and
// Prometheus's API take a time.
std::string unix_seconds(Timestamp time);

}  // namespace kubeload::controller
