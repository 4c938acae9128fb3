#pragma once
// The runs of one test (the LoadTests labelled kubeload.dev/test=T), as the
// baseline (baseline.lastPassed) and retention (ttlSecondsAfterFinished)
// read them. One rule for "the newest passed run", so that retention keeps
// exactly the run a later run's baseline compares with.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"

namespace kubeload::controller {

struct TestRun {
  std::string name;
  api::LoadTestStatus status;
  bool passed() const { return status.verdict == api::Verdict::Pass; }
};

// The items of a LoadTest list, in list order.
std::vector<TestRun> test_runs(const nlohmann::json& list);

// The newest passed run other than `except` (a run never is its own
// baseline): the latest completionTime, and of runs that completed in the
// same second the greater name, so every reader, in any list order, picks
// the same one. nullopt when no run passed.
std::optional<std::size_t> newest_passed(const std::vector<TestRun>& runs,
                                         std::string_view except = {});

}  // namespace kubeload::controller
