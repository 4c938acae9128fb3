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

// The default layout's V2 encoding at its largest, compressed or not (a
// worker sends it uncompressed): a 40-byte header and every count a 9-byte
// varint, deflate's worst case (a few bytes per 16 KiB block), base64's four
// bytes for three.
std::size_t max_histogram_bytes() {
  const auto counts = static_cast<std::size_t>(Histogram{}.counts_length());
  const std::size_t encoded = 40 + counts * 9;
  const std::size_t deflated = encoded + encoded / 1000 + 64;
  return (deflated + 2) / 3 * 4 + 16;
}

// Builds the document while counting values and depth as the parser meets
// them; stops at the first value over the limits, so a document no spec can
// produce is refused before more of it is built, and the body is lexed once.
// nlohmann's own DOM builder (detail::json_sax_dom_parser) does the building:
// the public callback parse would do the same through a std::function per
// token and a keep/discard stack, about half again as slow on a worker's
// /result, and the bytes are read once per worker per pass at 1,000 workers.
class BoundedDomBuilder {
 public:
  using json = nlohmann::json;
  BoundedDomBuilder(json& document, const ResultLimits& limits)
      : dom_(document, false), limits_(limits) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool b) { return value() && dom_.boolean(b); }
  bool number_integer(json::number_integer_t n) { return value() && dom_.number_integer(n); }
  bool number_unsigned(json::number_unsigned_t n) { return value() && dom_.number_unsigned(n); }
  bool number_float(json::number_float_t n, const json::string_t& text) {
    return value() && dom_.number_float(n, text);
  }
  bool string(json::string_t& s) { return value() && dom_.string(s); }
  bool binary(json::binary_t& b) { return value() && dom_.binary(b); }
  bool key(json::string_t& k) { return dom_.key(k); }
  bool start_object(std::size_t n) { return open() && dom_.start_object(n); }
  bool end_object() { return close() && dom_.end_object(); }
  bool start_array(std::size_t n) { return open() && dom_.start_array(n); }
  bool end_array() { return close() && dom_.end_array(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    problem_ = "not JSON (at byte " + std::to_string(position) + ")";
    return false;
  }

  std::optional<std::string>& problem() { return problem_; }

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

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const ResultLimits& limits_;
  std::size_t values_ = 0;
  std::size_t depth_ = 0;
  std::optional<std::string> problem_;
};

}  // namespace

ResultLimits result_limits(const LoadTestSpec& spec) {
  // The whole run's row, a row per stage, one per request or step (steps of
  // several scenarios may share one: counted apart, this is an upper bound)
  // and one per scenario (a scenario's row, one histogram and a few
  // numbers, is bounded as generously as a request's).
  std::size_t steps = 0;
  for (const ScenarioSpec& scenario : spec.scenarios) steps += scenario.steps.size();
  const std::size_t rows = 1 + spec.load.stages.size() +
                           std::max<std::size_t>(1, spec.requests.size() + steps) +
                           spec.scenarios.size();
  const std::size_t row_bytes =
      kHistogramsPerRow * max_histogram_bytes() + kStatusCodes * kStatusCodeBytes + kRowFieldBytes;
  ResultLimits limits;
  limits.bytes = std::min(kMaxResultDocumentBytes, kHeadBytes + rows * row_bytes);
  limits.values = kHeadValues + rows * kValuesPerRow;
  limits.depth = kMaxDepth;
  return limits;
}

BoundedParse parse_bounded_result(std::string_view body, const ResultLimits& limits) {
  BoundedParse out;
  if (body.size() > limits.bytes) {
    out.problem = std::to_string(body.size()) + " bytes, more than " + std::to_string(limits.bytes);
    return out;
  }
  nlohmann::json document;
  BoundedDomBuilder builder(document, limits);
  const bool whole = nlohmann::json::sax_parse(body, &builder);
  if (builder.problem()) {
    out.problem = std::move(*builder.problem());
  } else if (!whole) {
    out.problem = "not JSON";
  } else {
    out.document = std::move(document);
  }
  return out;
}

}  // namespace kubeload::api
