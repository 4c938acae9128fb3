// kubectl's --as, --as-group and --request-timeout on kubectl-kubeload.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "plugin/cli.hpp"

namespace kubeload::plugin {
namespace {

using namespace std::chrono_literals;

TEST(PluginAuthFlags, ImpersonationIsTakenAsKubectlDoes) {
  const Options o = parse_arguments(
      {"report", "x", "--as", "jane", "--as-group", "dev", "--as-group=system:authenticated"});
  EXPECT_EQ(o.as, "jane");
  EXPECT_EQ(o.as_groups, (std::vector<std::string>{"dev", "system:authenticated"}));
  EXPECT_TRUE(parse_arguments({"report", "x"}).as_groups.empty());
}

TEST(PluginAuthFlags, RequestTimeoutAcceptsKubectlsForms) {
  EXPECT_FALSE(parse_arguments({"report", "x"}).request_timeout);
  EXPECT_EQ(*parse_arguments({"report", "x", "--request-timeout", "0"}).request_timeout, 0ms);
  EXPECT_EQ(*parse_arguments({"report", "x", "--request-timeout=30s"}).request_timeout, 30s);
  EXPECT_EQ(*parse_arguments({"report", "x", "--request-timeout", "1m"}).request_timeout, 60s);
  EXPECT_EQ(*parse_arguments({"report", "x", "--request-timeout", "45"}).request_timeout, 45s);
  EXPECT_EQ(*parse_arguments({"report", "x", "--request-timeout", "1500ms"}).request_timeout,
            1500ms);
  for (const char* bad : {"-5", "soon", "1x"}) {
    try {
      parse_arguments({"report", "x", "--request-timeout", bad});
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--request-timeout: \"" + std::string(bad) + "\""),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(PluginAuthFlags, UsageNamesTheFlags) {
  const std::string usage = usage_text();
  for (const char* flag : {"--as USER", "--as-group GROUP", "--request-timeout D"}) {
    EXPECT_NE(usage.find(flag), std::string::npos) << flag;
  }
}

}  // namespace
}  // namespace kubeload::plugin
