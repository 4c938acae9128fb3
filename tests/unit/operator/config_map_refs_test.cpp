#include "operator/config_map_refs.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kubeload/spec.hpp"

namespace kubeload::controller {
namespace {

using nlohmann::json;

LoadTestSpec spec_with(std::vector<std::optional<ObjectKeyRef>> sources,
                       std::optional<ObjectKeyRef> ca = std::nullopt) {
  LoadTestSpec spec;
  spec.tls.ca_from = std::move(ca);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    DataSourceSpec source;
    source.name = "source" + std::to_string(i);
    source.from = std::move(sources[i]);
    if (!source.from) source.file = "rows.csv";
    spec.data.push_back(std::move(source));
  }
  return spec;
}

ObjectKeyRef config_map(std::string name, std::string key) {
  return {ObjectKeyRef::Kind::config_map, std::move(name), std::move(key)};
}

TEST(ConfigMapRefs, OnlyConfigMapKeysAreReferencesWithTheFieldThatNamesThem) {
  const LoadTestSpec spec =
      spec_with({config_map("users", "rows"), ObjectKeyRef{ObjectKeyRef::Kind::secret, "s", "k"},
                 std::nullopt, config_map("users", "more")},
                config_map("bundle", "ca.crt"));
  const std::vector<ConfigMapReference> refs = config_map_references(spec);
  ASSERT_EQ(refs.size(), 3u);
  EXPECT_EQ(refs[0].field, "spec.target.tls.caFrom.configMapKeyRef");
  EXPECT_EQ(refs[1].field, "spec.data[0].configMapKeyRef");
  EXPECT_EQ(refs[2].field, "spec.data[3].configMapKeyRef");
  EXPECT_EQ(config_maps_to_read(spec), (std::set<std::string>{"bundle", "users"}));
  EXPECT_TRUE(config_maps_to_read(spec_with({std::nullopt})).empty());
}

TEST(ConfigMapRefs, TheKeysOfDataAndBinaryDataCount) {
  const ConfigMapKeysView view =
      config_map_keys_view(json::parse(R"({"metadata": {"name": "users"}, "data": {"rows": "a\n"},
                      "binaryData": {"rows.gz": "H4sI"}})"));
  EXPECT_TRUE(view.found);
  EXPECT_EQ(view.keys, (std::set<std::string>{"rows", "rows.gz"}));
  EXPECT_TRUE(config_map_keys_view(json::parse(R"({"metadata": {"name": "empty"}})")).keys.empty());
}

TEST(ConfigMapRefs, TheFirstMissingConfigMapOrKeyIsNamedAndAnUnreadableOneIsTheKubeletsToJudge) {
  const LoadTestSpec spec = spec_with({config_map("users", "rows"), config_map("items", "rows")});
  ConfigMapKeysView users{.found = true, .keys = {"rows"}, .unreadable = ""};
  ConfigMapKeysView items{.found = true, .keys = {"other"}, .unreadable = ""};
  EXPECT_EQ(missing_config_map_key(spec, "shop", {{"users", users}, {"items", items}}),
            "ConfigMap \"items\" has no key \"rows\" (spec.data[1].configMapKeyRef.key)");
  EXPECT_EQ(missing_config_map_key(spec, "shop", {{"users", {}}, {"items", items}}),
            "ConfigMap \"users\" (spec.data[0].configMapKeyRef.name) does not exist in namespace "
            "shop");
  items.keys.insert("rows");
  EXPECT_EQ(missing_config_map_key(spec, "shop", {{"users", users}, {"items", items}}),
            std::nullopt);
  const ConfigMapKeysView forbidden{.found = false, .keys = {}, .unreadable = "403 Forbidden"};
  EXPECT_EQ(missing_config_map_key(spec, "shop", {{"users", forbidden}, {"items", items}}),
            std::nullopt);
}

}  // namespace
}  // namespace kubeload::controller
