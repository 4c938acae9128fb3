#include "operator/result_record.hpp"

#include <openssl/evp.h>

#include <array>
#include <span>
#include <stdexcept>

#include "kubeload/api/meta.hpp"
#include "kubeload/api/status.hpp"
#include "kubeload/text.hpp"
#include "operator/job_builder.hpp"
#include "operator/labels.hpp"

namespace kubeload::controller {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxName = 253;
constexpr std::size_t kUidPart = 8;

std::size_t encoded_size(const api::LoadTestResult& record) {
  return json(record).dump().size();
}

}  // namespace

std::string result_record_name(const api::ObjectMeta& loadtest) {
  std::string base = loadtest.name.substr(0, kMaxName - kUidPart - 1);
  while (!base.empty() && (base.back() == '-' || base.back() == '.')) base.pop_back();
  return base + "-" + loadtest.uid.substr(0, kUidPart);
}

std::string spec_digest(const json& spec) {
  const std::string text = spec.dump();
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(text.data(), text.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("sha256 of the spec failed");
  }
  return "sha256:" + hex_encode(std::span(digest.data(), length));
}

api::LoadTestResult build_result_record(const api::LoadTest& loadtest,
                                        const api::LoadTestStatus& final_status,
                                        const std::optional<RunResult>& merged) {
  const api::ObjectMeta& meta = loadtest.metadata;
  api::LoadTestResult record;
  record.metadata.name = result_record_name(meta);
  record.metadata.namespace_ = meta.namespace_;
  // The run's own labels (a team's, an app's) select its records too; ours
  // go over them.
  record.metadata.labels = meta.labels;
  const auto test = meta.labels.find(std::string(api::kTestLabel));
  if (test != meta.labels.end()) record.test = test->second;
  record.metadata.labels[std::string(kLoadTestLabel)] = loadtest_label_value(meta.name);
  record.metadata.labels[std::string(kLoadTestUidLabel)] = meta.uid;
  record.metadata.labels[std::string(api::kVerdictLabel)] =
      api::name(final_status.verdict.value_or(api::Verdict::None));
  record.metadata.labels[std::string(kManagedByLabel)] = std::string(kManagedBy);
  const auto revision = meta.annotations.find(std::string(api::kRevisionAnnotation));
  if (revision != meta.annotations.end()) {
    record.metadata.annotations[std::string(api::kRevisionAnnotation)] = revision->second;
    record.load_test.revision = revision->second;
  }
  record.load_test.name = meta.name;
  record.load_test.uid = meta.uid;
  record.load_test.generation = meta.generation;
  const json spec = loadtest.spec.is_null() ? json::object() : loadtest.spec;
  record.load_test.spec_digest = spec_digest(spec);
  record.load_test.spec = spec;
  record.run = final_status;
  record.run.result_record = record.metadata.name;
  if (merged) {
    record.merged = api::encode_merged(*merged);
  } else {
    record.merged.omitted = "no merged result was kept of this run";
  }

  if (std::size_t size = encoded_size(record);
      size > api::kResultRecordSizeLimit && !record.merged.data.empty()) {
    record.merged = {};
    record.merged.omitted = "the merged histograms (" + std::to_string(size / 1024) +
                            " KiB with them) do not fit the record's " +
                            std::to_string(api::kResultRecordSizeLimit / 1024) + " KiB";
  }
  if (encoded_size(record) > api::kResultRecordSizeLimit) record.load_test.spec.reset();
  return record;
}

}  // namespace kubeload::controller
