#pragma once
// Golden JSON files for the unit tests: compared with what the code writes,
// or rewritten with KUBELOAD_UPDATE_GOLDEN=1 (review the diff before
// committing it). One reading of that switch and one comparison, for every
// builder and fixture test.

#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kubeload::golden {

// KUBELOAD_UPDATE_GOLDEN=1: rewrite the goldens instead of checking them.
bool updating_goldens();

// `actual` against the JSON file `path`, or `path` rewritten with it. Call
// from a TEST (it adds failures, and skips the test after a rewrite).
void expect_golden_file(const std::filesystem::path& path, const nlohmann::json& actual);

// Each of `objects` against `dir`/<name>.json, as expect_golden_file does;
// `why` is added to a mismatch's message (who else reads the files).
void expect_golden_files(const std::filesystem::path& dir,
                         const std::map<std::string, nlohmann::json>& objects,
                         const std::string& why = "");

}  // namespace kubeload::golden
