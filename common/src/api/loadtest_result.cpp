#include "kubeload/api/loadtest_result.hpp"

#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kubeload/api/meta.hpp"
#include "kubeload/base64.hpp"
#include "kubeload/json_access.hpp"
#include "kubeload/zlib.hpp"

namespace kubeload::api {
namespace {

using json_access::integer;
using json_access::member;
using json_access::optional_text;
using json_access::text;
using nlohmann::json;

}  // namespace

void to_json(json& out, const LoadTestResult& record) {
  json run_of = {{"name", record.load_test.name},
                 {"uid", record.load_test.uid},
                 {"generation", record.load_test.generation},
                 {"specDigest", record.load_test.spec_digest}};
  if (record.load_test.revision) run_of["revision"] = *record.load_test.revision;
  if (record.load_test.spec) run_of["spec"] = *record.load_test.spec;
  json merged = {{"encoding", record.merged.encoding}, {"data", record.merged.data}};
  if (record.merged.omitted) merged["omitted"] = *record.merged.omitted;
  out = {{"apiVersion", kApiVersion},     {"kind", kResultKind},
         {"metadata", record.metadata},   {"test", record.test},
         {"loadTest", std::move(run_of)}, {"run", record.run},
         {"merged", std::move(merged)}};
}

void from_json(const json& in, LoadTestResult& record) {
  record = LoadTestResult{};
  record.metadata = member(in, "metadata").get<ObjectMeta>();
  record.test = text(member(in, "test"));
  const json& run_of = member(in, "loadTest");
  record.load_test.name = text(member(run_of, "name"));
  record.load_test.uid = text(member(run_of, "uid"));
  record.load_test.generation = integer(member(run_of, "generation")).value_or(0);
  record.load_test.spec_digest = text(member(run_of, "specDigest"));
  record.load_test.revision = optional_text(member(run_of, "revision"));
  if (const json& spec = member(run_of, "spec"); spec.is_object()) record.load_test.spec = spec;
  record.run = member(in, "run").get<LoadTestStatus>();
  const json& merged = member(in, "merged");
  record.merged.encoding = text(member(merged, "encoding"));
  record.merged.data = text(member(merged, "data"));
  record.merged.omitted = optional_text(member(merged, "omitted"));
}

MergedResult encode_merged(const RunResult& merged) {
  const std::string text = to_json(merged, true).dump();
  const std::vector<uint8_t> compressed =
      deflate_bytes(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
  MergedResult out;
  out.data = base64_encode(compressed);
  return out;
}

std::optional<RunResult> merged_result(const LoadTestResult& record) {
  if (record.merged.data.empty()) return std::nullopt;
  if (record.merged.encoding != kMergedEncoding) {
    throw std::invalid_argument("merged.encoding: \"" + record.merged.encoding + "\" is not " +
                                std::string(kMergedEncoding));
  }
  std::vector<uint8_t> inflated;
  try {
    const std::vector<uint8_t> compressed = base64_decode(record.merged.data);
    Inflater().inflate_all(compressed, kMergedInflatedLimit, inflated);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("merged.data: ") + e.what());
  }
  const json document = json::parse(inflated.begin(), inflated.end(), nullptr, false);
  if (document.is_discarded()) throw std::invalid_argument("merged.data: is not JSON");
  try {
    return run_result_from_json(document);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("merged.data: ") + e.what());
  }
}

}  // namespace kubeload::api
