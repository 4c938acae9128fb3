// kubectl-kubeload's decisions: argument parsing, the exit status of a
// LoadTest, the object that starts a new run, compare and history tables,
// kubectl's printers (-o json|yaml|name|jsonpath), shell completion.

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
#include "plugin/completion.hpp"
#include "plugin/jsonpath.hpp"
#include "plugin/printers.hpp"

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
  EXPECT_EQ(parse_arguments({"-n", "shop", "report", "x"}).runs,
            (std::vector<RunReference>{{RunReference::Kind::any, "x", "x"}}));
  EXPECT_FALSE(parse_arguments({"run", "-f", "-", "--wait=false"}).wait);
  EXPECT_TRUE(parse_arguments({"run", "-f", "-", "--wait"}).wait);
  EXPECT_EQ(parse_arguments({"report", "x", "--format", "html"}).format, ReportFormat::html);
  EXPECT_EQ(parse_arguments({"report", "x", "--output=markdown"}).format, ReportFormat::markdown);
  EXPECT_EQ(parse_arguments({"report", "x", "-ojunit"}).format, ReportFormat::junit);
  EXPECT_EQ(*parse_arguments({"run", "-f", "x", "--timeout", "0"}).timeout,
            std::chrono::nanoseconds(0));
}

TEST(PluginArgs, CompareAndHistory) {
  const Options compare = parse_arguments({"compare", "a", "b", "c", "-o", "markdown"});
  EXPECT_EQ(compare.command, Command::compare);
  EXPECT_EQ(compare.runs.size(), 3u);
  EXPECT_EQ(compare.runs[2].name, "c");
  EXPECT_EQ(compare.table_format, TableFormat::markdown);
  const Options history =
      parse_arguments({"history", "checkout", "--limit", "5", "--format", "json"});
  EXPECT_EQ(history.command, Command::history);
  EXPECT_EQ(history.test, "checkout");
  EXPECT_EQ(history.limit, 5u);
  EXPECT_EQ(history.table_format, TableFormat::json);
  EXPECT_FALSE(history.object_output.has_value());
  EXPECT_FALSE(history.all_namespaces);
  // compare prints a comparison, not objects: its -o json is the comparison.
  EXPECT_EQ(parse_arguments({"compare", "a", "b", "-o", "json"}).table_format, TableFormat::json);
  EXPECT_EQ(parse_arguments({"history", "x", "-o", "markdown"}).table_format,
            TableFormat::markdown);
}

TEST(PluginArgs, HistoryTakesAllNamespacesAndASelector) {
  const Options o = parse_arguments({"history", "web", "-A", "-l", "env=staging,tier in (a,b)"});
  EXPECT_TRUE(o.all_namespaces);
  EXPECT_EQ(o.selector, "env=staging,tier in (a,b)");
  EXPECT_TRUE(parse_arguments({"history", "web", "--all-namespaces"}).all_namespaces);
  EXPECT_FALSE(parse_arguments({"history", "web", "--all-namespaces=false"}).all_namespaces);
  EXPECT_EQ(parse_arguments({"history", "web", "--selector=app=web"}).selector, "app=web");
  EXPECT_EQ(parse_arguments({"history", "web", "-lapp=web"}).selector, "app=web");
  for (const std::string selector :
       {"app", "!canary", "app=web", "app==web", "app!=web", "app=", "example.com/tier=web",
        "tier in (web, api)", "tier notin (web)", "a=b, c!=d ,!e,f in (g,h)", "count>5",
        "count < 10"}) {
    EXPECT_NO_THROW(check_label_selector("-l", selector)) << selector;
  }
}

TEST(PluginArgs, DashOPrintsObjectsLikeKubectlWhereTheCommandHasThem) {
  const auto output_of = [](const std::vector<std::string>& args) {
    const Options o = parse_arguments(args);
    EXPECT_TRUE(o.object_output.has_value()) << testing::PrintToString(args);
    return o.object_output.value_or(ObjectOutput{});
  };
  EXPECT_EQ(output_of({"run", "-f", "a.yaml", "-o", "json"}).format, ObjectFormat::json);
  EXPECT_EQ(output_of({"run", "-f", "a.yaml", "--wait=false", "-o", "name"}).format,
            ObjectFormat::name);
  EXPECT_EQ(output_of({"report", "x", "-o", "yaml"}).format, ObjectFormat::yaml);
  EXPECT_EQ(output_of({"report", "x", "-o=json"}).format, ObjectFormat::json);
  EXPECT_EQ(output_of({"history", "x", "--output", "name"}).format, ObjectFormat::name);
  const ObjectOutput path = output_of({"history", "x", "-o", "jsonpath={.items[*].metadata.name}"});
  EXPECT_EQ(path.format, ObjectFormat::jsonpath);
  EXPECT_EQ(path.jsonpath, "{.items[*].metadata.name}");
  EXPECT_EQ(output_of({"report", "x", "-ojsonpath={.spec.a=b}"}).jsonpath, "{.spec.a=b}");
  EXPECT_EQ(output_of({"report", "x", "--output=jsonpath={.status.phase}"}).jsonpath,
            "{.status.phase}");
  // --format is the report's or the table's own: its json is not the object.
  const Options report_json = parse_arguments({"report", "x", "--format", "json"});
  EXPECT_FALSE(report_json.object_output.has_value());
  EXPECT_EQ(report_json.format, ReportFormat::json);
}

TEST(PluginArgs, CompletionTakesBashOrZsh) {
  const Options o = parse_arguments({"completion", "zsh"});
  EXPECT_EQ(o.command, Command::completion);
  EXPECT_EQ(o.shell, "zsh");
  EXPECT_EQ(parse_arguments({"completion", "bash"}).shell, "bash");
  EXPECT_EQ(parse_arguments({"completion", "--help"}).help_topic, "completion");
  const Options words = parse_arguments({"__complete", "report", "-o", ""});
  EXPECT_EQ(words.command, Command::complete);
  EXPECT_EQ(words.words, (std::vector<std::string>{"report", "-o", ""}));
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
      {{"run", "-f", "a.yaml", "-o", "pdf"},
       "-o: \"pdf\" is not an output format of run (json, yaml, name, jsonpath=TEMPLATE, text, "
       "ab, jmeter, junit, markdown, html)"},
      {{"report", "x", "--format", "yaml"},
       "--format: \"yaml\" is not an output format of report (text, ab, jmeter, json, junit, "
       "markdown, html)"},
      {{"history", "x", "-o", "html"},
       "-o: \"html\" is not an output format of history (json, yaml, name, jsonpath=TEMPLATE, "
       "text, markdown)"},
      {{"history", "x", "--format", "yaml"},
       "--format: \"yaml\" is not an output format of history (text, markdown, json)"},
      {{"compare", "a", "b", "-o", "yaml"},
       "-o: \"yaml\" is not an output format of compare (text, markdown, json)"},
      {{"report", "x", "-o", "jsonpath"}, "-o: jsonpath needs a template"},
      {{"report", "x", "-o", "jsonpath="}, "-o: jsonpath= needs a template"},
      {{"report", "x", "-o", "jsonpath={..name}"},
       "-o: jsonpath template \"{..name}\": recursive descent \"..\" is not supported"},
      {{"report", "x", "-o", "jsonpath={.items[?(@.a=~\"x\")]}"},
       "filter operator \"=~\" in \"[?(@.a=~\"x\")]\" is not supported"},
      {{"report", "x", "-o", "go-template={{.a}}"},
       "-o: \"go-template={{.a}}\" is a kubectl format this plugin does not print (json, yaml, "
       "name, jsonpath=TEMPLATE are)"},
      {{"report", "x", "-o", "wide"}, "\"wide\" is a kubectl format this plugin does not print"},
      {{"report", "x", "-o", "json", "--format", "text"},
       "report: give -o or --format, not both (-o json, --format text)"},
      {{"report", "x", "-A"}, "report: -A/--all-namespaces is a flag of `history` only"},
      {{"compare", "a", "b", "-l", "a=b"}, "compare: -l/--selector is a flag of `history` only"},
      {{"history", "x", "-A=maybe"}, "-A: must be true or false, got \"maybe\""},
      {{"history", "x", "-l", ""}, "-l: the selector is empty"},
      {{"history", "x", "-l", " "}, "-l: the selector is empty"},
      {{"history", "x", "-l", "a b c"},
       "-l: \"a b c\" in selector \"a b c\" is not a label requirement: the operators are"},
      {{"history", "x", "-l", "=web"}, "\"\" is not a label key"},
      {{"history", "x", "--selector", "app=web,tier=bad value!"},
       "--selector: \"tier=bad value!\" in selector \"app=web,tier=bad value!\" is not a label "
       "requirement: \"bad value!\" is not a label value"},
      {{"history", "x", "-l", "env in staging"}, "in (v1,v2)"},
      {{"history", "x", "-l", "tier in (a,b c)"}, "\"b c\" is not a label value"},
      {{"history", "x", "-l", "a=b,,c"}, "an empty requirement"},
      {{"history", "x", "-l", "count>five"},
       "\"count>five\" in selector \"count>five\" is not a label requirement: \"five\" is not an "
       "integer (for > and <)"},
      {{"history", "x", "-l", "a(b)"}, "\"a(b)\" in selector"},
      {{"history", "x", "-l", "Bad Key!=x"}, "\"Bad Key\" is not a label key"},
      {{"completion"}, "completion: give the shell, bash or zsh"},
      {{"completion", "fish"}, "completion: give the shell, bash or zsh, got \"fish\""},
      {{"completion", "bash", "-o", "json"}, "completion: -o is not a flag of completion"},
      {{"run", "-f"}, "-f: needs a value"},
      {{"run", "-f", "a", "-f", "b"}, "-f: give one file"},
      {{"report"}, "report: give exactly one LoadTest or LoadTestResult name, got 0"},
      {{"report", "a", "b"}, "got 2"},
      {{"report", "Bad_Name"}, "report: \"Bad_Name\" is not a LoadTest or LoadTestResult name"},
      {{"report", "lt/Bad_Name"}, "report: \"lt/Bad_Name\" is not a LoadTest name"},
      {{"compare", "a", "ltr/"}, "compare: \"ltr/\" is not a LoadTestResult name"},
      {{"compare", "a", "pod/web"},
       "compare: \"pod/web\": the type is lt (loadtest) or ltr (loadtestresult), as in lt/NAME "
       "or ltr/NAME, got \"pod\""},
      {{"report", "x", "--trend", "many"},
       "--trend: must be a whole number of runs (0 for none), got \"many\""},
      {{"report", "x", "--trend", "-1"}, "--trend: must be a whole number"},
      {{"history", "x", "--trend", "5"}, "history: --trend is a flag of `report` and `run` only"},
      {{"compare", "a", "b", "--trend", "5"}, "compare: --trend is a flag of"},
      {{"report", "x", "--wait"}, "report: --wait is a flag of `run` only"},
      {{"report", "x", "--timeout", "1m"}, "report: --timeout is a flag of `run` only"},
      {{"compare"},
       "compare: give two or more LoadTest or LoadTestResult names, or one experiment"},
      {{"compare", "a", "b", "-o", "html"},
       "-o: \"html\" is not an output format of compare (text, markdown, json)"},
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

TEST(PluginExitCode, ASharedTargetIsSaidBesideTheVerdictAndChangesNoExitStatus) {
  const json pass_threshold = {{{"expression", "p99 < 1s"}, {"passed", true}}};
  const json lt =
      loadtest_with({{"phase", "Succeeded"},
                     {"verdict", "Pass"},
                     {"message", "all 1 threshold met"},
                     {"thresholds", pass_threshold},
                     {"target", {{"sharedWith", {{{"namespace", "shop"}, {"name", "other"}}}}}}},
                    kGatedSpec);
  const Outcome outcome = outcome_of(lt);
  EXPECT_EQ(outcome.exit_code, kExitPass);
  EXPECT_EQ(outcome.summary,
            "verdict Pass: all 1 threshold met. Target shared with shop/other during this run: "
            "its latency and the target's CPU/memory include their load.");
}

TEST(PluginExitCode, ASaturatedGeneratorIsSaidBesideTheVerdictAndChangesNoExitStatus) {
  const json pass_threshold = {{{"expression", "p99 < 1s"}, {"passed", true}}};
  const std::string message =
      "worker 0 used 97% of its 100m CPU limit: the numbers describe the generator, not the "
      "target; add workers (spec.workers) or raise the workers' CPU limit "
      "(spec.workerTemplate.resources.limits.cpu)";
  const auto with_condition = [&](const std::string& status) {
    return loadtest_with({{"phase", "Succeeded"},
                          {"verdict", "Pass"},
                          {"message", "all 1 threshold met"},
                          {"thresholds", pass_threshold},
                          {"conditions",
                           {{{"type", "GeneratorSaturated"},
                             {"status", status},
                             {"reason", "GeneratorSaturated"},
                             {"message", message}}}}},
                         kGatedSpec);
  };
  const Outcome outcome = outcome_of(with_condition("True"));
  EXPECT_EQ(outcome.exit_code, kExitPass);
  EXPECT_EQ(outcome.summary, "verdict Pass: all 1 threshold met. Generator saturated: " + message);
  EXPECT_EQ(outcome_of(with_condition("False")).summary, "verdict Pass: all 1 threshold met");
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

json experiment_fixture(const std::string& file) {
  std::ifstream in(std::string(KUBELOAD_SOURCE_DIR) + "/tests/gitops/testdata/operator/" + file);
  EXPECT_TRUE(in) << file;
  return json::parse(in);
}

TEST(PluginCompare, OneExperimentShowsItsVariantsSideBySideWithTheIntervals) {
  // One name is an experiment's: its variants compare.
  EXPECT_EQ(parse_arguments({"compare", "nginx-ab"}).runs.size(), 1u);
  const json experiment = experiment_fixture("experiment-comparison-failed.json");
  ASSERT_TRUE(is_experiment(experiment));
  std::ostringstream text;
  write_compare(text, {experiment}, TableFormat::text);
  EXPECT_NE(text.str().find("shop/nginx-ab: Succeeded, verdict Fail"), std::string::npos)
      << text.str();
  EXPECT_NE(text.str().find("a (base)"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("+10.01 ms [+7.41, +12.60] (+93.0%)"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("Fail          b.p99 <= a.p99 * 1.05  (margin +9.47 ms [+6.80, "
                            "+12.13])"),
            std::string::npos)
      << text.str();

  std::ostringstream markdown;
  write_compare(markdown, {experiment}, TableFormat::markdown);
  EXPECT_NE(markdown.str().find("| p99 ms | 12.007 | 22.015 |"), std::string::npos)
      << markdown.str();
  EXPECT_NE(markdown.str().find("| p99 | +10.01 ms [+7.41, +12.60] (+93.0%) |"), std::string::npos)
      << markdown.str();
  EXPECT_NE(markdown.str().find("| b.p99 &lt;= a.p99 * 1.05 | Fail | +9.47 ms [+6.80, +12.13] |"),
            std::string::npos)
      << markdown.str();

  std::ostringstream json_out;
  write_compare(json_out, {experiment}, TableFormat::json);
  const json document = json::parse(json_out.str());
  EXPECT_EQ(document["experiment"], "nginx-ab");
  EXPECT_EQ(document["variants"][1]["requests"], 4000);
  EXPECT_DOUBLE_EQ(document["variants"][1]["latencyMs"]["p99"].get<double>(), 22.015);
  EXPECT_EQ(document["differences"][2]["metric"], "p99");
  EXPECT_NEAR(document["differences"][2]["low"].get<double>(), 7.4075, 1e-3);
  EXPECT_EQ(document["comparisons"][0]["outcome"], "Fail");
  EXPECT_EQ(document["comparisons"][0]["passed"], false);
}

TEST(PluginCompare, OneRunThatIsNoExperimentOrAnExperimentAmongRunsIsRefused) {
  const json run = run_named("a", "t", 100, 10, 0);
  EXPECT_FALSE(is_experiment(run));
  std::ostringstream out;
  EXPECT_THROW(write_compare(out, {run}, TableFormat::text), UsageError);
  const json experiment = experiment_fixture("experiment-passed.json");
  try {
    write_compare(out, {run, experiment}, TableFormat::text);
    FAIL() << "an experiment among runs was compared";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "compare: \"nginx-ab\" is an experiment: compare it alone to see its variants side "
              "by side");
  }
  // An experiment still running has its variants from the spec, no numbers yet.
  std::ostringstream running;
  write_compare(running, {experiment_fixture("experiment-running.json")}, TableFormat::markdown);
  EXPECT_NE(running.str().find("| requests | - | - |"), std::string::npos) << running.str();
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

// ---- kubectl's printers ----

json sample_run(const std::string& name, const std::string& ns, const std::string& created,
                const std::string& verdict, double rps) {
  return {{"apiVersion", "kubeload.dev/v1alpha1"},
          {"kind", "LoadTest"},
          {"metadata",
           {{"name", name},
            {"namespace", ns},
            {"creationTimestamp", created},
            {"labels", {{"kubeload.dev/test", "web"}}}}},
          {"spec", {{"workers", 2}, {"thresholds", {"p99 < 20ms"}}}},
          {"status",
           {{"phase", "Succeeded"},
            {"verdict", verdict},
            {"message", "1/1 <thresholds> & \"met\""},
            {"result", {{"requests", 4800}, {"rps", rps}, {"errorRate", 0.0}}}}}};
}

const std::vector<json> kSampleRuns = {
    sample_run("web-k3q9d", "shop", "2026-12-01T11:00:00Z", "Fail", 1188.25),
    sample_run("web-7xk2p", "shop", "2026-12-01T10:00:00Z", "Pass", 1234567.5)};

std::string printed(const ObjectOutput& output, const json& object) {
  std::ostringstream out;
  write_object(out, output, object);
  return out.str();
}

std::string printed_list(const ObjectOutput& output) {
  std::ostringstream out;
  write_object_list(out, output, kSampleRuns);
  return out.str();
}

std::string jsonpath(const std::string& template_text, const json& data) {
  std::ostringstream out;
  JsonPath(template_text).execute(out, data);
  return out.str();
}

std::string jsonpath_error(const std::string& template_text, const json& data = json::object()) {
  try {
    jsonpath(template_text, data);
  } catch (const JsonPathError& e) {
    return e.what();
  }
  return "";
}

TEST(PluginPrinters, JsonIsKubectlsFourSpaceSortedGoJson) {
  EXPECT_EQ(printed({ObjectFormat::json, {}}, kSampleRuns[1]), R"({
    "apiVersion": "kubeload.dev/v1alpha1",
    "kind": "LoadTest",
    "metadata": {
        "creationTimestamp": "2026-12-01T10:00:00Z",
        "labels": {
            "kubeload.dev/test": "web"
        },
        "name": "web-7xk2p",
        "namespace": "shop"
    },
    "spec": {
        "thresholds": [
            "p99 \u003c 20ms"
        ],
        "workers": 2
    },
    "status": {
        "message": "1/1 \u003cthresholds\u003e \u0026 \"met\"",
        "phase": "Succeeded",
        "result": {
            "errorRate": 0,
            "requests": 4800,
            "rps": 1234567.5
        },
        "verdict": "Pass"
    }
}
)");
}

TEST(PluginPrinters, AListIsAV1ListAsKubectlGetPrintsIt) {
  const json list = json::parse(printed_list({ObjectFormat::json, {}}));
  EXPECT_EQ(list["apiVersion"], "v1");
  EXPECT_EQ(list["kind"], "List");
  EXPECT_EQ(list["metadata"], json({{"resourceVersion", ""}}));
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][0], kSampleRuns[0]);
  EXPECT_EQ(printed_list({ObjectFormat::json, {}}).substr(0, 40),
            "{\n    \"apiVersion\": \"v1\",\n    \"items\": [");
}

TEST(PluginPrinters, NameIsKindDotGroupSlashName) {
  EXPECT_EQ(printed_list({ObjectFormat::name, {}}),
            "loadtest.kubeload.dev/web-k3q9d\nloadtest.kubeload.dev/web-7xk2p\n");
  EXPECT_EQ(printed({ObjectFormat::name, {}}, kSampleRuns[0]), "loadtest.kubeload.dev/web-k3q9d\n");
  EXPECT_EQ(object_name({{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}}}}),
            "pod/p");
}

TEST(PluginPrinters, YamlIsBlockYamlWithAmbiguousStringsQuoted) {
  json object = kSampleRuns[1];
  object["metadata"]["annotations"] = {
      {"enabled", "true"}, {"count", "10"}, {"empty", ""}, {"note", "a: b"}};
  object["status"]["stages"] = json::array();
  object["status"]["baseline"] = nullptr;
  EXPECT_EQ(printed({ObjectFormat::yaml, {}}, object), R"(apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata:
  annotations:
    count: "10"
    empty: ""
    enabled: "true"
    note: "a: b"
  creationTimestamp: "2026-12-01T10:00:00Z"
  labels:
    kubeload.dev/test: web
  name: web-7xk2p
  namespace: shop
spec:
  thresholds:
    - p99 < 20ms
  workers: 2
status:
  baseline: ~
  message: 1/1 <thresholds> & "met"
  phase: Succeeded
  result:
    errorRate: 0
    requests: 4800
    rps: 1.2345675e+06
  stages: []
  verdict: Pass
)");
}

TEST(PluginPrinters, FloatsPrintAsGoPrintsThem) {
  EXPECT_EQ(go_float(1188.25), "1188.25");
  EXPECT_EQ(go_float(0.0), "0");
  EXPECT_EQ(go_float(100.0), "100");
  EXPECT_EQ(go_float(999999.0), "999999");
  EXPECT_EQ(go_float(1234567.5), "1.2345675e+06");
  EXPECT_EQ(go_float(0.0001), "0.0001");
  EXPECT_EQ(go_float(0.00001), "1e-05");
  EXPECT_EQ(go_float(-2.5), "-2.5");
}

TEST(PluginJsonPath, PrintsAsKubectlDoes) {
  const json list = json::parse(printed_list({ObjectFormat::json, {}}));
  EXPECT_EQ(jsonpath("{.items[*].metadata.name}", list), "web-k3q9d web-7xk2p");
  EXPECT_EQ(jsonpath("{.items[0].metadata.name}", list), "web-k3q9d");
  EXPECT_EQ(jsonpath("{.items[-1].metadata.name}", list), "web-7xk2p");
  EXPECT_EQ(jsonpath("{.items[0:1].metadata.name}", list), "web-k3q9d");
  EXPECT_EQ(jsonpath("{.items[::2].metadata.name}", list), "web-k3q9d");
  EXPECT_EQ(jsonpath("{.kind}", list), "List");
  EXPECT_EQ(jsonpath("{$.kind} {@.apiVersion}", list), "List v1");
  EXPECT_EQ(
      jsonpath("{range .items[*]}{.metadata.name}{\"\\t\"}{.status.verdict}{\"\\n\"}{end}", list),
      "web-k3q9d\tFail\nweb-7xk2p\tPass\n");
  EXPECT_EQ(jsonpath("{range .items[*]}[{.metadata.name}]{end}", list), "[web-k3q9d][web-7xk2p]");
  EXPECT_EQ(jsonpath("names: {.items[*].metadata.name}!", list), "names: web-k3q9d web-7xk2p!");
  EXPECT_EQ(jsonpath("{.items[0].metadata.labels.kubeload\\.dev/test}", list), "web");
  EXPECT_EQ(jsonpath("{.items[0].metadata.labels['kubeload.dev/test']}", list), "web");
  // Scalars as Go prints them, objects and arrays as compact sorted JSON.
  EXPECT_EQ(jsonpath("{.items[*].status.result.rps}", list), "1188.25 1.2345675e+06");
  EXPECT_EQ(jsonpath("{.items[0].status.result.requests}", list), "4800");
  EXPECT_EQ(jsonpath("{.items[0].spec}", list),
            R"({"thresholds":["p99 \u003c 20ms"],"workers":2})");
  EXPECT_EQ(jsonpath("{.items[0].spec.thresholds}", list), R"(["p99 \u003c 20ms"])");
  EXPECT_EQ(jsonpath("{.a}", {{"a", true}}), "true");
  EXPECT_EQ(jsonpath("{.a}", {{"a", nullptr}}), "<nil>");
  EXPECT_EQ(jsonpath("{.a.*}", {{"a", {{"x", 1}, {"y", "z"}}}}), "1 z");
  // A missing key prints nothing (kubectl's --allow-missing-template-keys=true).
  EXPECT_EQ(jsonpath("[{.items[0].status.nothing.here}]", list), "[]");
  EXPECT_EQ(jsonpath("{.items[*].nothing}", list), "");
  EXPECT_EQ(jsonpath("{range .none[*]}x{end}done", list), "done");
  EXPECT_EQ(jsonpath("plain text, no braces", list), "plain text, no braces");
  // A {range} without {end} runs to the end, as in kubectl.
  EXPECT_EQ(jsonpath("{range .items[*]}{.metadata.name};", list), "web-k3q9d;web-7xk2p;");
  // Nested ranges.
  EXPECT_EQ(jsonpath("{range .a[*]}<{range .b[*]}{@}{end}>{end}",
                     {{"a", {{{"b", {1, 2}}}, {{"b", {3}}}}}}),
            "<12><3>");
}

// Outputs of kubectl v1.32.4 itself (`kubectl config view --raw -o jsonpath=T`,
// which runs the same client-go printer offline) over this object.
TEST(PluginJsonPath, MatchesKubectlOnTheSameObject) {
  const json config = json::parse(R"({"kind": "Config", "apiVersion": "v1", "preferences": {},
    "clusters": [{"name": "a", "cluster": {"server": "https://127.0.0.1:1",
                                           "insecure-skip-tls-verify": true}},
                 {"name": "b", "cluster": {"server": "https://127.0.0.1:2"}}],
    "users": [{"name": "u", "user": {"token": "x<y&z"}}],
    "contexts": [{"name": "ca", "context": {"cluster": "a", "user": "u", "namespace": "shop"}},
                 {"name": "cb", "context": {"cluster": "b", "user": "u"}}],
    "current-context": "ca"})");
  const std::vector<std::pair<std::string, std::string>> kubectl = {
      {"{.clusters[*].name}", "a b"},
      {"{.clusters[0]}",
       R"({"cluster":{"insecure-skip-tls-verify":true,"server":"https://127.0.0.1:1"},"name":"a"})"},
      {"{.clusters[-1].cluster.server}", "https://127.0.0.1:2"},
      {"{range .contexts[*]}{.name}{\"\\t\"}{.context.namespace}{\"\\n\"}{end}",
       "ca\tshop\ncb\t\n"},
      {"{.nothing.here}", ""},
      {"{.clusters[0].cluster.insecure-skip-tls-verify}", "true"},
      {"{.users[0].user}", R"({"token":"x\u003cy\u0026z"})"},
      {"{.clusters[*].cluster}",
       R"({"insecure-skip-tls-verify":true,"server":"https://127.0.0.1:1"} {"server":"https://127.0.0.1:2"})"},
      {"{.contexts[0:1].name}", "ca"},
      {"x{.current-context}y", "xcay"},
      {"{.contexts}",
       R"([{"context":{"cluster":"a","namespace":"shop","user":"u"},"name":"ca"},{"context":{"cluster":"b","user":"u"},"name":"cb"}])"},
      {"{.preferences}", "{}"},
      {"{.clusters[*].cluster.insecure-skip-tls-verify}", "true"},
      {"{range .clusters[*]}[{.name}]{end}", "[a][b]"},
      {"{.users[0].user.token}", "x<y&z"},
      {"{['current-context']}", "ca"},
      {"{.contexts[*].context.namespace}", "shop"},
      {"{.clusters[1:].name}", "b"},
      {"{.clusters[::2].name}", "a"},
      {"{$.kind} {@.apiVersion}", "Config v1"},
      {"{.contexts[-2:].name}", "ca cb"},
      {"{.clusters[2:2]}", ""},
      {"{.kind.x}", ""},
      {"{.clusters[*].name}{\"\\n\"}", "a b\n"},
      {"{range .contexts[*]}{.name}:{range .context}{.cluster}{end};{end}", "ca:a;cb:b;"},
      {"{.contexts[?(@.context.namespace==\"shop\")].name}", "ca"},
      {"{.contexts[?(@.context.namespace!=\"shop\")].name}", ""},
      {"{.clusters[?(@.cluster.insecure-skip-tls-verify)].name}", "a"},
      {"{.clusters[?(@.cluster.insecure-skip-tls-verify==true)].name}", "a"},
      {"{.contexts[?(@.name=='cb')].context.cluster}", "b"},
      {"{range .contexts[?(@.context.user==\"u\")]}{.name};{end}", "ca;cb;"},
      {"{.contexts[?(@.name==\"zz\")].name}", ""},
      {"{.contexts[?(@.name>\"ca\")].name}", "cb"},
      {"{.contexts[?(@.context.namespace == \"shop\")].name}", "ca"},
  };
  for (const auto& [template_text, expected] : kubectl) {
    EXPECT_EQ(jsonpath(template_text, config), expected) << template_text;
  }
  // kubectl: "array index out of bounds: index 5, length 2"
  EXPECT_EQ(jsonpath_error("{.contexts[5]}", config),
            "array index out of bounds: index 5, length 2");
  // kubectl: "map[string]interface {} is not array or slice"
  EXPECT_NE(jsonpath_error("{.clusters[0][0]}", config), "");
  // kubectl: "incompatible types for comparison"
  EXPECT_NE(jsonpath_error("{.contexts[?(@.name==1)].name}", config)
                .find("incompatible types for comparison"),
            std::string::npos);
  // Numbers, and a path on the right.
  const json numbers = {{"items", {{{"n", 1}, {"m", 1}}, {{"n", 2.5}, {"m", 1}}, {{"n", 3}}}}};
  EXPECT_EQ(jsonpath("{.items[?(@.n>=2)].n}", numbers), "2.5 3");
  EXPECT_EQ(jsonpath("{.items[?(@.n<2.5)].n}", numbers), "1");
  EXPECT_EQ(jsonpath("{.items[?(@.n==@.m)].n}", numbers), "1");
}

TEST(PluginJsonPath, UnsupportedOrBadSyntaxIsAnErrorNamingIt) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{..name}", "recursive descent \"..\" is not supported"},
      {"{.items[?(@.kind=~\"x\")]}", "filter operator \"=~\""},
      {"{.items[?(@.kind==\"x\"]}", "unterminated filter"},
      {"{.items[?(@.kind==\"x\")}", "unclosed filter: expected ']' after ')'"},
      {"{.items[?(@.kind==1x)]}", "a filter's value \"1x\" is not a number"},
      {"{.items[0,1]}", "unions \"[0,1]\" are not supported"},
      {"{.items[a]}", "invalid array index \"[a]\""},
      {"{.items[1:2:0]}", "step must be > 0 in \"[1:2:0]\""},
      {"{.items[0]", "unclosed action"},
      {"{.items[0}", "unterminated array"},
      {"{.a}{end}", "{end} without a {range}"},
      {"{range}{end}", "{range} needs a path"},
      {"{.}", "a '.' without a field name"},
      {"{5}", "number literals are not supported, got \"5\""},
      {"{true}", "bool literals are not supported"},
      {"{items}", "unrecognized identifier \"items\""},
      {"{.a | .b}", "unrecognized character in action: \"|\""},
      {"{\"\\x\"}", "unsupported escape \"\\x\""},
      {"{\"abc}", "unterminated quoted text"},
  };
  for (const auto& [template_text, expected] : cases) {
    const std::string message = jsonpath_error(template_text);
    EXPECT_NE(message.find(expected), std::string::npos)
        << "template: " << template_text << "\nmessage: " << message;
  }
  // Errors of the data, as kubectl's.
  const json data = {{"items", {1, 2}}, {"object", {{"a", 1}}}};
  EXPECT_EQ(jsonpath_error("{.items[5]}", data), "array index out of bounds: index 5, length 2");
  EXPECT_EQ(jsonpath_error("{.object[0]}", data), "an index on an object, not an array");
  EXPECT_EQ(jsonpath_error("{.object[*]}", data), "[*] on an object, not an array");
}

TEST(PluginHistory, AllNamespacesAddsANamespaceColumn) {
  std::vector<json> runs = kSampleRuns;
  runs[1]["metadata"]["namespace"] = "dev";
  std::ostringstream out;
  write_history(out, runs, TableFormat::text, std::nullopt, true);
  const std::string text = out.str();
  EXPECT_EQ(text.substr(0, text.find('\n')).substr(0, 24), "NAMESPACE  NAME       CR") << text;
  EXPECT_NE(text.find("shop       web-k3q9d"), std::string::npos) << text;
  EXPECT_NE(text.find("dev        web-7xk2p"), std::string::npos) << text;
  std::ostringstream summary;
  write_history(summary, runs, TableFormat::json, std::nullopt, true);
  EXPECT_EQ(json::parse(summary.str())[1]["namespace"], "dev");
  const std::vector<json> newest = newest_first({kSampleRuns[1], kSampleRuns[0]}, 1u);
  ASSERT_EQ(newest.size(), 1u);
  EXPECT_EQ(newest[0]["metadata"]["name"], "web-k3q9d");
}

// ---- shell completion ----

std::vector<std::string> candidates(const std::vector<std::string>& words) {
  return complete(words).candidates;
}

TEST(PluginCompletion, CommandsFlagsAndFormats) {
  using Strings = std::vector<std::string>;
  EXPECT_EQ(candidates({""}),
            (Strings{"run", "report", "compare", "history", "completion", "help"}));
  EXPECT_EQ(candidates({"re"}), (Strings{"report"}));
  EXPECT_EQ(candidates({"history", "--al"}), (Strings{"--all-namespaces"}));
  EXPECT_EQ(candidates({"history", "--as"}), (Strings{"--as", "--as-group"}));
  EXPECT_EQ(candidates({"run", "--w"}), (Strings{"--wait"}));
  EXPECT_EQ(candidates({"report", "--w"}), Strings{});
  EXPECT_EQ(candidates({"report", "x", "-o", ""}),
            (Strings{"json", "yaml", "name", "jsonpath=", "text", "ab", "jmeter", "junit",
                     "markdown", "html"}));
  EXPECT_EQ(candidates({"compare", "a", "b", "-o", ""}), (Strings{"text", "markdown", "json"}));
  EXPECT_EQ(candidates({"history", "web", "--output", "j"}), (Strings{"json", "jsonpath="}));
  EXPECT_EQ(candidates({"history", "web", "--format", ""}), (Strings{"text", "markdown", "json"}));
  EXPECT_EQ(candidates({"report", "x", "--output=y"}), (Strings{"--output=yaml"}));
  EXPECT_EQ(candidates({"completion", ""}), (Strings{"bash", "zsh"}));
  const Completion open = complete({"report", "x", "-o", "jsonp"});
  EXPECT_EQ(open.candidates, Strings{"jsonpath="});
  EXPECT_EQ(open.directive, kCompleteNoFiles | kCompleteNoSpace);
  EXPECT_EQ(complete({"run", "-f", ""}).directive, kCompleteFiles);
  EXPECT_EQ(complete({"run", "--report", ""}).candidates.front(), "text=");
}

TEST(PluginCompletion, NamesAndTestsComeFromTheClusterWithTheLinesConnectionFlags) {
  const Completion names = complete({"-n", "shop", "report", "--context=ci", "we"});
  EXPECT_EQ(names.from_cluster, Completion::FromCluster::run_names);
  EXPECT_EQ(names.namespace_, "shop");
  EXPECT_EQ(names.context, "ci");
  EXPECT_EQ(complete({"report", "--context", "ci", ""}).context, "ci");
  EXPECT_EQ(complete({"compare", "a", ""}).from_cluster, Completion::FromCluster::run_names);
  EXPECT_EQ(complete({"history", ""}).from_cluster, Completion::FromCluster::tests);
  EXPECT_EQ(complete({"history", "web", ""}).from_cluster, Completion::FromCluster::nothing);
  EXPECT_EQ(complete({"report", "x", ""}).from_cluster, Completion::FromCluster::nothing);
  std::ostringstream out;
  write_completion(out, names, {"web-7xk2p", "api-1", "web-k3q9d"});
  EXPECT_EQ(out.str(), "web-7xk2p\nweb-k3q9d\n:4\n");
}

TEST(PluginCompletion, TypeSlashNameCompletesThatKindWithTheTypeAsTyped) {
  const Completion records = complete({"compare", "a", "ltr/we"});
  EXPECT_EQ(records.from_cluster, Completion::FromCluster::record_names);
  EXPECT_EQ(records.cluster_prefix, "ltr/");
  std::ostringstream out;
  write_completion(out, records, {"web-7xk2p-1a2b3c4d", "api-1-00000000"});
  EXPECT_EQ(out.str(), "ltr/web-7xk2p-1a2b3c4d\n:4\n");
  const Completion loadtests = complete({"report", "LoadTest/"});
  EXPECT_EQ(loadtests.from_cluster, Completion::FromCluster::loadtest_names);
  EXPECT_EQ(loadtests.cluster_prefix, "LoadTest/");
  EXPECT_EQ(complete({"report", "pod/x"}).from_cluster, Completion::FromCluster::nothing);
  EXPECT_EQ(candidates({"report", "x", "--tr"}), std::vector<std::string>{"--trend"});
}

// ---- runs from LoadTestResult records ----

// The record the operator writes of a finished run (operator/result_record.cpp).
json record_of_run(json loadtest, const std::string& uid) {
  const std::string name = loadtest["metadata"]["name"];
  json labels = loadtest["metadata"].value("labels", json::object());
  labels["kubeload.dev/loadtest"] = name;
  labels["kubeload.dev/loadtest-uid"] = uid;
  json run = loadtest["status"];
  run["resultRecord"] = name + "-" + uid.substr(0, 8);
  return {
      {"apiVersion", "kubeload.dev/v1alpha1"},
      {"kind", "LoadTestResult"},
      {"metadata",
       {{"name", name + "-" + uid.substr(0, 8)},
        {"namespace", loadtest["metadata"].value("namespace", "shop")},
        {"creationTimestamp", "2026-12-01T00:00:00Z"},
        {"labels", labels}}},
      {"test", labels.value("kubeload.dev/test", "")},
      {"loadTest", {{"name", name}, {"uid", uid}, {"generation", 1}, {"specDigest", "sha256:0"}}},
      {"run", run},
      {"merged", {{"encoding", "zlib+base64"}, {"data", ""}}}};
}

json started_run(const std::string& name, const std::string& uid, const std::string& started,
                 double p99) {
  json loadtest = run_named(name, started, 100, p99, 0);
  loadtest["apiVersion"] = "kubeload.dev/v1alpha1";
  loadtest["kind"] = "LoadTest";
  loadtest["metadata"]["uid"] = uid;
  loadtest["metadata"]["namespace"] = "shop";
  loadtest["metadata"]["labels"] = {{"kubeload.dev/test", "web"}};
  loadtest["status"]["startTime"] = started;
  return loadtest;
}

TEST(PluginRecords, ReferencesFollowKubectlsTypeSlashName) {
  using Kind = RunReference::Kind;
  EXPECT_EQ(parse_run_reference("compare", "web-1"), (RunReference{Kind::any, "web-1", "web-1"}));
  EXPECT_EQ(parse_run_reference("compare", "ltr/web-1-1a2b3c4d").kind, Kind::record);
  EXPECT_EQ(parse_run_reference("compare", "ltr/web-1-1a2b3c4d").name, "web-1-1a2b3c4d");
  for (const std::string type : {"loadtestresult", "loadtestresults", "LoadTestResult",
                                 "loadtestresult.kubeload.dev", "loadtestresults.kubeload.dev"}) {
    EXPECT_EQ(parse_run_reference("report", type + "/x").kind, Kind::record) << type;
  }
  for (const std::string type :
       {"lt", "loadtest", "loadtests", "LoadTest", "loadtest.kubeload.dev"}) {
    EXPECT_EQ(parse_run_reference("report", type + "/x").kind, Kind::loadtest) << type;
  }
  EXPECT_EQ(parse_run_reference("report", "lt/x").argument, "lt/x");
}

TEST(PluginRecords, HistoryShowsEachRunOnceAndARunWhoseLoadTestIsGoneFromItsRecord) {
  const json kept = started_run("web-b", "bbbbbbbb-1", "2026-12-01T11:00:00Z", 12);
  json kept_done = kept;
  kept_done["status"]["resultRecord"] = "web-b-bbbbbbbb";
  const json gone = started_run("web-a", "aaaaaaaa-1", "2026-12-01T10:00:00Z", 10);
  json running = started_run("web-c", "cccccccc-1", "2026-12-01T12:00:00Z", 30);
  running["status"]["phase"] = "Running";
  json gone_record = record_of_run(gone, "aaaaaaaa-1");
  gone_record["loadTest"]["revision"] = "v1.2.0";
  gone_record["metadata"]["annotations"] = {{"kubeload.dev/revision", "v1.2.0"}};
  const std::vector<json> runs =
      runs_of_test({kept_done, running}, {record_of_run(kept, "bbbbbbbb-1"), gone_record});
  ASSERT_EQ(runs.size(), 3u);
  const std::vector<json> ordered = newest_first(runs, std::nullopt);
  EXPECT_EQ(ordered[0]["metadata"]["name"], "web-c");
  EXPECT_EQ(ordered[1]["metadata"]["name"], "web-b");
  EXPECT_EQ(ordered[1]["kind"], "LoadTest") << "the LoadTest while it exists";
  EXPECT_EQ(ordered[2]["kind"], "LoadTestResult");
  EXPECT_EQ(ordered[2]["metadata"]["name"], "web-a-aaaaaaaa");

  std::ostringstream text;
  write_history(text, runs, TableFormat::text, std::nullopt);
  EXPECT_EQ(text.str(),
            "NAME   CREATED               PHASE      VERDICT    RPS  P99(ms)  ERRORS(%)  REVISION  "
            "RECORD          LOADTEST\n"
            "web-c  2026-12-01T12:00:00Z  Running    Pass     100.0   30.000       0.00  -         "
            "-               present\n"
            "web-b  2026-12-01T11:00:00Z  Succeeded  Pass     100.0   12.000       0.00  -         "
            "web-b-bbbbbbbb  present\n"
            "web-a  2026-12-01T10:00:00Z  Succeeded  Pass     100.0   10.000       0.00  v1.2.0    "
            "web-a-aaaaaaaa  deleted\n")
      << text.str();
  std::ostringstream summary;
  write_history(summary, runs, TableFormat::json, 2u);
  const json rows = json::parse(summary.str());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["record"], nullptr);
  EXPECT_EQ(rows[1]["record"], "web-b-bbbbbbbb");
  EXPECT_EQ(rows[1]["loadTestDeleted"], false);
  std::ostringstream all;
  write_history(all, runs, TableFormat::json, std::nullopt);
  EXPECT_EQ(json::parse(all.str())[2]["loadTestDeleted"], true);
  EXPECT_EQ(json::parse(all.str())[2]["revision"], "v1.2.0");
  // -o name: each object as kubectl names it.
  std::ostringstream names;
  write_object_list(names, ObjectOutput{ObjectFormat::name, ""}, ordered);
  EXPECT_EQ(names.str(),
            "loadtest.kubeload.dev/web-c\nloadtest.kubeload.dev/web-b\n"
            "loadtestresult.kubeload.dev/web-a-aaaaaaaa\n");
}

TEST(PluginRecords, AGoneLoadTestComparesAsItsNewestRecord) {
  json older =
      record_of_run(started_run("web-a", "11111111-1", "2026-12-01T10:00:00Z", 10), "11111111-1");
  json newer =
      record_of_run(started_run("web-a", "22222222-1", "2026-12-01T11:00:00Z", 20), "22222222-1");
  const json other = record_of_run(
      started_run("web-a-long", "33333333-1", "2026-12-01T12:00:00Z", 30), "33333333-1");
  const std::optional<json> newest = newest_record_of({older, other, newer}, "web-a");
  ASSERT_TRUE(newest.has_value());
  EXPECT_EQ((*newest)["metadata"]["name"], "web-a-22222222");
  EXPECT_FALSE(newest_record_of({other}, "web-a").has_value());
  std::ostringstream out;
  write_compare(out, {older, newer}, TableFormat::json);
  const json document = json::parse(out.str());
  EXPECT_EQ(document["baseline"], "web-a");
  EXPECT_NEAR(document["runs"][1]["change"]["p99Percent"].get<double>(), 100.0, 1e-9);
}

TEST(PluginCompletion, EveryFlagOfferedIsOneTheParserTakes) {
  for (const std::string command : {"run", "report", "compare", "history"}) {
    for (const std::string& flag : completion_flags(command)) {
      if (flag == "-h" || flag == "--help") continue;
      std::vector<std::string> args = {command, "a", "b", flag};
      if (command == "run") args = {command, "-f", "x.yaml", flag};
      if (command == "history" || command == "report") args = {command, "a", flag};
      // a value that every flag taking one accepts somewhere
      const std::string value = flag == "--report"                                   ? "junit=x.xml"
                                : flag == "-n" || flag == "--namespace"              ? "shop"
                                : flag == "--timeout" || flag == "--request-timeout" ? "1m"
                                : flag == "--limit" || flag == "--trend"             ? "3"
                                : flag == "-l" || flag == "--selector"               ? "a=b"
                                : flag == "-o" || flag == "--output" || flag == "--format" ? "text"
                                : flag == "-f" || flag == "--filename"                     ? ""
                                                                                           : "x";
      const bool boolean = flag == "--wait" || flag == "-A" || flag == "--all-namespaces";
      if (flag == "-f" || flag == "--filename") continue;  // run's -f is given above
      if (!boolean) args.push_back(value);
      EXPECT_EQ(usage_error_of(args), "") << testing::PrintToString(args);
    }
  }
  EXPECT_NE(completion_script("bash").find("complete -F _kubectl_kubeload kubectl-kubeload"),
            std::string::npos);
  EXPECT_NE(completion_script("zsh").find("compdef _kubectl_kubeload kubectl-kubeload"),
            std::string::npos);
}

}  // namespace
}  // namespace kubeload::plugin
