#include "kubeload/comparison.hpp"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "kubeload/names.hpp"
#include "kubeload/text.hpp"

namespace kubeload {
namespace {

void check_confidence(double confidence) {
  if (!(confidence > 0 && confidence < 1)) {
    throw std::invalid_argument("confidence " + std::to_string(confidence) +
                                " is not between 0 and 1");
  }
}

// The two-sided quantile: t_{(1+c)/2, df}. Boost.Math computes it (an
// inverse incomplete beta), well tested where a hand-rolled series is not.
double t_quantile(double confidence, double degrees_of_freedom) {
  const boost::math::students_t distribution(degrees_of_freedom);
  return boost::math::quantile(distribution, (1 + confidence) / 2);
}

// Shortest text of a number up to 6 significant digits, locale-independent:
// factors, offsets and the confidence ("1.05", "0.5", "95").
std::string short_number(double value) {
  std::array<char, 64> buffer{};
  const auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value,
                                          std::chars_format::general, 6);
  if (error != std::errc{}) return "-";
  return std::string(buffer.data(), end);
}

bool is_name_char(char c) {
  return is_alnum(c) || c == '-' || c == '_';
}

// How a metric's margin is shown: values in a display unit (percent for a
// ratio, microseconds of CPU) with its suffix.
struct DisplayUnit {
  double scale;
  std::string_view suffix;  // after the number
};

DisplayUnit display_unit(ComparedMetric metric) {
  switch (unit_of(metric)) {
    case ComparedUnit::milliseconds:
      return {1, " ms"};
    case ComparedUnit::ratio:
      return {100, "%"};
    case ComparedUnit::per_second:
      return {1, "/s"};
    case ComparedUnit::core_seconds:
      return {1e6, " us"};
  }
  return {1, ""};
}

// Reads comparison text left to right, as kubeload/threshold.cpp reads a
// threshold; every failure names the bad part and quotes the expression.
class ComparisonParser {
 public:
  explicit ComparisonParser(std::string_view expression) : text_(expression) {}

  std::variant<Comparison, std::string> parse() {
    Comparison comparison;
    comparison.expression = std::string(text_);
    skip_spaces();
    if (pos_ == text_.size()) {
      return fail("empty comparison, expected VARIANT.METRIC OP VARIANT.METRIC");
    }

    std::optional<ComparedMetric> left_metric;
    if (std::string error = read_side("at the start", comparison.left, left_metric);
        !error.empty()) {
      return fail(error);
    }
    const std::string left_text = comparison.left + "." + std::string(to_string(*left_metric));

    skip_spaces();
    const std::string_view op_start = text_.substr(pos_);
    if (op_start.starts_with("==")) {
      return fail(
          "operator \"==\" is not allowed (an interval never proves equality; use <= or >=)");
    }
    if (!read_operator(comparison.op)) {
      return fail("expected an operator (<, <=, >, >=) after " + quote(left_text));
    }
    const std::string op_text(to_string(comparison.op));

    skip_spaces();
    std::optional<ComparedMetric> right_metric;
    if (std::string error = read_side("after " + quote(op_text), comparison.right, right_metric);
        !error.empty()) {
      return fail(error);
    }
    const std::string right_text = comparison.right + "." + std::string(to_string(*right_metric));
    if (*right_metric != *left_metric) {
      return fail("metrics differ: " + quote(left_text) + " against " + quote(right_text) +
                  " (compare one metric)");
    }
    if (comparison.right == comparison.left) {
      return fail("variant " + quote(comparison.left) + " is compared with itself");
    }
    comparison.metric = *left_metric;

    skip_spaces();
    if (pos_ < text_.size() && text_[pos_] == '*') {
      ++pos_;
      skip_spaces();
      const std::string_view number = read_number();
      double factor = 0;
      if (!to_double(number, factor)) return fail("expected a number after \"*\"");
      if (factor <= 0) return fail("factor " + quote(number) + " is not above 0");
      comparison.factor = factor;
      skip_spaces();
    }
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) {
      const char sign = text_[pos_++];
      skip_spaces();
      const std::string_view number = read_number();
      double value = 0;
      if (!to_double(number, value)) {
        return fail("expected a number after " + quote(std::string_view(&sign, 1)));
      }
      skip_spaces();
      const std::string_view unit = take_while([](char c) { return !is_blank(c); });
      std::optional<double> canonical;
      if (std::string error = apply_unit(comparison.metric, value, unit, canonical);
          !error.empty()) {
        return fail(error);
      }
      comparison.offset = sign == '-' ? -*canonical : *canonical;
      skip_spaces();
    }
    if (pos_ != text_.size()) return fail("unexpected " + quote(text_.substr(pos_)));
    return comparison;
  }

 private:
  std::string fail(const std::string& what) const { return what + " in " + quote(text_); }

  void skip_spaces() {
    while (pos_ < text_.size() && is_blank(text_[pos_])) ++pos_;
  }

  template <typename Predicate>
  std::string_view take_while(Predicate predicate) {
    const size_t start = pos_;
    while (pos_ < text_.size() && predicate(text_[pos_])) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  // VARIANT.METRIC; an empty string, or what is wrong (`where` says where a
  // missing side was expected).
  std::string read_side(const std::string& where, std::string& variant,
                        std::optional<ComparedMetric>& metric) {
    const std::string_view name = take_while(is_name_char);
    if (name.empty()) return "expected VARIANT.METRIC " + where;
    if (pos_ == text_.size() || text_[pos_] != '.') {
      return "expected \".\" and a metric after variant " + quote(name);
    }
    ++pos_;
    if (!is_dns1123_label(name)) {
      return "invalid variant name " + quote(name) +
             " (a DNS-1123 label: lower-case letters, digits and '-')";
    }
    variant = std::string(name);
    // Letters and digits only: "a.p99-2ms" is a.p99 minus 2 ms.
    const std::string_view metric_name = take_while(is_alnum);
    if (metric_name.empty()) return "expected a metric after " + quote(std::string(name) + ".");
    metric = compared_metric_from(metric_name);
    if (!metric) {
      std::string known;
      for (const ComparedMetricName& m : kComparedMetrics) {
        known += known.empty() ? "" : ", ";
        known += m.name;
      }
      return "unknown metric " + quote(metric_name) + " (one of " + known + ")";
    }
    return {};
  }

  bool read_operator(ThresholdOp& op) {
    const std::string_view rest = text_.substr(pos_);
    // Two-character operators first, so "<=" is not read as "<" then "=".
    for (const ThresholdOp candidate :
         {ThresholdOp::le, ThresholdOp::ge, ThresholdOp::lt, ThresholdOp::gt}) {
      const std::string_view symbol = to_string(candidate);
      if (rest.starts_with(symbol)) {
        op = candidate;
        pos_ += symbol.size();
        return true;
      }
    }
    return false;
  }

  // digits[.digits] or .digits; no sign, no exponent.
  std::string_view read_number() {
    const size_t start = pos_;
    take_while(is_digit);
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      take_while(is_digit);
    }
    return text_.substr(start, pos_ - start);
  }

  static bool to_double(std::string_view number, double& value) {
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    return !number.empty() && ec == std::errc() && end == number.data() + number.size() &&
           std::isfinite(value);
  }

  // `value` written with `unit`, in the metric's canonical unit; or why the
  // unit does not fit the metric.
  static std::string apply_unit(ComparedMetric metric, double value, std::string_view unit,
                                std::optional<double>& canonical) {
    const std::string name(to_string(metric));
    const bool micro = unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs";
    switch (unit_of(metric)) {
      case ComparedUnit::milliseconds:
        if (unit.empty() || unit == "ms") {
          canonical = value;
        } else if (unit == "s") {
          canonical = value * 1000;
        } else if (micro) {
          canonical = value / 1000;
        } else {
          return "unit " + quote(unit) + " is not valid for " + name + " (use ms, s or us)";
        }
        return {};
      case ComparedUnit::ratio:
        if (unit == "%") {
          if (value > 100) return "errorRate offset " + short_number(value) + "% is above 100%";
          canonical = value / 100;
        } else if (unit.empty()) {
          if (value > 1) {
            return "errorRate offset " + short_number(value) + " is above 1 (write " +
                   short_number(value) + "% for a percentage)";
          }
          canonical = value;
        } else {
          return "unit " + quote(unit) + " is not valid for errorRate (use % or a ratio)";
        }
        return {};
      case ComparedUnit::per_second:
        if (!unit.empty() && unit != "/s") {
          return "unit " + quote(unit) + " is not valid for rps (use a bare number)";
        }
        canonical = value;
        return {};
      case ComparedUnit::core_seconds:
        if (unit == "s") {
          canonical = value;
        } else if (unit == "ms") {
          canonical = value / 1e3;
        } else if (micro) {
          canonical = value / 1e6;
        } else if (unit.empty()) {
          return "cpuPerRequest offset " + short_number(value) + " needs a unit (s, ms or us)";
        } else {
          return "unit " + quote(unit) + " is not valid for cpuPerRequest (use s, ms or us)";
        }
        return {};
    }
    return "unknown metric " + quote(name);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// "b.p99 - a.p99*1.05 - 2 ms": what the margin is, in the display unit.
std::string margin_text(const Comparison& comparison) {
  const std::string_view metric = to_string(comparison.metric);
  std::string text = comparison.left + "." + std::string(metric) + " - " + comparison.right + "." +
                     std::string(metric);
  if (comparison.factor != 1) text += "*" + short_number(comparison.factor);
  if (comparison.offset != 0) {
    const DisplayUnit unit = display_unit(comparison.metric);
    text += comparison.offset > 0 ? " - " : " + ";
    text += short_number(std::fabs(comparison.offset) * unit.scale);
    text += unit.suffix;
  }
  return text;
}

// Decimals that show the interval's half width to 2 significant digits
// (the mean's magnitude when the width is 0), so mean and bounds line up.
int interval_decimals(const MeanInterval& interval, double scale) {
  double reference = (interval.high - interval.low) / 2 * scale;
  if (!(reference > 0)) reference = std::fabs(interval.mean) * scale;
  if (!(reference > 0) || !std::isfinite(reference)) return 2;
  const int magnitude = static_cast<int>(std::floor(std::log10(reference)));
  return std::clamp(1 - magnitude, 0, 9);
}

bool satisfies_whole(ThresholdOp op, const MeanInterval& m) {
  switch (op) {
    case ThresholdOp::lt:
      return m.high < 0;
    case ThresholdOp::le:
      return m.high <= 0;
    case ThresholdOp::gt:
      return m.low > 0;
    case ThresholdOp::ge:
      return m.low >= 0;
    case ThresholdOp::eq:
      return false;  // parse_comparison never gives it
  }
  return false;
}

bool violates_whole(ThresholdOp op, const MeanInterval& m) {
  switch (op) {
    case ThresholdOp::lt:
      return m.low >= 0;
    case ThresholdOp::le:
      return m.low > 0;
    case ThresholdOp::gt:
      return m.high <= 0;
    case ThresholdOp::ge:
      return m.high < 0;
    case ThresholdOp::eq:
      return false;
  }
  return false;
}

// The smallest n in [current + 1, kMaxComparisonRounds] whose half width
// t_{(1+c)/2, n-1} * s / sqrt(n) is below |mean|, or nullopt when even
// kMaxComparisonRounds is not. The half width falls as n grows (t falls,
// sqrt(n) rises), so a binary search finds it.
std::optional<std::uint32_t> rounds_to_decide(const MeanInterval& margin) {
  const auto narrow_enough = [&](std::uint32_t n) {
    const double half_width =
        t_quantile(margin.confidence, n - 1.0) * margin.std_dev / std::sqrt(static_cast<double>(n));
    return half_width < std::fabs(margin.mean);
  };
  if (margin.n >= kMaxComparisonRounds || !narrow_enough(kMaxComparisonRounds)) {
    return std::nullopt;
  }
  auto low = static_cast<std::uint32_t>(margin.n + 1);
  std::uint32_t high = kMaxComparisonRounds;
  while (low < high) {
    const std::uint32_t middle = low + (high - low) / 2;
    if (narrow_enough(middle)) {
      high = middle;
    } else {
      low = middle + 1;
    }
  }
  return low;
}

std::string rounds_word(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " round" : " rounds");
}

}  // namespace

std::string_view to_string(ComparedMetric metric) noexcept {
  for (const ComparedMetricName& m : kComparedMetrics) {
    if (m.metric == metric) return m.name;
  }
  return "unknown";
}

std::optional<ComparedMetric> compared_metric_from(std::string_view name) {
  for (const ComparedMetricName& m : kComparedMetrics) {
    if (m.name == name) return m.metric;
  }
  return std::nullopt;
}

ComparedUnit unit_of(ComparedMetric metric) noexcept {
  for (const ComparedMetricName& m : kComparedMetrics) {
    if (m.metric == metric) return m.unit;
  }
  return ComparedUnit::milliseconds;
}

std::variant<Comparison, std::string> parse_comparison(std::string_view expression) {
  return ComparisonParser(expression).parse();
}

std::string_view to_string(ComparisonOutcome outcome) noexcept {
  switch (outcome) {
    case ComparisonOutcome::Pass:
      return "Pass";
    case ComparisonOutcome::Fail:
      return "Fail";
    case ComparisonOutcome::Inconclusive:
      return "Inconclusive";
  }
  return "Inconclusive";
}

std::optional<MeanInterval> mean_interval(std::span<const double> values, double confidence) {
  check_confidence(confidence);
  for (const double value : values) {
    if (!std::isfinite(value)) throw std::invalid_argument("a value is not finite");
  }
  if (values.size() < 2) return std::nullopt;
  const double n = static_cast<double>(values.size());
  double sum = 0;
  for (const double value : values) sum += value;
  const double mean = sum / n;
  // Two passes: the squared deviations from the mean, not sum(x^2) - n*mean^2,
  // which loses every digit when the spread is small next to the mean.
  double squares = 0;
  for (const double value : values) squares += (value - mean) * (value - mean);
  const double std_dev = std::sqrt(squares / (n - 1));
  MeanInterval interval;
  interval.mean = mean;
  interval.std_dev = std_dev;
  interval.n = values.size();
  interval.confidence = confidence;
  const double half_width =
      std_dev == 0 ? 0 : t_quantile(confidence, n - 1) * std_dev / std::sqrt(n);
  interval.low = mean - half_width;
  interval.high = mean + half_width;
  return interval;
}

std::optional<MeanInterval> paired_difference(std::span<const double> left,
                                              std::span<const double> right, double confidence) {
  if (left.size() != right.size()) {
    throw std::invalid_argument("paired values differ in count: " + std::to_string(left.size()) +
                                " and " + std::to_string(right.size()));
  }
  std::vector<double> differences(left.size());
  std::transform(left.begin(), left.end(), right.begin(), differences.begin(),
                 [](double l, double r) { return l - r; });
  return mean_interval(differences, confidence);
}

ComparisonDecision decide(const Comparison& comparison, std::span<const double> left,
                          std::span<const double> right, double confidence) {
  if (left.size() != right.size()) {
    throw std::invalid_argument("paired values differ in count: " + std::to_string(left.size()) +
                                " and " + std::to_string(right.size()));
  }
  std::vector<double> margins(left.size());
  std::transform(left.begin(), left.end(), right.begin(), margins.begin(), [&](double l, double r) {
    return l - (r * comparison.factor + comparison.offset);
  });

  ComparisonDecision decision;
  decision.margin = mean_interval(margins, confidence);
  if (!decision.margin) {
    decision.message = comparison.expression + ": inconclusive, " + rounds_word(margins.size()) +
                       " (an interval needs 2)";
    return decision;
  }
  const MeanInterval& margin = *decision.margin;
  const DisplayUnit unit = display_unit(comparison.metric);
  const int decimals = interval_decimals(margin, unit.scale);
  std::string message = margin_text(comparison) + " is " +
                        fixed(margin.mean * unit.scale, decimals) + std::string(unit.suffix) +
                        " [" + fixed(margin.low * unit.scale, decimals) + ", " +
                        fixed(margin.high * unit.scale, decimals) + "] (" +
                        short_number(confidence * 100) + "%, " + rounds_word(margin.n) + "): ";
  if (satisfies_whole(comparison.op, margin)) {
    decision.outcome = ComparisonOutcome::Pass;
    message += "holds";
  } else if (violates_whole(comparison.op, margin)) {
    decision.outcome = ComparisonOutcome::Fail;
    message += "fails";
  } else {
    decision.outcome = ComparisonOutcome::Inconclusive;
    message += "inconclusive, the interval includes 0";
    if (margin.mean != 0 && margin.std_dev > 0) {
      const std::optional<std::uint32_t> needed = rounds_to_decide(margin);
      decision.rounds_needed = needed.value_or(kMaxComparisonRounds);
      message += needed ? "; about " + rounds_word(*needed) + " in all would likely decide"
                        : "; even " + rounds_word(kMaxComparisonRounds) + " would likely not";
    }
  }
  decision.message = std::move(message);
  return decision;
}

}  // namespace kubeload
