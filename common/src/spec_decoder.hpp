#pragma once
// Private to the spec parser (common/src): the decoder of a document already
// within the input limits (spec_input.cpp checks those).

#include <yaml-cpp/yaml.h>

#include "kubeload/spec.hpp"

namespace kubeload::spec_parser {

// Every field by the tables of spec_decoder.cpp, then the rules across fields
// (spec_rules.hpp). May throw yaml-cpp's exceptions on misuse.
ParsedLoadTest decode_manifest(const YAML::Node& root);

}  // namespace kubeload::spec_parser
