#include "kubeload/spec.hpp"

#include <string>
#include <vector>

namespace kubeload {

bool header_value_breaks_line(std::string_view value) noexcept {
  return value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

std::string to_string(const LabelSelector& selector) {
  std::vector<std::string> terms;
  for (const auto& [key, value] : selector.match_labels) terms.push_back(key + "=" + value);
  for (const LabelRequirement& requirement : selector.match_expressions) {
    std::string values;
    for (const std::string& value : requirement.values) {
      values += (values.empty() ? "" : ",") + value;
    }
    switch (requirement.op) {
      case LabelRequirement::Operator::In:
        terms.push_back(requirement.key + " in (" + values + ")");
        break;
      case LabelRequirement::Operator::NotIn:
        terms.push_back(requirement.key + " notin (" + values + ")");
        break;
      case LabelRequirement::Operator::Exists:
        terms.push_back(requirement.key);
        break;
      case LabelRequirement::Operator::DoesNotExist:
        terms.push_back("!" + requirement.key);
        break;
    }
  }
  std::string out;
  for (const std::string& term : terms) out += (out.empty() ? "" : ",") + term;
  return out;
}

const char* to_string(Protocol protocol) noexcept {
  switch (protocol) {
    case Protocol::http2:
      return "http2";
    case Protocol::h2c:
      return "h2c";
    case Protocol::http1:
      break;
  }
  return "http1";
}

const char* to_string(EngineRequest request) noexcept {
  switch (request) {
    case EngineRequest::io_uring:
      return "io_uring";
    case EngineRequest::epoll:
      return "epoll";
    case EngineRequest::automatic:
      break;
  }
  return "auto";
}

std::optional<EngineRequest> parse_engine_request(std::string_view name) noexcept {
  for (EngineRequest r :
       {EngineRequest::automatic, EngineRequest::io_uring, EngineRequest::epoll}) {
    if (name == to_string(r)) return r;
  }
  return std::nullopt;
}

std::optional<Protocol> parse_protocol(std::string_view name) noexcept {
  for (Protocol p : {Protocol::http1, Protocol::http2, Protocol::h2c}) {
    if (name == to_string(p)) return p;
  }
  return std::nullopt;
}

}  // namespace kubeload
