#include "reports/recorded_run.hpp"

#include <string>

#include "kubeload/api/loadtest_result.hpp"
#include "kubeload/api/meta.hpp"
#include "kubeload/json_access.hpp"

namespace kubeload::loadgen {

using nlohmann::json;

bool is_result_record(const json& object) {
  return object.is_object() &&
         json_access::text(json_access::member(object, "kind")) == std::string(api::kResultKind);
}

json loadtest_of_record(const json& record) {
  const api::LoadTestResult typed = record.get<api::LoadTestResult>();
  api::ObjectMeta metadata = typed.metadata;
  metadata.name = typed.load_test.name;
  metadata.uid = typed.load_test.uid;
  metadata.generation = typed.load_test.generation;
  metadata.resource_version.clear();
  metadata.generate_name.clear();
  if (typed.run.start_time) metadata.creation_timestamp = typed.run.start_time;
  // The record's test is the run's label, even when a run's labels were edited after.
  if (!typed.test.empty()) metadata.labels[std::string(api::kTestLabel)] = typed.test;
  if (typed.load_test.revision) {
    metadata.annotations[std::string(api::kRevisionAnnotation)] = *typed.load_test.revision;
  }
  const json& run = json_access::member(record, "run");
  return {{"apiVersion", api::kApiVersion},
          {"kind", api::kKind},
          {"metadata", metadata},
          {"spec", typed.load_test.spec.value_or(json::object())},
          // As written, so that a newer operator's spelling of a phase shows as is.
          {"status", run.is_object() ? run : json::object()}};
}

json as_loadtest(const json& object) {
  return is_result_record(object) ? loadtest_of_record(object) : object;
}

}  // namespace kubeload::loadgen
