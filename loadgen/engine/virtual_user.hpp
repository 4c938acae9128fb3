#pragma once
// One virtual user of a scenario run: its variables, cookie jar, data rows
// and the request it is sending, rendered into buffers it keeps (no heap
// allocation per step once they have grown). The worker owns one per lane
// and decides when each runs; this file decides what a step sends and what
// its response means for the iteration. No I/O, no clock of its own.

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/scenario/cookie_jar.hpp"
#include "common/scenario/random.hpp"
#include "common/scenario/regex.hpp"
#include "common/scenario/response.hpp"
#include "common/scenario/row_cursor.hpp"
#include "loadgen/engine/http1_parser.hpp"
#include "loadgen/engine/plan.hpp"
#include "loadgen/engine/request_slot.hpp"
#include "loadgen/engine/scenario_plan.hpp"

namespace kubeload::loadgen {

// What the worker does after a step ended.
struct StepVerdict {
  Outcome outcome = Outcome::success;  // the step's, as recorded (extract, check included)
  bool iteration_ends = false;         // the last step, or the iteration was cut short
  bool iteration_failed = false;       // some step of it failed
};

// A thread's state that every virtual user of it shares (regular expression
// matching scratch, the extraction buffer).
struct ScenarioScratch {
  scenario::MatchScratch match;
  std::string value;
  std::vector<CapturedHeader> headers;  // the response's header fields
};

// The `unique` rows one part (worker thread) hands out, one cursor per
// source (scenario::UniqueRows: each row once in the whole run).
class DataCursors {
 public:
  DataCursors(const ScenarioPlan& plan, ArrivalTurns part);
  // The next unique row of source `source`; nullopt: it ran out (stop).
  std::optional<std::uint64_t> next_unique(std::size_t source);

 private:
  std::vector<std::optional<scenario::UniqueRows>> unique_;  // by source; unset: not unique
};

class VirtualUser {
 public:
  VirtualUser(const ScenarioPlan& plan, uint64_t index, uint64_t seed);

  uint64_t index() const noexcept { return index_; }
  bool in_iteration() const noexcept { return in_iteration_; }
  uint32_t scenario() const noexcept { return scenario_; }
  uint32_t step() const noexcept { return step_; }
  // The iterations this virtual user started.
  uint64_t iterations() const noexcept { return iterations_; }
  Clock::time_point iteration_started() const noexcept { return iteration_started_; }
  // The iteration began in a counted phase (not the warm-up).
  bool iteration_counted() const noexcept { return iteration_counted_; }
  bool iteration_failed() const noexcept { return iteration_failed_; }
  // The request of the current step, as rendered by render_step().
  const RequestTemplate& outgoing() const noexcept { return outgoing_; }

  // Starts an iteration of `scenario` at `start` (its intended start in the
  // open model). False: a `unique` data source ran out and stops this
  // virtual user; nothing was started.
  bool begin_iteration(uint32_t scenario, Clock::time_point start, bool counted,
                       DataCursors& cursors);
  // Renders the current step into outgoing(). False: a variable it names
  // has no value, or a value would split the request (CR, LF or NUL in a
  // header, those or a space in the path): the step fails with kind
  // `extract`, unsent.
  bool render_step(const Target& target, uint32_t worker, int64_t now_unix_ms);
  // Judges the current step's response (`transport`: the connection's
  // outcome; `response`: its status, headers and body when complete), takes
  // its extractions and cookies, and moves to the next step.
  StepVerdict finish_step(Outcome transport, const scenario::ResponseView* response,
                          int64_t now_unix_ms, ScenarioScratch& scratch);
  // The think time after the step just finished (drawn from its distribution).
  std::chrono::nanoseconds think_time(const ThinkTime& think);
  // When the next iteration may start after the one that started at
  // iteration_started() (pacing), or nothing.
  std::optional<Clock::time_point> paced_start() const;
  void end_iteration() noexcept { in_iteration_ = false; }

 private:
  const ScenarioPlan& plan_;
  uint64_t index_;
  scenario::Random random_;
  scenario::CookieJar jar_;
  std::vector<std::string> values_;  // by variable slot
  std::vector<std::optional<std::string_view>> views_;
  std::vector<std::string_view> columns_;             // the current rows' cells, by column slot
  std::vector<scenario::SequentialRows> sequential_;  // by source (used when sequential)
  RequestTemplate outgoing_;
  std::string path_;  // the rendered path, which the cookie jar matches
  std::string body_;  // the rendered body, before it is appended to the wire

  bool in_iteration_ = false;
  bool iteration_counted_ = false;
  bool iteration_failed_ = false;
  uint32_t scenario_ = 0;
  uint32_t step_ = 0;
  uint64_t iterations_ = 0;
  Clock::time_point iteration_started_{};
};

}  // namespace kubeload::loadgen
