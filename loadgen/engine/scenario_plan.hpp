#pragma once
// The scenarios of a run, compiled once before it starts (templates,
// extractions, checks, the data each virtual user reads) and shared,
// read-only, by every worker thread. What a virtual user does with them is
// virtual_user.hpp's.

#include <bitset>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "common/scenario/check.hpp"
#include "common/scenario/data_table.hpp"
#include "common/scenario/extractor.hpp"
#include "common/scenario/template.hpp"
#include "kubeload/spec.hpp"
#include "loadgen/engine/plan.hpp"

namespace kubeload::loadgen {

struct CompiledExtraction {
  std::size_t variable = 0;  // the slot in the vocabulary's variables
  scenario::Extractor extractor;
};

struct CompiledStep {
  uint32_t row = 0;  // the result row: the index in RunPlan::requests of the step's name
  // What judges the response (method, HEAD, expected status and length) and
  // the first line and standard headers every rendering starts with.
  RequestTemplate judge;
  scenario::Template path;   // path and query; the target's when the step gives none
  std::string header_lines;  // standard_header_lines(): Host, User-Agent, Accept, Connection
  std::vector<std::pair<std::string, scenario::Template>> headers;  // name, value
  scenario::Template body;
  // Content-Length is sent for a body and for POST, PUT and PATCH, as for
  // fixed requests.
  bool content_length = false;
  // The step writes its own Cookie field: the jar adds none (one Cookie
  // field per request, RFC 6265 section 5.4).
  bool own_cookie = false;
  std::vector<CompiledExtraction> extractions;
  std::vector<scenario::Check> checks;
  ThinkTime think_time;
};

struct CompiledScenario {
  std::string name;
  uint32_t weight = 1;
  std::vector<CompiledStep> steps;
  bool end_iteration_on_extract_miss = true;
  bool end_iteration_on_failure = false;
  bool cookies = true;
  std::optional<std::chrono::nanoseconds> pacing;
};

// A data source as the virtual users read it: its rows, how they are handed
// out, and where its columns sit in the vocabulary's column slots.
struct DataBinding {
  std::shared_ptr<const scenario::DataTable> table;
  DataSourceSpec::Mode mode = DataSourceSpec::Mode::sequential;
  DataSourceSpec::OnExhausted on_exhausted = DataSourceSpec::OnExhausted::stop;
  std::size_t first_column = 0;  // the slot of the table's column 0
};

// The data sources' rows by name, read before the run (loadgen run: files;
// a worker pod: the files the operator mounted).
using DataTables = std::vector<std::pair<std::string, std::shared_ptr<const scenario::DataTable>>>;

struct ScenarioPlan {
  std::vector<CompiledScenario> scenarios;
  scenario::Vocabulary vocabulary;
  std::vector<DataBinding> data;
  std::size_t column_count = 0;  // every source's columns together
  // How much of a response body a step keeps for extraction and checks; the
  // rest is only counted.
  std::size_t max_body_bytes = kDefaultMaxBodyBytes;
  static constexpr std::size_t kDefaultMaxBodyBytes = 1 << 20;
};

// Compiles the spec's scenarios (already validated by the spec parser)
// against the data that was read. Every problem at once, each naming its
// field (`spec.scenarios[0].steps[1].path: unknown column "mail" of data
// source "user" in "${user.mail}"`); a column a template names must exist in
// the data read, declared or not.
std::variant<ScenarioPlan, std::vector<std::string>> compile_scenarios(const LoadTestSpec& spec,
                                                                       const Target& target,
                                                                       const DataTables& data);

// The names of a plan's scenarios, in order (empty for fixed requests): the
// live metrics' `scenario` label.
std::vector<std::string> scenario_names(const RunPlan& plan);

// Reads the spec's data sources and compiles its scenarios into `plan`
// (made by plan_from_spec). A source's rows come from `file` (relative to
// `data_dir`: the manifest's folder for loadgen run), or, from a ConfigMap or
// Secret key, from the copy the operator mounted (kubeload/data_mount.hpp).
// Every problem at once; empty when the plan is ready.
std::vector<std::string> prepare_scenarios(RunPlan& plan, const LoadTestSpec& spec,
                                           const std::string& data_dir);

}  // namespace kubeload::loadgen
