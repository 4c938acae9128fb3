#pragma once
// The LoadTestResult record of a finished run (kubeload/api/loadtest_result.hpp),
// built purely from the LoadTest, its final status and the merged result. Its
// name is a function of the LoadTest's name and uid, so writing it twice (an
// operator restarted between the create and the status that names it)
// answers 409 and leaves one record.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/loadtest_result.hpp"
#include "kubeload/result.hpp"

namespace kubeload::controller {

// "<name>-<first 8 of the uid>", the name cut so the whole stays a DNS subdomain.
std::string result_record_name(const api::ObjectMeta& loadtest);

// "sha256:<hex>" of the spec's JSON (keys sorted, as nlohmann writes objects):
// two runs of one spec have one digest.
std::string spec_digest(const nlohmann::json& spec);

// The record of `loadtest` whose final status is `final_status`. Kept within
// api::kResultRecordSizeLimit: the merged histograms go first, then the spec
// (each saying so in the record).
api::LoadTestResult build_result_record(const api::LoadTest& loadtest,
                                        const api::LoadTestStatus& final_status,
                                        const std::optional<RunResult>& merged);

}  // namespace kubeload::controller
