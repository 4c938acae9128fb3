#include "kubeload/spec_in_cluster.hpp"

#include <string>

namespace kubeload {

std::vector<FieldError> problems_in_cluster(const LoadTestSpec& spec) {
  std::vector<FieldError> problems;
  for (size_t i = 0; i < spec.data.size(); ++i) {
    if (spec.data[i].file.empty()) continue;
    problems.push_back({"spec.data[" + std::to_string(i) + "].file",
                        "a local file is read by loadgen run only, got \"" + spec.data[i].file +
                            "\"; in a cluster the rows come from configMapKeyRef or secretKeyRef"});
  }
  return problems;
}

ParsedLoadTest parse_loadtest_for_cluster(std::string_view yaml_or_json) {
  ParsedLoadTest parsed = parse_loadtest(yaml_or_json);
  if (parsed.ok()) parsed.errors = problems_in_cluster(parsed.spec);
  return parsed;
}

}  // namespace kubeload
