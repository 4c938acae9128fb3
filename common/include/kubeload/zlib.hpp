#pragma once
// zlib's deflate and inflate, for the two compressed encodings kubeload
// writes: HdrHistogram's compressed histograms and a LoadTestResult's merged
// result. Inflating is bounded, so a forged document cannot expand without
// limit.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <zlib.h>

namespace kubeload {

// The zlib stream (RFC 1950) of `input`, at zlib's default level.
std::vector<uint8_t> deflate_bytes(std::span<const uint8_t> input);

// Owns a z_stream so every exit path calls inflateEnd; reset for each input,
// so one stream (and its window) serves every document a decoder reads.
class Inflater {
 public:
  Inflater();
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;
  ~Inflater();

  // Replaces `output` with the inflated `data`. Output grows only as zlib
  // produces it, so a lying header cannot make it reserve memory; more than
  // `max_output` bytes is an error. Throws std::invalid_argument saying what
  // is wrong (truncated, corrupt, too large, stray bytes).
  void inflate_all(std::span<const uint8_t> data, size_t max_output, std::vector<uint8_t>& output);

 private:
  z_stream stream_{};
};

}  // namespace kubeload
