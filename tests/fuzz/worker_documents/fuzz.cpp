// What the operator reads from a worker it may not trust (any pod can answer
// on a worker's address): a /result document as WorkerClient::result reads
// it (parsed within the spec's limits, checked as each value is met, by
// simdjson where it can: operator/worker_result_parser.hpp),
// and the results ConfigMap's data written from such documents. The bounded
// parse never throws, and what it builds is what the plain parse builds; arbitrary bytes either
// parse and decode, or are refused with std::invalid_argument; nothing else
// is thrown, nothing crashes, and a document that decodes encodes and
// decodes again to the same.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kubeload/api/kept_results.hpp"
#include "kubeload/api/result_limits.hpp"
#include "kubeload/api/worker_protocol.hpp"
#include "operator/worker_result_parser.hpp"

namespace {

// Equal, down to the JSON type of every value (1 and 1u, -0 and 0 compare
// equal in nlohmann and read differently).
bool same_json(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      const auto there = b.find(it.key());
      if (there == b.end() || !same_json(*it, *there)) return false;
    }
    return true;
  }
  if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!same_json(a[i], b[i])) return false;
    }
    return true;
  }
  return a.dump() == b.dump();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  kubeload::LoadTestSpec spec;
  spec.load.stages.resize(2);
  spec.requests.resize(2);
  const kubeload::api::BoundedParse bounded =
      kubeload::api::parse_bounded_result(text, kubeload::api::result_limits(spec));
  const nlohmann::json document = nlohmann::json::parse(text, nullptr, false);
  // Within the limits, the bounded parse builds what the plain parse does.
  if (bounded.document && *bounded.document != document) std::abort();
  if (!bounded.document && bounded.problem.empty()) std::abort();
  // The operator's fast parse: the same document, or the same problem.
  static const kubeload::controller::WorkerResultParser operator_parser;
  const kubeload::api::BoundedParse fast =
      operator_parser.parse(text, kubeload::api::result_limits(spec));
  if (fast.problem != bounded.problem || fast.document.has_value() != bounded.document.has_value())
    std::abort();
  if (fast.document && !same_json(*fast.document, *bounded.document)) std::abort();
  if (document.is_discarded()) return 0;
  try {
    const kubeload::api::ResultDocument decoded =
        kubeload::api::result_document_from_json(document);
    const kubeload::api::ResultDocument again =
        kubeload::api::result_document_from_json(to_json(decoded));
    if (!(again.head == decoded.head) || !(again.run.result == decoded.run.result)) std::abort();
  } catch (const std::invalid_argument&) {
  }
  try {
    (void)kubeload::api::progress_document_from_json(document);
  } catch (const std::invalid_argument&) {
  }
  try {
    (void)kubeload::api::kept_results_from_config_map_data(document, "uid-1");
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
