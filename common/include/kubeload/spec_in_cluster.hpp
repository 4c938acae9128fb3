#pragma once
// What a valid LoadTest holds that only `loadgen run` can do: a data source
// read from a local file (spec.data[].file), which no worker pod can see. The
// operator adds these to the parser's problems, so such a LoadTest fails as
// InvalidSpec, naming the field, instead of at its worker pods.

#include <vector>

#include "kubeload/spec.hpp"

namespace kubeload {

std::vector<FieldError> problems_in_cluster(const LoadTestSpec& spec);

// parse_loadtest, then problems_in_cluster when the spec parsed.
ParsedLoadTest parse_loadtest_for_cluster(std::string_view yaml_or_json);

}  // namespace kubeload
