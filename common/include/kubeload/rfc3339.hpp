#pragma once
// RFC 3339 times, as Kubernetes writes them (metav1.Time, a credential
// plugin's expirationTimestamp): the one parser and formatter of the project.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace kubeload::rfc3339 {

// An RFC 3339 time ("2026-12-03T10:00:00Z", "...T11:00:00.5+01:00"), or
// nullopt; the fraction is kept to the clock's precision.
std::optional<std::chrono::system_clock::time_point> parse(std::string_view text);

// In UTC with whole seconds ("2026-12-03T10:00:00Z"), as metav1.Time serializes.
std::string format(std::chrono::system_clock::time_point time);

}  // namespace kubeload::rfc3339
