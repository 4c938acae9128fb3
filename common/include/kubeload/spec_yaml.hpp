#pragma once
// parse_loadtest for a document already built with yaml-cpp. Apart from
// kubeload/spec.hpp so that only code that holds YAML documents itself pulls
// yaml-cpp's headers in (link yaml-cpp to use it).

#include <yaml-cpp/yaml.h>

#include "kubeload/spec.hpp"

namespace kubeload {

// The same checks as parse_loadtest(text), the node limits included: a built
// document can share a node many times over, which counts once per use.
ParsedLoadTest parse_loadtest(const YAML::Node& manifest);

}  // namespace kubeload
