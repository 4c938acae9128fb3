#include "kubeload/threshold.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <system_error>

#include "kubeload/result.hpp"
#include "kubeload/text.hpp"

namespace kubeload {
namespace {

struct MetricName {
  std::string_view name;
  ThresholdMetric metric;
};

constexpr std::array<MetricName, 16> kMetrics{{
    {"p50", ThresholdMetric::p50},
    {"p90", ThresholdMetric::p90},
    {"p95", ThresholdMetric::p95},
    {"p99", ThresholdMetric::p99},
    {"p999", ThresholdMetric::p999},
    {"max", ThresholdMetric::max},
    {"mean", ThresholdMetric::mean},
    {"min", ThresholdMetric::min},
    {"errorRate", ThresholdMetric::errorRate},
    {"rps", ThresholdMetric::rps},
    {"requests", ThresholdMetric::requests},
    {"failures", ThresholdMetric::failures},
    {"dropped", ThresholdMetric::dropped},
    {"late", ThresholdMetric::late},
    {"iterations", ThresholdMetric::iterations},
    {"failedIterations", ThresholdMetric::failedIterations},
}};

// "p50, p90, ..., min": the metrics `iteration.` takes, for its error message.
std::string latency_metric_names() {
  std::string names;
  for (const MetricName& m : kMetrics) {
    if (!is_latency(m.metric)) continue;
    names += (names.empty() ? "" : ", ") + std::string(m.name);
  }
  return names;
}

bool is_name_char(char c) {
  return is_alnum(c) || c == '-' || c == '_';
}

// Request names become metric labels: [a-z0-9]([-a-z0-9_]*[a-z0-9])?
bool is_request_name(std::string_view name) {
  if (name.empty()) return false;
  const auto lower_or_digit = [](char c) { return is_digit(c) || is_lower(c); };
  if (!lower_or_digit(name.front()) || !lower_or_digit(name.back())) return false;
  return std::all_of(name.begin(), name.end(),
                     [&](char c) { return lower_or_digit(c) || c == '-' || c == '_'; });
}

// Reads threshold text left to right; every failure names what was expected
// and quotes the whole expression so the message stands on its own.
class ThresholdParser {
 public:
  explicit ThresholdParser(std::string_view expression) : text_(expression) {}

  std::variant<Threshold, std::string> parse() {
    Threshold threshold;
    threshold.expression = std::string(text_);
    skip_spaces();
    if (pos_ == text_.size()) return fail("empty threshold, expected METRIC OP VALUE");

    std::string_view first = take_while(is_name_char);
    if (first.empty()) return fail("expected a metric at the start");
    std::string_view metric_name = first;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      if (!is_request_name(first)) return fail("invalid request name " + quote(first));
      threshold.request = std::string(first);
      metric_name = take_while(is_name_char);
      if (metric_name.empty()) return fail("expected a metric after " + quote(first) + ".");
    }
    const auto known = std::find_if(kMetrics.begin(), kMetrics.end(),
                                    [&](const MetricName& m) { return m.name == metric_name; });
    if (known == kMetrics.end()) return fail("unknown metric " + quote(metric_name));
    threshold.metric = known->metric;
    if (threshold.request == kIterationRow) {
      // Reserved: the iteration durations, never a request or a scenario.
      if (!is_latency(threshold.metric)) {
        return fail(quote(metric_name) + " is not an iteration metric (" +
                    std::string(kIterationRow) + ". takes " + latency_metric_names() + ")");
      }
      threshold.scope = ThresholdScope::iteration;
      threshold.request.clear();
    } else if (!threshold.request.empty()) {
      threshold.scope =
          counts_iterations(threshold.metric) ? ThresholdScope::scenario : ThresholdScope::request;
    }

    skip_spaces();
    if (!read_operator(threshold.op)) {
      return fail("expected an operator (<, <=, >, >=, ==) after " + quote(metric_name));
    }

    skip_spaces();
    const std::string_view op_text = to_string(threshold.op);
    if (pos_ < text_.size() && text_[pos_] == '-') {
      return fail("negative value " + quote(text_.substr(pos_)));
    }
    const size_t number_start = pos_;
    take_while(is_digit);
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      take_while(is_digit);
    }
    const std::string_view number = text_.substr(number_start, pos_ - number_start);
    double value = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (number.empty() || ec != std::errc() || end != number.data() + number.size() ||
        !std::isfinite(value)) {
      return fail("expected a number after " + quote(op_text));
    }

    skip_spaces();
    const std::string_view unit = take_while([](char c) { return !is_blank(c); });
    skip_spaces();
    if (pos_ != text_.size()) return fail("unexpected " + quote(text_.substr(pos_)));

    if (std::string error = apply_unit(threshold, value, unit); !error.empty()) return fail(error);
    return threshold;
  }

 private:
  std::string fail(const std::string& what) const { return what + " in " + quote(text_); }

  static std::string quote(std::string_view s) { return "\"" + std::string(s) + "\""; }

  void skip_spaces() {
    while (pos_ < text_.size() && is_blank(text_[pos_])) ++pos_;
  }

  template <typename Predicate>
  std::string_view take_while(Predicate predicate) {
    const size_t start = pos_;
    while (pos_ < text_.size() && predicate(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  bool read_operator(ThresholdOp& op) {
    const std::string_view rest = text_.substr(pos_);
    // Two-character operators first, so "<=" is not read as "<" then "=".
    constexpr std::array<std::pair<std::string_view, ThresholdOp>, 5> kOperators{{
        {"<=", ThresholdOp::le},
        {">=", ThresholdOp::ge},
        {"==", ThresholdOp::eq},
        {"<", ThresholdOp::lt},
        {">", ThresholdOp::gt},
    }};
    for (const auto& [symbol, candidate] : kOperators) {
      if (rest.starts_with(symbol)) {
        op = candidate;
        pos_ += symbol.size();
        return true;
      }
    }
    return false;
  }

  // Converts `value` written with `unit` to the metric's canonical unit, or
  // says why the unit does not fit the metric. Empty string: fine.
  static std::string apply_unit(Threshold& threshold, double value, std::string_view unit) {
    const std::string metric(to_string(threshold.metric));
    if (is_latency(threshold.metric)) {
      if (unit.empty() || unit == "ms") {
        threshold.value = value;
      } else if (unit == "s") {
        threshold.value = value * 1000;
      } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {
        threshold.value = value / 1000;
      } else {
        return "unit " + quote(unit) + " is not valid for " + metric + " (use ms, s or us)";
      }
      return {};
    }
    switch (threshold.metric) {
      case ThresholdMetric::errorRate:
        if (unit == "%") {
          if (value > 100) return "errorRate " + format_number(value) + "% is above 100%";
          threshold.value = value / 100;
        } else if (unit.empty()) {
          if (value > 1) {
            return "errorRate ratio " + format_number(value) + " is above 1 (write " +
                   format_number(value) + "% for a percentage)";
          }
          threshold.value = value;
        } else {
          return "unit " + quote(unit) + " is not valid for errorRate (use % or a ratio)";
        }
        return {};
      case ThresholdMetric::rps:
        if (!unit.empty() && unit != "/s") {
          return "unit " + quote(unit) + " is not valid for rps (use a bare number)";
        }
        threshold.value = value;
        return {};
      default:  // requests, failures, dropped, late, iterations, failedIterations: counts
        if (!unit.empty()) {
          return "unit " + quote(unit) + " is not valid for " + metric + " (use a bare number)";
        }
        threshold.value = value;
        return {};
    }
  }

  static std::string format_number(double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// At least `significant` significant digits and at least `min_decimals`
// decimals, so 184 ms reads "184.0" and 0.412 ms keeps its digits.
std::string format_significant(double value, int significant, int min_decimals, bool trim_zeros) {
  int decimals = min_decimals;
  if (value != 0 && std::isfinite(value)) {
    const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(value))));
    decimals = std::clamp(significant - 1 - magnitude, min_decimals, 12);
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  std::string text = buffer;
  if (trim_zeros && text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

bool compare(double observed, ThresholdOp op, double limit) {
  switch (op) {
    case ThresholdOp::lt:
      return observed < limit;
    case ThresholdOp::le:
      return observed <= limit;
    case ThresholdOp::gt:
      return observed > limit;
    case ThresholdOp::ge:
      return observed >= limit;
    case ThresholdOp::eq:
      return observed == limit;
  }
  return false;
}

}  // namespace

std::string_view to_string(ThresholdMetric metric) noexcept {
  for (const MetricName& m : kMetrics) {
    if (m.metric == metric) return m.name;
  }
  return "unknown";
}

std::string_view to_string(ThresholdOp op) noexcept {
  switch (op) {
    case ThresholdOp::lt:
      return "<";
    case ThresholdOp::le:
      return "<=";
    case ThresholdOp::gt:
      return ">";
    case ThresholdOp::ge:
      return ">=";
    case ThresholdOp::eq:
      return "==";
  }
  return "?";
}

bool counts_iterations(ThresholdMetric metric) noexcept {
  return metric == ThresholdMetric::iterations || metric == ThresholdMetric::failedIterations;
}

bool is_latency(ThresholdMetric metric) {
  switch (metric) {
    case ThresholdMetric::p50:
    case ThresholdMetric::p90:
    case ThresholdMetric::p95:
    case ThresholdMetric::p99:
    case ThresholdMetric::p999:
    case ThresholdMetric::max:
    case ThresholdMetric::mean:
    case ThresholdMetric::min:
      return true;
    default:
      return false;
  }
}

std::variant<Threshold, std::string> parse_threshold(std::string_view expression) {
  return ThresholdParser(expression).parse();
}

namespace {

// The row a threshold names, as evaluate reads it; nullptr members when the
// run does not have it.
struct Subject {
  const Result* result = nullptr;            // ThresholdScope::run and ::request
  const ScenarioResult* scenario = nullptr;  // ThresholdScope::scenario
};

Subject subject_of(const Threshold& threshold, const RunResult& run) {
  switch (threshold.scope) {
    case ThresholdScope::run:
      return {&run.result, nullptr};
    case ThresholdScope::request: {
      const auto row =
          std::find_if(run.request_results.begin(), run.request_results.end(),
                       [&](const NamedResult& named) { return named.name == threshold.request; });
      return {row == run.request_results.end() ? nullptr : &row->result, nullptr};
    }
    case ThresholdScope::scenario: {
      const auto row = std::find_if(
          run.scenarios.begin(), run.scenarios.end(),
          [&](const ScenarioResult& scenario) { return scenario.name == threshold.request; });
      return {nullptr, row == run.scenarios.end() ? nullptr : &*row};
    }
    case ThresholdScope::iteration:
      return {};
  }
  return {};
}

// iterations and failedIterations of the scenario row, or of every
// scenario; nullopt when the run has no such row (or no scenarios at all).
std::optional<uint64_t> iteration_count(const Threshold& threshold, const RunResult& run,
                                        const Subject& subject) {
  const auto count = [&](const ScenarioResult& s) {
    return threshold.metric == ThresholdMetric::iterations ? s.iterations : s.iterations_failed;
  };
  if (threshold.scope == ThresholdScope::scenario) {
    if (!subject.scenario) return std::nullopt;
    return count(*subject.scenario);
  }
  if (threshold.scope != ThresholdScope::run || run.scenarios.empty()) return std::nullopt;
  uint64_t sum = 0;
  for (const ScenarioResult& scenario : run.scenarios) sum += count(scenario);
  return sum;
}

}  // namespace

ThresholdOutcome evaluate(const Threshold& threshold, const RunResult& run) {
  ThresholdOutcome outcome{threshold.expression, "n/a", false, std::nullopt};
  const Subject subject = subject_of(threshold, run);

  double observed = 0;
  if (counts_iterations(threshold.metric)) {
    const std::optional<uint64_t> count = iteration_count(threshold, run, subject);
    if (!count) return outcome;
    observed = static_cast<double>(*count);
    outcome.observed = std::to_string(*count);
  } else if (threshold.scope == ThresholdScope::iteration) {
    const Histogram durations = run.iteration_durations();
    if (!is_latency(threshold.metric) || durations.total_count() == 0) return outcome;
    const std::optional<double> millis =
        LatencySummary::of(durations).get(to_string(threshold.metric));
    if (!millis) return outcome;
    observed = *millis;
    outcome.observed = format_significant(observed, 3, 1, false) + "ms";
  } else if (!subject.result) {
    return outcome;
  } else if (is_latency(threshold.metric)) {
    const Result* result = subject.result;
    if (result->latency.total_count() == 0) return outcome;
    const std::optional<double> millis =
        LatencySummary::of(result->latency).get(to_string(threshold.metric));
    if (!millis) return outcome;
    observed = *millis;
    outcome.observed = format_significant(observed, 3, 1, false) + "ms";
  } else {
    const Result* result = subject.result;
    switch (threshold.metric) {
      case ThresholdMetric::errorRate:
        if (result->requests == 0) return outcome;
        observed = result->error_rate();
        outcome.observed = format_significant(observed * 100, 3, 0, true) + "%";
        break;
      case ThresholdMetric::rps:
        observed = result->rps();
        outcome.observed = format_significant(observed, 3, 1, false) + "/s";
        break;
      case ThresholdMetric::requests:
        observed = static_cast<double>(result->requests);
        outcome.observed = std::to_string(result->requests);
        break;
      case ThresholdMetric::failures:
        observed = static_cast<double>(result->failures());
        outcome.observed = std::to_string(result->failures());
        break;
      case ThresholdMetric::dropped:
        observed = static_cast<double>(result->errors.dropped);
        outcome.observed = std::to_string(result->errors.dropped);
        break;
      case ThresholdMetric::late:
        if (!result->rate) return outcome;
        observed = static_cast<double>(result->rate->late);
        outcome.observed = std::to_string(result->rate->late);
        break;
      default:
        return outcome;
    }
  }
  outcome.value = observed;
  outcome.passed = compare(observed, threshold.op, threshold.value);
  return outcome;
}

}  // namespace kubeload
