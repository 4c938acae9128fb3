#pragma once
// Instant queries against Prometheus's HTTP API (POST /api/v1/query), for
// the target's resource use (target_usage.hpp). Every call is bounded by a
// timeout and by the size of the answer it reads.

#include <chrono>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

#include "operator/views.hpp"

namespace kubeload::controller {

inline constexpr std::size_t kMaxPrometheusResponseBytes = 4 * 1024 * 1024;

// Prometheus did not answer, or not with a result. `transient`: worth
// asking again (no connection, a timeout, a 5xx); else the query itself was
// refused (4xx, an answer that is not Prometheus's).
class PrometheusError : public std::runtime_error {
 public:
  PrometheusError(const std::string& message, bool transient)
      : std::runtime_error(message), transient_(transient) {}
  bool transient() const noexcept { return transient_; }

 private:
  bool transient_;
};

class PrometheusClient {
 public:
  // base_url: http(s)://host:port[/path prefix]; checked by prometheus_url_problem.
  explicit PrometheusClient(std::string base_url,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // The value of an expression that yields one sample (a sum, a count) at
  // `at`; unset when it yields none. Throws PrometheusError.
  std::optional<double> scalar(const std::string& expression, Timestamp at) const;

 private:
  std::string base_url_;
  std::chrono::milliseconds timeout_;
};

// Why a --prometheus-url is unusable ("must be http:// or https://..."), if it is.
std::optional<std::string> prometheus_url_problem(const std::string& url);

}  // namespace kubeload::controller
