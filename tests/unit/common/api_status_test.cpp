// The status vocabulary (kubeload/api/status.hpp): each value spelled once,
// read back as itself, and "final" meaning Succeeded or Failed only.

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kubeload/api/meta.hpp"
#include "kubeload/api/status.hpp"

namespace kubeload::api {
namespace {

// Each row's enum value is the row's index: a value added to an enum and not
// to its table (or out of order) fails here rather than spelling itself as
// the first row.
template <typename Table, typename Parse>
void expect_one_spelling_each(const Table& table, Parse parse) {
  std::set<std::string_view> spellings;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& [value, spelling] = table[i];
    EXPECT_EQ(static_cast<std::size_t>(value), i) << spelling;
    EXPECT_TRUE(spellings.insert(spelling).second) << "spelled twice: " << spelling;
    EXPECT_EQ(to_string(value), spelling);
    EXPECT_EQ(parse(spelling), value) << spelling;
  }
}

TEST(ApiStatus, EveryValueHasOneSpellingThatReadsBack) {
  expect_one_spelling_each(kPhases, parse_phase);
  expect_one_spelling_each(kVerdicts, parse_verdict);
  expect_one_spelling_each(kConditionTypes, parse_condition_type);
  expect_one_spelling_each(kConditionStatuses, parse_condition_status);
  expect_one_spelling_each(kReasons, parse_reason);
  EXPECT_EQ(static_cast<std::size_t>(Reason::GeneratorCpuNotMeasured) + 1, kReasons.size());
  EXPECT_EQ(static_cast<std::size_t>(ConditionType::GeneratorSaturated) + 1,
            kConditionTypes.size());
}

TEST(ApiStatus, UnknownSpellingsAreNotGuessed) {
  // A newer operator's reason, a lower-case phase, a blank: none is taken for
  // a value of ours.
  EXPECT_EQ(parse_reason("SomethingNew"), std::nullopt);
  EXPECT_EQ(parse_phase("succeeded"), std::nullopt);
  EXPECT_EQ(parse_phase(""), std::nullopt);
  EXPECT_EQ(parse_verdict("PASS"), std::nullopt);
  EXPECT_EQ(parse_condition_status("true"), std::nullopt);
}

TEST(ApiStatus, FinalMeansSucceededOrFailed) {
  struct Row {
    std::string_view phase;
    bool final;
  };
  for (const Row& row : {Row{"Pending", false}, Row{"Starting", false}, Row{"Running", false},
                         Row{"Succeeded", true}, Row{"Failed", true}, Row{"", false},
                         Row{"Completed", false}, Row{"failed", false}}) {
    EXPECT_EQ(is_final_phase(row.phase), row.final) << row.phase;
    if (const auto phase = parse_phase(row.phase)) {
      EXPECT_EQ(is_final(*phase), row.final);
    }
  }
}

TEST(ApiMeta, NamesAgreeWithEachOther) {
  EXPECT_EQ(std::string(kApiVersion), std::string(kGroup) + "/" + std::string(kVersion));
  for (std::string_view key : {kTestLabel, kLoadTestLabel, kLoadTestUidLabel, kStartAtAnnotation}) {
    EXPECT_TRUE(key.starts_with(std::string(kGroup) + "/")) << key;
  }
}

}  // namespace
}  // namespace kubeload::api
