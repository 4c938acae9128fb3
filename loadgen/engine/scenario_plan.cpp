#include "loadgen/engine/scenario_plan.hpp"

#include "kubeload/data_mount.hpp"
#include "kubeload/text.hpp"
#include "loadgen/engine/event_loop.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace kubeload::loadgen {
namespace {

std::string field(size_t scenario, size_t step, std::string_view rest) {
  return "spec.scenarios[" + std::to_string(scenario) + "].steps[" + std::to_string(step) + "]." +
         std::string(rest);
}

scenario::ExtractRule extract_rule(const ExtractSpec& e) {
  scenario::ExtractRule rule;
  switch (e.from) {
    case ExtractSpec::From::json:
      rule.from = scenario::ExtractFrom::json;
      break;
    case ExtractSpec::From::header:
      rule.from = scenario::ExtractFrom::header;
      break;
    case ExtractSpec::From::cookie:
      rule.from = scenario::ExtractFrom::cookie;
      break;
    case ExtractSpec::From::regex:
      rule.from = scenario::ExtractFrom::regex;
      break;
  }
  rule.expression = e.expression;
  rule.group = e.group;
  return rule;
}

scenario::CheckRule check_rule(const CheckSpec& c) {
  scenario::CheckRule rule;
  switch (c.kind) {
    case CheckSpec::Kind::json_equals:
      rule.kind = scenario::CheckKind::json_equals;
      break;
    case CheckSpec::Kind::json_matches:
      rule.kind = scenario::CheckKind::json_matches;
      break;
    case CheckSpec::Kind::body_contains:
      rule.kind = scenario::CheckKind::body_contains;
      break;
  }
  rule.pointer = c.json;
  rule.expected = c.expected;
  return rule;
}

// Compiles `text` into `out`, or adds the problem to `errors`. The
// library's message names the template; ours names the spec field.
void compile_template(const std::string& field_path, const std::string& text,
                      const scenario::Vocabulary& vocabulary, scenario::Template& out,
                      std::vector<std::string>& errors) {
  auto compiled = scenario::Template::compile("", text, vocabulary);
  if (auto* problem = std::get_if<std::string>(&compiled)) {
    errors.push_back(field_path + ": " + *problem);
    return;
  }
  out = std::move(std::get<scenario::Template>(compiled));
}

// A data file mapped read-only: the table copies its cells out of the page
// cache, so a million-row file is held once (in the table), not twice (a
// read buffer beside it). Empty when the file could not be read (`error`).
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.is_open()) {
      error_ = std::strerror(errno);
      return;
    }
    struct stat status {};
    if (::fstat(fd.get(), &status) == 0 && status.st_size > 0) {
      void* mapped =
          ::mmap(nullptr, static_cast<size_t>(status.st_size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
      if (mapped != MAP_FAILED) {
        data_ = mapped;
        size_ = static_cast<size_t>(status.st_size);
      } else {
        error_ = std::strerror(errno);
      }
    }
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(data_, size_);
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::string_view text() const { return {static_cast<const char*>(data_), size_}; }

 private:
  void* data_ = nullptr;
  size_t size_ = 0;
  std::string error_;
};

}  // namespace

std::variant<ScenarioPlan, std::vector<std::string>> compile_scenarios(const LoadTestSpec& spec,
                                                                       const Target& target,
                                                                       const DataTables& data) {
  ScenarioPlan plan;
  std::vector<std::string> errors;
  const std::vector<std::string> rows = step_rows(spec);

  for (const DataSourceSpec& source : spec.data) {
    const auto found = std::find_if(data.begin(), data.end(),
                                    [&](const auto& table) { return table.first == source.name; });
    if (found == data.end() || !found->second) {
      errors.push_back("spec.data: the rows of \"" + source.name + "\" were not read");
      continue;
    }
    DataBinding binding;
    binding.table = found->second;
    binding.mode = source.mode;
    binding.on_exhausted = source.on_exhausted;
    binding.first_column = plan.column_count;
    const auto columns = binding.table->columns();
    scenario::DataSource vocabulary_source{source.name, {columns.begin(), columns.end()}};
    for (const std::string& declared : source.columns) {
      if (!binding.table->column_index(declared)) {
        errors.push_back("spec.data: \"" + source.name + "\" has no column \"" + declared +
                         "\" (declared in columns)");
      }
    }
    plan.column_count += vocabulary_source.columns.size();
    plan.vocabulary.sources.push_back(std::move(vocabulary_source));
    plan.data.push_back(std::move(binding));
  }

  for (size_t si = 0; si < spec.scenarios.size(); ++si) {
    const ScenarioSpec& s = spec.scenarios[si];
    // The vocabulary holds every scenario's variables; the spec parser has
    // checked that each template names only its own scenario's.
    for (const StepSpec& step : s.steps) {
      for (const ExtractSpec& e : step.extract) {
        if (std::find(plan.vocabulary.variables.begin(), plan.vocabulary.variables.end(),
                      e.variable) == plan.vocabulary.variables.end()) {
          plan.vocabulary.variables.push_back(e.variable);
        }
      }
    }
    CompiledScenario compiled;
    compiled.name = s.name;
    compiled.weight = std::max<uint32_t>(1, s.weight);
    compiled.end_iteration_on_extract_miss = s.end_iteration_on_extract_miss;
    compiled.end_iteration_on_failure = s.end_iteration_on_failure;
    compiled.cookies = s.cookies;
    compiled.pacing = s.pacing;
    for (size_t ti = 0; ti < s.steps.size(); ++ti) {
      const StepSpec& step = s.steps[ti];
      CompiledStep c;
      c.row = static_cast<uint32_t>(std::find(rows.begin(), rows.end(), step.name) - rows.begin());
      c.judge.name = step.name;
      c.judge.method = step.method;
      c.judge.head = step.method == "HEAD";
      for (int code : step.expect.status) {
        if (code >= 0 && code < static_cast<int>(c.judge.expected_status.size())) {
          c.judge.expected_status.set(static_cast<size_t>(code));
        }
      }
      c.judge.expected_length = step.expect.body_length;
      compile_template(field(si, ti, "path"), step.path.empty() ? target.path : step.path,
                       plan.vocabulary, c.path, errors);
      c.header_lines = standard_header_lines(target, step.headers, spec.load.keep_alive);
      for (const auto& [name, value] : step.headers) {
        if (is_framing_header(name)) continue;
        c.own_cookie = c.own_cookie || lowercase(name) == "cookie";
        scenario::Template value_template;
        compile_template(field(si, ti, "headers." + name), value, plan.vocabulary, value_template,
                         errors);
        c.headers.emplace_back(name, std::move(value_template));
      }
      compile_template(field(si, ti, "body"), step.body, plan.vocabulary, c.body, errors);
      c.content_length = !step.body.empty() || step.method == "POST" || step.method == "PUT" ||
                         step.method == "PATCH";
      for (size_t ei = 0; ei < step.extract.size(); ++ei) {
        const ExtractSpec& e = step.extract[ei];
        auto extractor = scenario::Extractor::compile("", extract_rule(e));
        if (auto* problem = std::get_if<std::string>(&extractor)) {
          errors.push_back(field(si, ti, "extract[" + std::to_string(ei) + "]: ") + *problem);
          continue;
        }
        const auto slot =
            static_cast<size_t>(std::find(plan.vocabulary.variables.begin(),
                                          plan.vocabulary.variables.end(), e.variable) -
                                plan.vocabulary.variables.begin());
        c.extractions.push_back({slot, std::move(std::get<scenario::Extractor>(extractor))});
      }
      for (size_t ci = 0; ci < step.checks.size(); ++ci) {
        auto check = scenario::Check::compile("", check_rule(step.checks[ci]));
        if (auto* problem = std::get_if<std::string>(&check)) {
          errors.push_back(field(si, ti, "checks[" + std::to_string(ci) + "]: ") + *problem);
          continue;
        }
        c.checks.push_back(std::move(std::get<scenario::Check>(check)));
      }
      c.think_time = step.think_time;
      compiled.steps.push_back(std::move(c));
    }
    plan.scenarios.push_back(std::move(compiled));
  }
  if (!errors.empty()) return errors;
  return plan;
}

std::vector<std::string> scenario_names(const RunPlan& plan) {
  std::vector<std::string> names;
  if (!plan.scenarios) return names;
  for (const CompiledScenario& scenario : plan.scenarios->scenarios) names.push_back(scenario.name);
  return names;
}

std::vector<std::string> prepare_scenarios(RunPlan& plan, const LoadTestSpec& spec,
                                           const std::string& data_dir) {
  if (spec.scenarios.empty()) return {};
  std::vector<std::string> errors;
  DataTables tables;
  for (const DataSourceSpec& source : spec.data) {
    // A ConfigMap's or Secret's rows are where the operator mounted them;
    // a file is found beside the manifest.
    const std::filesystem::path path = source.from
                                           ? std::filesystem::path(data_mount_file(source.name))
                                           : std::filesystem::path(data_dir) / source.file;
    const MappedFile file(path.string());
    if (!file.ok()) {
      errors.push_back("spec.data: cannot read the rows of \"" + source.name + "\" from " +
                       path.string() + ": " + file.error() +
                       (source.from ? " (a ConfigMap's or Secret's rows are mounted there in a "
                                      "worker pod; loadgen run reads a `file`)"
                                    : ""));
      continue;
    }
    const auto format = source.format == DataSourceSpec::Format::jsonl ? scenario::DataFormat::jsonl
                                                                       : scenario::DataFormat::csv;
    auto table = scenario::DataTable::parse(source.name, format, file.text());
    if (auto* problem = std::get_if<std::string>(&table)) {
      errors.push_back("spec.data: " + *problem);
      continue;
    }
    // DataTable::parse refuses a table without rows: every mode has one to give.
    tables.emplace_back(source.name, std::make_shared<const scenario::DataTable>(
                                         std::move(std::get<scenario::DataTable>(table))));
  }
  if (!errors.empty()) return errors;
  auto compiled = compile_scenarios(spec, plan.target, tables);
  if (auto* problems = std::get_if<std::vector<std::string>>(&compiled)) return *problems;
  auto scenarios = std::make_shared<ScenarioPlan>(std::move(std::get<ScenarioPlan>(compiled)));
  plan.scenarios = std::move(scenarios);
  return {};
}

}  // namespace kubeload::loadgen
