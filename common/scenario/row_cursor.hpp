#pragma once
// Which row of a data source a virtual user takes for its next iteration
// (spec.data[].mode; docs/scenarios.md#test-data). Pure arithmetic, exact,
// without shared state: the rows are split among the run's parts up front.
//
// A part is one thread of one worker pod: worker i of P, thread j of T is
// part g = i * T + j of G = P * T. Each thread owns its part's cursor, so a
// row is taken without atomics or locks.

#include <cstdint>
#include <optional>
#include <string>

#include "common/scenario/random.hpp"

namespace kubeload::scenario {

// The two answers of spec.data[].onExhausted, for mode unique.
enum class OnExhausted : std::uint8_t { stop, recycle };

// One thread of one worker of the run.
struct RunPart {
  std::uint64_t worker = 0;   // the pod's index, from 0
  std::uint64_t workers = 1;  // the run's pods
  std::uint64_t thread = 0;   // the thread's index in its pod, from 0
  std::uint64_t threads = 1;  // each pod's threads

  // Why the part is not one of the run's, or nothing (index below its count,
  // counts above 0, P * T within 64 bits).
  std::optional<std::string> check() const;
  std::uint64_t index() const { return worker * threads + thread; }  // g
  std::uint64_t count() const { return workers * threads; }          // G
};

// mode unique: each row once in the whole run. Part g of G owns the rows g,
// g + G, g + 2G, ... below the row count, and hands them out in that order,
// one per iteration its virtual users start, whichever virtual user asks.
// The parts' rows together are every row exactly once.
//
// When the part's rows are spent: stop gives no more rows (the caller ends
// the virtual user that asked); recycle starts over at the part's first row.
// A part that owns no row (more parts than rows) has nothing to hand out
// under stop; under recycle it hands out row g mod N over and over, so that
// no thread idles for want of data.
class UniqueRows {
 public:
  // Throws std::invalid_argument when `part` fails check(): the caller
  // builds parts from its own counts, so that is a bug, not bad input.
  UniqueRows(std::uint64_t rows, const RunPart& part, OnExhausted on_exhausted);

  // The row for the next iteration, or nothing: the part's rows are spent
  // (stop) or there are none.
  std::optional<std::uint64_t> next();

  // How many rows the part owns: those below N of g, g + G, ...
  std::uint64_t owned() const { return owned_; }

 private:
  std::uint64_t rows_;
  std::uint64_t part_;
  std::uint64_t parts_;
  std::uint64_t owned_;
  std::uint64_t taken_ = 0;  // of the owned rows, in this pass over them
  OnExhausted on_exhausted_;
};

// mode sequential: virtual user v (its index in the whole run) starts at row
// v mod N and takes the next row each iteration, wrapping after the last.
// One per virtual user.
class SequentialRows {
 public:
  SequentialRows(std::uint64_t rows, std::uint64_t virtual_user)
      : rows_(rows), next_(rows == 0 ? 0 : virtual_user % rows) {}

  // The row for the next iteration, or nothing when there are no rows.
  std::optional<std::uint64_t> next() {
    if (rows_ == 0) return std::nullopt;
    const std::uint64_t row = next_;
    next_ = next_ + 1 == rows_ ? 0 : next_ + 1;
    return row;
  }

 private:
  std::uint64_t rows_;
  std::uint64_t next_;
};

// mode random: a row drawn uniformly for each iteration, from the caller's
// generator (seeded per virtual user or thread); nothing when there are no rows.
// `rows` fits an int64_t: a table has at most max_data_rows (data_table.hpp).
inline std::optional<std::uint64_t> random_row(std::uint64_t rows, Random& random) {
  if (rows == 0) return std::nullopt;
  return static_cast<std::uint64_t>(random.between(0, static_cast<std::int64_t>(rows - 1)));
}

}  // namespace kubeload::scenario
