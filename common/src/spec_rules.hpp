#pragma once
// Private to the spec parser (common/src): what the decoder hands to the rules
// that involve several fields, and the list both report their problems in.

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kubeload/spec.hpp"

namespace kubeload::spec_parser {

// Every problem with its field path, made printable: paths hold field names
// as written and messages hold values, and both end up in logs and JSON.
class FieldErrors {
 public:
  explicit FieldErrors(std::vector<FieldError>& errors) : errors_(errors) {}
  void add(const std::string& path, const std::string& message);
  size_t count() const noexcept { return errors_.size(); }

 private:
  std::vector<FieldError>& errors_;
};

// What the decoder saw beyond the values it kept: the rules need to know that
// a field was written even when its value was invalid.
struct DecodedFields {
  struct Written {
    std::string text;  // the value as messages show it: 5000, string "10", map, list
    bool map = false;
  };
  // Every field written with a value (not null), by path: "spec.load.rate".
  std::map<std::string, Written, std::less<>> written;
  // Where each entry of spec.requests, spec.load.stages, spec.thresholds,
  // spec.variants and spec.experiment.comparisons
  // that was decoded came from (entries that were not even a map are not).
  std::vector<std::string> request_paths, stage_paths, threshold_paths, variant_paths,
      comparison_paths, data_paths;
  // Where each scenario, its steps and their extractions came from, index
  // for index with spec.scenarios, its steps and their extract lists.
  struct StepPaths {
    std::string path;
    std::vector<std::string> extract_paths;
  };
  struct ScenarioPaths {
    std::string path;
    std::vector<StepPaths> steps;
  };
  std::vector<ScenarioPaths> scenario_paths;
  // spec.scenarios was given with items, valid or not: the run is a
  // scenario run, and the rules of a request mix do not apply.
  bool scenario_run = false;

  bool has(std::string_view path) const { return written.find(path) != written.end(); }
  // Written, and not a map: reported as such, so its missing fields are not.
  bool malformed(std::string_view path) const {
    const auto found = written.find(path);
    return found != written.end() && !found->second.map;
  }
  const std::string& text(std::string_view path) const { return written.find(path)->second.text; }
};

// The rules across fields, once every field is read: target and protocol,
// Secret headers, request names, scenarios against the rest of the spec and
// their templates against their variables and data, the load model, the
// run's length,
// connections per worker, thresholds naming requests, baselines. Fills in the
// defaults that depend on other fields (the closed model's connections, the
// implicit request).
void apply_cross_field_rules(LoadTestSpec& spec, const DecodedFields& fields, FieldErrors& errors);

}  // namespace kubeload::spec_parser
