#include "loadgen/engine/virtual_user.hpp"

#include <charconv>
#include <cmath>

namespace kubeload::loadgen {
namespace {

// A rendered value that would end its line (CR, LF, NUL), or a path with a
// space: sent, it would split the request (an extracted value is the
// server's text, not ours to trust).
bool breaks_request_line(std::string_view text, bool path) noexcept {
  return text.find_first_of(path ? std::string_view("\r\n\0 ", 4)
                                 : std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// A uniform draw in [0, 1) from the top 53 bits.
double unit_interval(scenario::Random& random) {
  return static_cast<double>(random.next() >> 11) * 0x1.0p-53;
}

}  // namespace

DataCursors::DataCursors(const ScenarioPlan& plan, ArrivalTurns part) {
  // Part `offset` of `stride` is UniqueRows' part g of G.
  const scenario::RunPart run_part{part.offset, part.stride, 0, 1};
  for (const DataBinding& binding : plan.data) {
    if (binding.mode != DataSourceSpec::Mode::unique) {
      unique_.emplace_back();
      continue;
    }
    unique_.emplace_back(std::in_place, binding.table->rows(), run_part,
                         binding.on_exhausted == DataSourceSpec::OnExhausted::recycle
                             ? scenario::OnExhausted::recycle
                             : scenario::OnExhausted::stop);
  }
}

std::optional<std::uint64_t> DataCursors::next_unique(std::size_t source) {
  return unique_[source]->next();
}

VirtualUser::VirtualUser(const ScenarioPlan& plan, uint64_t index, uint64_t seed)
    : plan_(plan),
      index_(index),
      random_(seed),
      values_(plan.vocabulary.variables.size()),
      views_(plan.vocabulary.variables.size()),
      columns_(plan.column_count) {
  for (const DataBinding& binding : plan.data)
    sequential_.emplace_back(binding.table->rows(), index);
}

bool VirtualUser::begin_iteration(uint32_t scenario, Clock::time_point start, bool counted,
                                  DataCursors& cursors) {
  for (std::size_t source = 0; source < plan_.data.size(); ++source) {
    const DataBinding& binding = plan_.data[source];
    std::optional<std::uint64_t> row;
    switch (binding.mode) {
      case DataSourceSpec::Mode::unique:
        row = cursors.next_unique(source);
        break;
      case DataSourceSpec::Mode::sequential:
        row = sequential_[source].next();
        break;
      case DataSourceSpec::Mode::random:
        row = scenario::random_row(binding.table->rows(), random_);
        break;
    }
    if (!row) return false;
    const std::size_t columns = binding.table->columns().size();
    for (std::size_t column = 0; column < columns; ++column) {
      columns_[binding.first_column + column] =
          binding.table->cell(static_cast<std::size_t>(*row), column);
    }
  }
  scenario_ = scenario;
  step_ = 0;
  in_iteration_ = true;
  iteration_counted_ = counted;
  iteration_failed_ = false;
  iteration_started_ = start;
  ++iterations_;
  return true;
}

bool VirtualUser::render_step(const Target& target, uint32_t worker, int64_t now_unix_ms) {
  const CompiledScenario& scenario = plan_.scenarios[scenario_];
  const CompiledStep& step = scenario.steps[step_];
  scenario::RenderContext context;
  context.variables = views_;
  context.columns = columns_;
  context.vu = index_;
  context.iteration = iterations_ - 1;
  context.worker = worker;
  context.now_unix_ms = now_unix_ms;
  context.random = &random_;

  outgoing_.method = step.judge.method;
  outgoing_.head = step.judge.head;
  outgoing_.expected_status = step.judge.expected_status;
  outgoing_.expected_length = step.judge.expected_length;

  // The path first, on its own: the cookie jar matches cookies against it.
  path_.clear();
  if (!step.path.render(context, path_).complete || breaks_request_line(path_, true)) return false;
  std::string& wire = outgoing_.wire;
  wire.clear();
  wire += step.judge.method;
  wire += ' ';
  wire += path_;
  wire += " HTTP/1.1\r\n";
  wire += step.header_lines;
  for (const auto& [name, value] : step.headers) {
    wire += name;
    wire += ": ";
    const std::size_t value_start = wire.size();
    if (!value.render(context, wire).complete) return false;
    if (breaks_request_line(std::string_view(wire).substr(value_start), false)) return false;
    wire += "\r\n";
  }
  if (scenario.cookies && !step.own_cookie) {
    jar_.append_cookie_header(path_, target.tls(), now_unix_ms, wire);
  }
  body_.clear();
  if (!step.body.render(context, body_).complete) return false;
  if (step.content_length) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, body_.size()).ptr;
    wire += "Content-Length: ";
    wire.append(digits, end);
    wire += "\r\n";
  }
  wire += "\r\n";
  wire += body_;
  return true;
}

StepVerdict VirtualUser::finish_step(Outcome transport, const scenario::ResponseView* response,
                                     int64_t now_unix_ms, ScenarioScratch& scratch) {
  const CompiledScenario& scenario = plan_.scenarios[scenario_];
  const CompiledStep& step = scenario.steps[step_];
  StepVerdict verdict;
  verdict.outcome = transport;
  // Cookies are kept from every response, an error's too, as a browser does.
  if (response != nullptr && scenario.cookies) {
    jar_.update(response->headers, path_, now_unix_ms);
  }
  if (transport == Outcome::success && response != nullptr) {
    bool missed = false;
    for (const CompiledExtraction& e : step.extractions) {
      std::string& value = values_[e.variable];
      if (e.extractor.extract(*response, value, scratch.match) == scenario::Extraction::found) {
        views_[e.variable] = value;
        continue;
      }
      missed = true;
      // Going on after a miss renders the variable empty; ending the
      // iteration leaves it unset, so a later use fails rather than sends
      // a stale value.
      views_[e.variable] = scenario.end_iteration_on_extract_miss
                               ? std::nullopt
                               : std::optional<std::string_view>(value);
    }
    if (missed) {
      verdict.outcome = Outcome::extract;
    } else {
      for (const scenario::Check& check : step.checks) {
        if (!check.passes(*response, scratch.value, scratch.match)) {
          verdict.outcome = Outcome::check;
          break;
        }
      }
    }
  }
  const bool failed = verdict.outcome != Outcome::success;
  if (failed) iteration_failed_ = true;
  const bool cut_short =
      (verdict.outcome == Outcome::extract && scenario.end_iteration_on_extract_miss) ||
      (failed && scenario.end_iteration_on_failure);
  ++step_;
  verdict.iteration_ends = cut_short || step_ >= scenario.steps.size();
  verdict.iteration_failed = iteration_failed_;
  return verdict;
}

std::chrono::nanoseconds VirtualUser::think_time(const ThinkTime& think) {
  using Distribution = ThinkTime::Distribution;
  switch (think.distribution) {
    case Distribution::none:
      return std::chrono::nanoseconds{0};
    case Distribution::constant:
      return think.constant;
    case Distribution::uniform: {
      const auto span = static_cast<double>((think.max - think.min).count());
      return think.min +
             std::chrono::nanoseconds{static_cast<int64_t>(span * unit_interval(random_))};
    }
    case Distribution::exponential: {
      // Inverse transform: -mean ln(1 - u); u < 1, so at most about 37 means.
      const double draw = -std::log1p(-unit_interval(random_));
      return std::chrono::nanoseconds{
          static_cast<int64_t>(static_cast<double>(think.mean.count()) * draw)};
    }
  }
  return std::chrono::nanoseconds{0};
}

std::optional<Clock::time_point> VirtualUser::paced_start() const {
  const auto& pacing = plan_.scenarios[scenario_].pacing;
  if (!pacing) return std::nullopt;
  return iteration_started_ + *pacing;
}

}  // namespace kubeload::loadgen
