// kubectl-kubeload's decisions: argument parsing, the exit status of a
// LoadTest, the object that starts a new run, compare and history tables.

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "kubeload/duration.hpp"
#include "plugin/cli.hpp"

namespace kubeload::plugin {
namespace {

using loadgen::ReportFormat;
using nlohmann::json;

std::string usage_error_of(const std::vector<std::string>& args) {
  try {
    parse_arguments(args);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(PluginArgs, RunTakesFileWaitTimeoutFormatAndConnectionFlags) {
  const Options o = parse_arguments({"run", "-f", "lt.yaml", "--timeout", "10m", "-o", "junit",
                                     "-n", "shop", "--kubeconfig", "/tmp/kc", "--context", "ci"});
  EXPECT_EQ(o.command, Command::run);
  EXPECT_EQ(o.filename, "lt.yaml");
  EXPECT_TRUE(o.wait);
  ASSERT_TRUE(o.timeout.has_value());
  EXPECT_EQ(*o.timeout, std::chrono::minutes(10));
  EXPECT_EQ(o.format, ReportFormat::junit);
  EXPECT_EQ(o.namespace_, "shop");
  EXPECT_EQ(o.kubeconfig, "/tmp/kc");
  EXPECT_EQ(o.context, "ci");
  const Options files =
      parse_arguments({"run", "-f", "x", "--report", "junit=j.xml", "--report=html=r.html"});
  ASSERT_EQ(files.report_files.size(), 2u);
  EXPECT_EQ(files.report_files[0].first, ReportFormat::junit);
  EXPECT_EQ(files.report_files[0].second, "j.xml");
  EXPECT_EQ(files.report_files[1].first, ReportFormat::html);
  EXPECT_EQ(files.report_files[1].second, "r.html");
}

TEST(PluginArgs, AcceptsKubectlFlagSpellings) {
  EXPECT_EQ(parse_arguments({"run", "--filename=lt.yaml", "--namespace=shop"}).namespace_, "shop");
  EXPECT_EQ(parse_arguments({"run", "-flt.yaml", "-nshop"}).filename, "lt.yaml");
  EXPECT_EQ(parse_arguments({"run", "-f", "lt.yaml", "-n=shop"}).namespace_, "shop");
  EXPECT_EQ(parse_arguments({"-n", "shop", "report", "x"}).names, std::vector<std::string>{"x"});
  EXPECT_FALSE(parse_arguments({"run", "-f", "-", "--wait=false"}).wait);
  EXPECT_TRUE(parse_arguments({"run", "-f", "-", "--wait"}).wait);
  EXPECT_EQ(parse_arguments({"report", "x", "--format", "html"}).format, ReportFormat::html);
  EXPECT_EQ(parse_arguments({"report", "x", "--output=markdown"}).format, ReportFormat::markdown);
  EXPECT_EQ(*parse_arguments({"run", "-f", "x", "--timeout", "0"}).timeout,
            std::chrono::nanoseconds(0));
}

TEST(PluginArgs, CompareAndHistory) {
  const Options compare = parse_arguments({"compare", "a", "b", "c", "-o", "markdown"});
  EXPECT_EQ(compare.command, Command::compare);
  EXPECT_EQ(compare.names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(compare.table_format, TableFormat::markdown);
  const Options history = parse_arguments({"history", "checkout", "--limit", "5", "-o", "json"});
  EXPECT_EQ(history.command, Command::history);
  EXPECT_EQ(history.test, "checkout");
  EXPECT_EQ(history.limit, 5u);
  EXPECT_EQ(history.table_format, TableFormat::json);
}

TEST(PluginArgs, HelpForTheToolAndEachCommand) {
  EXPECT_EQ(parse_arguments({}).command, Command::help);
  EXPECT_EQ(parse_arguments({"--help"}).command, Command::help);
  const Options run_help = parse_arguments({"run", "--help"});
  EXPECT_EQ(run_help.command, Command::help);
  EXPECT_EQ(run_help.help_topic, "run");
  EXPECT_EQ(parse_arguments({"help", "history"}).help_topic, "history");
  EXPECT_NE(usage_text("run").find("--timeout"), std::string::npos);
  EXPECT_NE(usage_text().find("Exit status"), std::string::npos);
  EXPECT_EQ(parse_arguments({"--version"}).command, Command::version);
}

TEST(PluginArgs, BadValuesAreNamed) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"deploy"}, "unknown command \"deploy\""},
      {{"run"}, "run: -f FILE is required"},
      {{"run", "-f", "a.yaml", "extra"}, "unexpected argument \"extra\""},
      {{"run", "-f", "a.yaml", "--timeout", "soon"}, "--timeout: \"soon\" is not a duration"},
      {{"run", "-f", "a.yaml", "--timeout", "-5s"}, "--timeout: \"-5s\" is not a duration"},
      {{"run", "-f", "a.yaml", "--wait=maybe"}, "--wait: must be true or false, got \"maybe\""},
      {{"run", "-f", "a.yaml", "-o", "pdf"}, "-o: must be text, ab, jmeter, json, junit"},
      {{"run", "-f"}, "-f: needs a value"},
      {{"run", "-f", "a", "-f", "b"}, "-f: give one file"},
      {{"report"}, "report: give exactly one LoadTest name, got 0"},
      {{"report", "a", "b"}, "got 2"},
      {{"report", "Bad_Name"}, "\"Bad_Name\" is not a LoadTest name"},
      {{"report", "x", "--wait"}, "report: --wait is a flag of `run` only"},
      {{"report", "x", "--timeout", "1m"}, "report: --timeout is a flag of `run` only"},
      {{"compare", "a"}, "compare: give two or more LoadTest names, got 1"},
      {{"compare", "a", "b", "-o", "html"},
       "must be text, markdown or json for compare, got \"html\""},
      {{"history"}, "history: give exactly one test"},
      {{"history", "bad label!"}, "\"bad label!\" is not a label value"},
      {{"history", "x", "--limit", "0"}, "--limit: must be a positive whole number, got \"0\""},
      {{"history", "x", "--limit", "ten"}, "got \"ten\""},
      {{"report", "x", "--limit", "3"}, "--limit is a flag of `history` only"},
      {{"report", "x", "-n", "Shop"}, "-n: \"Shop\" is not a namespace name"},
      {{"report", "x", "--bogus"}, "unknown flag \"--bogus\""},
      {{"run", "-f", "a", "--report", "junit"}, "--report: must be FORMAT=FILE, got \"junit\""},
      {{"run", "-f", "a", "--report", "xml=out.xml"}, "--report: \"xml\" is not a format"},
      {{"report", "x", "--report", "junit=a.xml"}, "report: --report is a flag of `run` only"},
  };
  for (const auto& [args, expected] : cases) {
    const std::string message = usage_error_of(args);
    EXPECT_NE(message.find(expected), std::string::npos)
        << "args: " << testing::PrintToString(args) << "\nmessage: " << message;
  }
}

// ---- exit status ----

json loadtest_with(json status, json spec = json::object()) {
  json lt = {{"metadata", {{"name", "x"}, {"generation", 1}}}, {"spec", std::move(spec)}};
  status["observedGeneration"] = 1;
  lt["status"] = std::move(status);
  return lt;
}

const json kGatedSpec = {{"thresholds", {"p99 < 1s"}}};

TEST(PluginExitCode, MapsEveryOutcome) {
  struct Case {
    const char* what;
    json loadtest;
    int exit_code;
  };
  const json pass_threshold = {{{"expression", "p99 < 1s"}, {"passed", true}}};
  const json miss_threshold = {{{"expression", "p99 < 1s"}, {"passed", false}}};
  const std::vector<Case> cases = {
      {"pass",
       loadtest_with({{"phase", "Succeeded"}, {"verdict", "Pass"}, {"thresholds", pass_threshold}},
                     kGatedSpec),
       kExitPass},
      {"fail",
       loadtest_with({{"phase", "Succeeded"}, {"verdict", "Fail"}, {"thresholds", miss_threshold}},
                     kGatedSpec),
       kExitGateFailed},
      {"no gate", loadtest_with({{"phase", "Succeeded"}, {"verdict", "None"}}), kExitPass},
      {"failed run",
       loadtest_with({{"phase", "Failed"}, {"verdict", "None"}, {"reason", "WorkerFailed"}}),
       kExitError},
      {"failed run of a gated spec",
       loadtest_with({{"phase", "Failed"}, {"verdict", "None"}}, kGatedSpec), kExitError},
      {"running", loadtest_with({{"phase", "Running"}, {"verdict", "None"}}), kExitError},
      {"no status", json{{"metadata", {{"name", "x"}}}}, kExitError},
      {"gated spec without verdict",
       loadtest_with({{"phase", "Succeeded"}, {"verdict", "None"}}, kGatedSpec), kExitError},
      {"Pass contradicted by a missed threshold",
       loadtest_with({{"phase", "Succeeded"}, {"verdict", "Pass"}, {"thresholds", miss_threshold}},
                     kGatedSpec),
       kExitError},
      {"Pass contradicted by the baseline",
       loadtest_with(
           {{"phase", "Succeeded"}, {"verdict", "Pass"}, {"baseline", {{"passed", false}}}},
           kGatedSpec),
       kExitError},
      {"unknown verdict", loadtest_with({{"phase", "Succeeded"}, {"verdict", "Maybe"}}),
       kExitError},
      {"missing verdict", loadtest_with({{"phase", "Succeeded"}}), kExitError},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(outcome_of(c.loadtest).exit_code, c.exit_code)
        << c.what << ": " << outcome_of(c.loadtest).summary;
  }
}

TEST(PluginExitCode, AFinalPhaseOfAnOlderGenerationIsNotFinished) {
  json lt = loadtest_with({{"phase", "Succeeded"}, {"verdict", "Pass"}});
  EXPECT_TRUE(is_finished(lt));
  lt["metadata"]["generation"] = 2;
  EXPECT_FALSE(is_finished(lt));
  EXPECT_EQ(outcome_of(lt).exit_code, kExitError);
  EXPECT_FALSE(is_finished(loadtest_with({{"phase", "Running"}})));
}

TEST(PluginProgress, OneLineWithPhaseWorkersAndNumbers) {
  const json lt = loadtest_with({{"phase", "Running"},
                                 {"progress", "40%"},
                                 {"workers", {{"desired", 4}, {"ready", 4}}},
                                 {"result",
                                  {{"requests", 12345},
                                   {"rps", 4967.4},
                                   {"errorRate", 0.0},
                                   {"latencyMs", {{"p99", 18.2}}}}}});
  EXPECT_EQ(progress_line(lt),
            "Running 40%, 4/4 workers ready, 12,345 requests, 4,967.4/s, p99 18.200 ms, 0.00% "
            "errors");
  EXPECT_EQ(progress_line(json{{"metadata", {{"name", "x"}}}}),
            "waiting for the operator to pick it up");
}

// ---- the run object ----

constexpr const char* kManifest = R"(apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata:
  name: checkout
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{}"
    team: shop
spec:
  target:
    url: http://checkout.shop.svc:8080/
  load:
    connections: 10
    duration: 30s
    warmup: 10s
  thresholds:
  - "p99 < 200ms"
status:
  phase: Succeeded
)";

TEST(PluginRunObject, GeneratesANameAndSetsTheTestLabel) {
  const RunObject run = run_object_from_manifest(kManifest, "lt.yaml", "", "team-a");
  EXPECT_EQ(run.namespace_, "team-a");
  EXPECT_EQ(run.test, "checkout");
  const json& metadata = run.object["metadata"];
  EXPECT_FALSE(metadata.contains("name"));
  EXPECT_EQ(metadata["generateName"], "checkout-");
  EXPECT_EQ(metadata["namespace"], "team-a");
  EXPECT_EQ(metadata["labels"]["kubeload.dev/test"], "checkout");
  EXPECT_EQ(metadata["annotations"], json({{"team", "shop"}}));
  EXPECT_FALSE(run.object.contains("status"));
  // YAML scalars typed as the API server reads them.
  EXPECT_EQ(run.object["spec"]["load"]["connections"], 10);
  EXPECT_EQ(run.object["spec"]["load"]["duration"], "30s");
  EXPECT_EQ(run.object["spec"]["thresholds"][0], "p99 < 200ms");
  EXPECT_EQ(default_wait_timeout(run.spec),
            std::chrono::minutes(5) + std::chrono::seconds(40) + std::chrono::minutes(5));
}

TEST(PluginRunObject, KeepsAnExistingTestLabelAndTheManifestNamespace) {
  std::string manifest = kManifest;
  manifest.replace(manifest.find("  name: checkout\n"), 17,
                   "  name: checkout-v2\n  namespace: shop\n  labels:\n    kubeload.dev/test: "
                   "checkout\n");
  const RunObject run = run_object_from_manifest(manifest, "lt.yaml", "", "default");
  EXPECT_EQ(run.namespace_, "shop");
  EXPECT_EQ(run.test, "checkout");
  EXPECT_EQ(run.object["metadata"]["generateName"], "checkout-v2-");
  EXPECT_EQ(run_object_from_manifest(manifest, "lt.yaml", "shop", "default").namespace_, "shop");
  try {
    run_object_from_manifest(manifest, "lt.yaml", "other", "default");
    FAIL() << "a --namespace that contradicts the manifest must be refused";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("namespace \"shop\" does not match --namespace \"other\""),
              std::string::npos)
        << e.what();
  }
}

TEST(PluginRunObject, RefusesInvalidManifestsNamingTheField) {
  const auto error_of = [](const std::string& manifest) -> std::string {
    try {
      run_object_from_manifest(manifest, "lt.yaml", "", "default");
    } catch (const UsageError& e) {
      return e.what();
    }
    return "";
  };
  std::string bad_rate = kManifest;
  bad_rate.replace(bad_rate.find("connections: 10"), 15, "connections: -3");
  EXPECT_NE(error_of(bad_rate).find("spec.load.connections"), std::string::npos)
      << error_of(bad_rate);
  EXPECT_NE(error_of(std::string(kManifest) + "---\n" + kManifest).find("lt.yaml"),
            std::string::npos);
  EXPECT_NE(error_of("").find("lt.yaml"), std::string::npos);
}

TEST(PluginRunObject, TheCiExampleManifestIsARun) {
  std::ifstream file(std::string(KUBELOAD_SOURCE_DIR) + "/examples/ci/loadtest.yaml");
  ASSERT_TRUE(file) << "examples/ci/loadtest.yaml";
  std::ostringstream text;
  text << file.rdbuf();
  const RunObject run = run_object_from_manifest(text.str(), "loadtest.yaml", "shop", "default");
  EXPECT_EQ(run.test, "checkout");
  EXPECT_EQ(run.object["metadata"]["generateName"], "checkout-gate-");
  EXPECT_EQ(run.spec.thresholds.size(), 3u);
}

// The shell lines of a CI example: every string of the YAML document, split
// at line ends (a folded `run: >` block is one line).
void shell_lines_of(const YAML::Node& node, std::vector<std::string>& lines) {
  if (node.IsScalar()) {
    std::istringstream text(node.as<std::string>());
    for (std::string line; std::getline(text, line);) lines.push_back(line);
  } else if (node.IsSequence()) {
    for (const YAML::Node& item : node) shell_lines_of(item, lines);
  } else if (node.IsMap()) {
    for (const auto& entry : node) shell_lines_of(entry.second, lines);
  }
}

// The words of one command in a shell line, from `program` up to the first
// shell operator, without the quotes.
std::vector<std::string> command_words(const std::string& line, const std::string& program) {
  std::vector<std::string> words;
  const size_t start = line.find(program + " ");
  if (start == std::string::npos) return words;
  std::istringstream text(line.substr(start + program.size()));
  for (std::string word; text >> word;) {
    if (word == ">" || word == ">>" || word == "|" || word == "&&" || word == "||" || word == ";") {
      break;
    }
    std::erase(word, '"');
    std::erase(word, '\'');
    words.push_back(word);
  }
  return words;
}

TEST(PluginCiExamples, EveryCommandIsOneThePluginTakesAndEveryWaitOutlastsTheRun) {
  std::ifstream file(std::string(KUBELOAD_SOURCE_DIR) + "/examples/ci/loadtest.yaml");
  ASSERT_TRUE(file);
  std::ostringstream manifest;
  manifest << file.rdbuf();
  const RunObject example =
      run_object_from_manifest(manifest.str(), "loadtest.yaml", "", "default");
  const std::chrono::nanoseconds run_takes = default_wait_timeout(example.spec);
  for (const char* name : {"github-actions.yml", "gitlab-ci.yml"}) {
    SCOPED_TRACE(name);
    const YAML::Node workflow =
        YAML::LoadFile(std::string(KUBELOAD_SOURCE_DIR) + "/examples/ci/" + name);
    std::vector<std::string> lines;
    shell_lines_of(workflow, lines);
    int runs = 0;
    for (const std::string& line : lines) {
      if (const std::vector<std::string> words = command_words(line, "kubectl-kubeload");
          !words.empty()) {
        SCOPED_TRACE(line);
        Options options;
        ASSERT_NO_THROW(options = parse_arguments(words)) << usage_error_of(words);
        if (options.command != Command::run) continue;
        ++runs;
        ASSERT_TRUE(options.timeout.has_value()) << "the example says how long it waits";
        EXPECT_GE(*options.timeout, run_takes);
        EXPECT_FALSE(options.report_files.empty()) << "the example keeps its reports";
      }
      // kubectl's own wait gives up after 30 s unless told otherwise.
      if (const std::vector<std::string> words = command_words(line, "kubectl wait");
          !words.empty()) {
        SCOPED_TRACE(line);
        std::optional<std::chrono::nanoseconds> timeout;
        for (const std::string& word : words) {
          if (word.starts_with("--timeout=")) timeout = parse_duration(word.substr(10));
        }
        ASSERT_TRUE(timeout.has_value()) << "a kubectl wait without --timeout";
        EXPECT_GE(*timeout, run_takes);
      }
    }
    EXPECT_EQ(runs, 1) << "one gated run per example";
  }
}

TEST(PluginRunObject, WaitTimeoutOfStagesAndOfRequestCounts) {
  LoadTestSpec spec;
  spec.load.stages = {{std::chrono::seconds(30), 10, std::nullopt},
                      {std::chrono::seconds(30), 20, std::nullopt}};
  EXPECT_EQ(default_wait_timeout(spec), std::chrono::minutes(11));
  LoadTestSpec by_count;
  by_count.load.requests = 1000;
  EXPECT_EQ(default_wait_timeout(by_count), std::chrono::hours(1));
}

// ---- compare and history ----

json run_named(const std::string& name, const std::string& created, double rps, double p99,
               double error_rate, const std::string& verdict = "Pass") {
  return {{"metadata", {{"name", name}, {"creationTimestamp", created}}},
          {"status",
           {{"phase", "Succeeded"},
            {"verdict", verdict},
            {"result",
             {{"requests", 1000},
              {"failures", static_cast<uint64_t>(error_rate * 1000)},
              {"rps", rps},
              {"errorRate", error_rate},
              {"statusCodes", {{"200", 1000}}},
              {"latencyMs", {{"p50", p99 / 4}, {"p90", p99 / 2}, {"p99", p99}}}}}}}};
}

TEST(PluginCompare, ShowsEachRunWithItsChangeAgainstTheFirst) {
  std::ostringstream out;
  write_compare(out,
                {run_named("nginx", "2026-11-30T10:00:00Z", 5000, 10, 0),
                 run_named("apache", "2026-11-30T11:00:00Z", 4000, 12.5, 0.002, "Fail")},
                TableFormat::text);
  const std::string text = out.str();
  EXPECT_NE(text.find("nginx (base)"), std::string::npos) << text;
  EXPECT_NE(text.find("4,000.0 (-20.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find("12.500 (+25.0%)"), std::string::npos) << text;
  EXPECT_NE(text.find("2 (0.20%) (+0.20pp)"), std::string::npos) << text;
  std::ostringstream json_out;
  write_compare(json_out, {run_named("a", "t", 100, 10, 0), run_named("b", "t", 110, 9, 0)},
                TableFormat::json);
  const json document = json::parse(json_out.str());
  EXPECT_NEAR(document["runs"][1]["change"]["rpsPercent"].get<double>(), 10.0, 1e-9);
  EXPECT_NEAR(document["runs"][1]["change"]["p99Percent"].get<double>(), -10.0, 1e-9);
}

TEST(PluginCompare, UnknownLatencyIsADashNotAZero) {
  json no_responses = run_named("down", "t", 0, 0, 1.0, "Fail");
  no_responses["status"]["result"]["statusCodes"] = json::object();
  std::ostringstream out;
  write_compare(out, {run_named("up", "t", 100, 10, 0), no_responses}, TableFormat::markdown);
  EXPECT_NE(out.str().find("| p99 ms | 10.000 | - |"), std::string::npos) << out.str();
}

TEST(PluginHistory, NewestFirstWithVerdictRpsAndP99) {
  std::ostringstream out;
  write_history(out,
                {run_named("checkout-a", "2026-11-30T10:00:00Z", 100, 10, 0),
                 run_named("checkout-c", "2026-11-30T12:00:00Z", 90, 30, 0, "Fail"),
                 run_named("checkout-b", "2026-11-30T11:00:00Z", 95, 12, 0)},
                TableFormat::text, std::nullopt);
  const std::string text = out.str();
  const size_t c = text.find("checkout-c"), b = text.find("checkout-b"),
               a = text.find("checkout-a");
  ASSERT_NE(c, std::string::npos);
  EXPECT_LT(c, b);
  EXPECT_LT(b, a);
  EXPECT_NE(text.find("NAME"), std::string::npos);
  EXPECT_NE(text.find("30.000"), std::string::npos);
  std::ostringstream limited;
  write_history(limited,
                {run_named("x-1", "2026-11-30T10:00:00Z", 1, 1, 0),
                 run_named("x-2", "2026-11-30T11:00:00Z", 1, 1, 0)},
                TableFormat::json, 1u);
  const json document = json::parse(limited.str());
  ASSERT_EQ(document.size(), 1u);
  EXPECT_EQ(document[0]["name"], "x-2");
}

}  // namespace
}  // namespace kubeload::plugin
