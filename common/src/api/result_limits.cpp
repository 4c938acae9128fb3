#include "kubeload/api/result_limits.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "kubeload/histogram.hpp"

namespace kubeload::api {
namespace {

constexpr std::size_t kHistogramsPerRow = 4;
// Three-digit status codes, each a key and a count.
constexpr std::size_t kStatusCodes = 900;
constexpr std::size_t kStatusCodeBytes = 32;  // "\"503\":18446744073709551615,"
constexpr std::size_t kRowFieldBytes = 8 * 1024;
constexpr std::size_t kValuesPerRow = 2 * kStatusCodes + 256;
constexpr std::size_t kHeadBytes = 64 * 1024;
constexpr std::size_t kHeadValues = 256;
// result -> stages -> row -> latencyMs -> figure, with room for the head's.
constexpr std::size_t kMaxDepth = 8;

// The default layout's V2 encoding at its largest: a 40-byte header and
// every count a 9-byte varint, deflate's worst case (a few bytes per 16 KiB
// block), base64's four bytes for three.
std::size_t max_histogram_bytes() {
  const auto counts = static_cast<std::size_t>(Histogram{}.counts_length());
  const std::size_t encoded = 40 + counts * 9;
  const std::size_t deflated = encoded + encoded / 1000 + 64;
  return (deflated + 2) / 3 * 4 + 16;
}

// Counts values and depth as the parser meets them; stops at the first
// value over the limits.
class ShapeCheck {
 public:
  using json = nlohmann::json;
  explicit ShapeCheck(const ResultLimits& limits) : limits_(limits) {}

  bool null() { return value(); }
  bool boolean(bool) { return value(); }
  bool number_integer(json::number_integer_t) { return value(); }
  bool number_unsigned(json::number_unsigned_t) { return value(); }
  bool number_float(json::number_float_t, const json::string_t&) { return value(); }
  bool string(json::string_t&) { return value(); }
  bool binary(json::binary_t&) { return value(); }
  bool key(json::string_t&) { return true; }
  bool start_object(std::size_t) { return open(); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    problem_ = "not JSON (at byte " + std::to_string(position) + ")";
    return false;
  }

  const std::optional<std::string>& problem() const { return problem_; }

 private:
  bool value() {
    if (++values_ <= limits_.values) return true;
    problem_ = "more than " + std::to_string(limits_.values) +
               " JSON values, more than the spec's rows can hold";
    return false;
  }
  bool open() {
    if (!value()) return false;
    if (++depth_ <= limits_.depth) return true;
    problem_ = "nested deeper than " + std::to_string(limits_.depth);
    return false;
  }
  bool close() {
    --depth_;
    return true;
  }

  const ResultLimits& limits_;
  std::size_t values_ = 0;
  std::size_t depth_ = 0;
  std::optional<std::string> problem_;
};

}  // namespace

ResultLimits result_limits(const LoadTestSpec& spec) {
  // The whole run's row, a row per stage and one per request.
  const std::size_t rows =
      1 + spec.load.stages.size() + std::max<std::size_t>(1, spec.requests.size());
  const std::size_t row_bytes =
      kHistogramsPerRow * max_histogram_bytes() + kStatusCodes * kStatusCodeBytes + kRowFieldBytes;
  ResultLimits limits;
  limits.bytes = std::min(kMaxResultDocumentBytes, kHeadBytes + rows * row_bytes);
  limits.values = kHeadValues + rows * kValuesPerRow;
  limits.depth = kMaxDepth;
  return limits;
}

std::optional<std::string> check_result_shape(std::string_view body, const ResultLimits& limits) {
  if (body.size() > limits.bytes) {
    return std::to_string(body.size()) + " bytes, more than " + std::to_string(limits.bytes);
  }
  ShapeCheck check(limits);
  const bool whole = nlohmann::json::sax_parse(body, &check);
  if (check.problem()) return check.problem();
  if (!whole) return std::string("not JSON");
  return std::nullopt;
}

}  // namespace kubeload::api
