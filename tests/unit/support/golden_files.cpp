#include "golden_files.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace kubeload::golden {
namespace {

// false once the test has failed or been skipped here.
bool check_or_write(const std::filesystem::path& path, const nlohmann::json& actual,
                    const std::string& why) {
  if (updating_goldens()) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::trunc);
    if (!out) {
      ADD_FAILURE() << "cannot write " << path;
      return false;
    }
    out << actual.dump(2) << "\n";
    return true;
  }
  std::ifstream in(path);
  if (!in) {
    ADD_FAILURE() << path << " is missing; run with KUBELOAD_UPDATE_GOLDEN=1 to create it";
    return false;
  }
  const nlohmann::json expected = nlohmann::json::parse(in, nullptr, false);
  EXPECT_EQ(expected, actual) << path << " differs from what the code writes; after an "
                              << "intended change, rerun with KUBELOAD_UPDATE_GOLDEN=1" << why;
  return true;
}

}  // namespace

bool updating_goldens() {
  const char* update = std::getenv("KUBELOAD_UPDATE_GOLDEN");
  return update != nullptr && std::string(update) == "1";
}

void expect_golden_file(const std::filesystem::path& path, const nlohmann::json& actual) {
  if (check_or_write(path, actual, "") && updating_goldens()) GTEST_SKIP() << "rewrote " << path;
}

void expect_golden_files(const std::filesystem::path& dir,
                         const std::map<std::string, nlohmann::json>& objects,
                         const std::string& why) {
  for (const auto& [name, object] : objects) {
    if (!check_or_write(dir / (name + ".json"), object, why.empty() ? "" : " " + why)) return;
  }
  if (updating_goldens()) GTEST_SKIP() << "rewrote " << dir;
}

}  // namespace kubeload::golden
