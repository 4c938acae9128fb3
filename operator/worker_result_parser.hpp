#pragma once
// A worker's /result body into the JSON the operator reads it from, exactly
// as api::parse_bounded_result reads it (the same document, or the same
// problem), about five times faster (`operator_merge_bench --document` of a
// 15 KB final result at 10 stages x 5 requests: 30 instead of 150 us each).
// At 1,000 workers every final result arrives in the same moment, and
// nlohmann's parse, its lexer taking a character at a time into its token
// buffer, was a third of the operator's instructions per result (the
// histograms' base64 is most of a document's bytes). simdjson, from Debian's
// libsimdjson-dev, parses the body; what it accepts within the limits is
// built into nlohmann::json, which every reader of the document takes.
// Whatever it refuses or finds over the limits, and a body too large for its
// buffers, goes to api::parse_bounded_result, which says what is wrong in its
// own words (and reads a valid document the same way).

#include <cstddef>
#include <memory>
#include <string_view>

#include "kubeload/api/result_limits.hpp"

namespace kubeload::controller {

class WorkerResultParser {
 public:
  WorkerResultParser();
  WorkerResultParser(const WorkerResultParser&) = delete;
  WorkerResultParser& operator=(const WorkerResultParser&) = delete;
  ~WorkerResultParser();

  // Safe to call from several threads at once (the pass's calls): each call
  // takes a parser of its own from the idle ones, or makes one.
  api::BoundedParse parse(std::string_view body, const api::ResultLimits& limits) const;

  // What reading a body of `body_bytes` within `limits` holds at its peak,
  // the body included: the body; the document built from it, its strings (at
  // most the body's bytes) and a node per value (at most one value per two
  // bytes of body, nor more than the limits allow, each under 128 bytes with
  // an object member's key); for a body simdjson parses, its padded copy and
  // buffers (about 15 bytes per byte). The /result call leases this once the
  // answer's header says how long the body is.
  static std::size_t peak_bytes(std::size_t body_bytes, const api::ResultLimits& limits);

 private:
  struct Parsers;
  std::unique_ptr<Parsers> parsers_;
};

}  // namespace kubeload::controller
