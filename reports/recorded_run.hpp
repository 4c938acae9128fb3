#pragma once
// A run as the reports and the plugin read it: a LoadTest object, or the
// LoadTestResult record it left (kubeload/api/loadtest_result.hpp). A record
// keeps the LoadTest's status under `run` and its spec under `loadTest.spec`,
// so it is read as the LoadTest it records, and every reader of a LoadTest
// (the gate reports, compare, history) reads a record unchanged.

#include <nlohmann/json.hpp>

namespace kubeload::loadgen {

// Whether `object` is a LoadTestResult (its kind says so).
bool is_result_record(const nlohmann::json& object);

// The LoadTest a record keeps, as the API server returned it then:
// metadata.name, uid and generation of the run (loadTest), the record's
// namespace, labels and annotations (the run's own, which the record copies,
// with the record's), metadata.creationTimestamp the run's start (the
// LoadTest's own creation is not recorded; else the record's creation); spec
// loadTest.spec ({} when the record left it out as too large); status the
// record's run as written (status.resultRecord names the record).
nlohmann::json loadtest_of_record(const nlohmann::json& record);

// A LoadTest as itself, a record as loadtest_of_record.
nlohmann::json as_loadtest(const nlohmann::json& object);

}  // namespace kubeload::loadgen
