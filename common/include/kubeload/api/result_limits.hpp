#pragma once
// How large a worker's /result document may be for a given spec (issue 26):
// the operator reads documents from pods it cannot fully trust, so each is
// bounded by what the spec's shape can produce (rows: the whole run, each
// stage, each request or scenario step, each scenario) before a byte of it is held, and checked
// value by value as the document is built (a 4 MB array of zeros would otherwise be 2 million JSON
// nodes).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kubeload/spec.hpp"

namespace kubeload::api {

// Never more than this, whatever the spec (a spec of 100 stages and 100
// requests would allow more by the rule below).
inline constexpr std::size_t kMaxResultDocumentBytes = 64 * 1024 * 1024;

struct ResultLimits {
  std::size_t bytes = 0;
  // JSON values (scalars, arrays and objects, each counted once): a row has
  // about 30 fields, 4 latency summaries, at most 900 status codes (three
  // digits) and the error kinds.
  std::size_t values = 0;
  std::size_t depth = 0;  // nesting of arrays and objects
};

// The most a worker's /result can hold for `spec`: per row, four histograms
// of the default layout at their largest encoding (every count a full
// varint), every status code, and its fields; plus the head.
ResultLimits result_limits(const LoadTestSpec& spec);

// `body` as one JSON document, built only while it stays within `limits`
// (bytes, values, depth): the limits are checked as the parser meets each
// value, so the body is read once and a document over them is never built
// whole. `problem` says what is wrong ("more than 1200 JSON values", "not
// JSON (at byte 17)") when `document` is unset.
struct BoundedParse {
  std::optional<nlohmann::json> document;
  std::string problem;
};
BoundedParse parse_bounded_result(std::string_view body, const ResultLimits& limits);

}  // namespace kubeload::api
