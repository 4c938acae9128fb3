// spec.scenarios, spec.data and spec.load.iterations (docs/scenarios.md):
// a full scenario manifest read into the spec's structs, and every rule with
// the exact message, its field path and the bad value.

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "kubeload/spec.hpp"
#include "kubeload/spec_in_cluster.hpp"

namespace kubeload {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> messages(const ParsedLoadTest& parsed) {
  std::vector<std::string> out;
  for (const FieldError& error : parsed.errors) out.push_back(error.to_string());
  return out;
}

// A manifest around a spec body written at zero indentation.
std::string with_spec(const std::string& spec_body) {
  std::string indented;
  std::istringstream lines(spec_body);
  for (std::string line; std::getline(lines, line);) indented += "  " + line + "\n";
  return "apiVersion: kubeload.dev/v1alpha1\nkind: LoadTest\nmetadata: {name: t}\nspec:\n" +
         indented;
}

const char* const kShop = R"(
apiVersion: kubeload.dev/v1alpha1
kind: LoadTest
metadata: {name: shop}
spec:
  target: {url: http://127.0.0.1:8080}
  data:
  - name: user
    file: users.csv
    columns: [name, password]
    mode: unique
    onExhausted: recycle
  - name: items
    configMapKeyRef: {name: shop-items, key: items.jsonl}
    mode: random
  - name: cards
    secretKeyRef: {name: shop-cards, key: cards.txt}
    format: jsonl
  scenarios:
  - name: buy
    weight: 3
    cookies: false
    onExtractMiss: continue
    onFailure: endIteration
    pacing: 2s
    steps:
    - name: login
      method: POST
      path: /shop/login
      headers: {Content-Type: application/json}
      body: '{"user":"${user.name}","password":"${user.password}"}'
      expect: {status: [200]}
      extract:
      - {name: token, json: /token}
      - {name: sid, cookie: session}
      - {name: id, regex: 'id":(\d+)', group: 1}
      - {name: trace, header: X-Trace-Id}
      checks:
      - {json: /user, equals: "alice"}
      - {json: /id, matches: '[0-9]+'}
      - {bodyContains: "token"}
      thinkTime: {constant: 1s}
    - name: cart
      path: /shop/cart/${id}?sku=${items.sku}&n=${random(1, 5)}
      headers: {Authorization: "Bearer ${token}", X-Card: "${cards.number}"}
      thinkTime: {uniform: {min: 0s, max: 3s}}
    - name: checkout
      method: POST
      path: /shop/checkout
      thinkTime: {exponential: {mean: 2s}}
  - name: browse
    steps:
    - name: login
      path: /shop/items/${vu}
  load:
    connections: 10
    iterations: 1000
  thresholds: ["login.p99 < 200ms", "checkout.errorRate < 1%"]
)";

TEST(SpecScenarios, ReadsEveryFieldIntoTheSpec) {
  const ParsedLoadTest parsed = parse_loadtest(kShop);
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  const LoadTestSpec& spec = parsed.spec;
  EXPECT_TRUE(spec.requests.empty()) << "a scenario run has no request mix";
  EXPECT_EQ(spec.load.iterations, 1000u);
  EXPECT_EQ(spec.load.connections, 10u);
  EXPECT_FALSE(spec.load.requests.has_value());

  ASSERT_EQ(spec.data.size(), 3u);
  DataSourceSpec user;
  user.name = "user";
  user.file = "users.csv";
  user.columns = {"name", "password"};
  user.mode = DataSourceSpec::Mode::unique;
  user.on_exhausted = DataSourceSpec::OnExhausted::recycle;
  EXPECT_EQ(spec.data[0], user);
  DataSourceSpec items;
  items.name = "items";
  items.from = ObjectKeyRef{ObjectKeyRef::Kind::config_map, "shop-items", "items.jsonl"};
  items.format = DataSourceSpec::Format::jsonl;  // from the key's extension
  items.mode = DataSourceSpec::Mode::random;
  EXPECT_EQ(spec.data[1], items);
  DataSourceSpec cards;
  cards.name = "cards";
  cards.from = ObjectKeyRef{ObjectKeyRef::Kind::secret, "shop-cards", "cards.txt"};
  cards.format = DataSourceSpec::Format::jsonl;  // given, over the extension
  EXPECT_EQ(spec.data[2], cards);

  ASSERT_EQ(spec.scenarios.size(), 2u);
  const ScenarioSpec& buy = spec.scenarios[0];
  EXPECT_EQ(buy.name, "buy");
  EXPECT_EQ(buy.weight, 3u);
  EXPECT_FALSE(buy.cookies);
  EXPECT_FALSE(buy.end_iteration_on_extract_miss);
  EXPECT_TRUE(buy.end_iteration_on_failure);
  EXPECT_EQ(buy.pacing, std::chrono::nanoseconds(2s));
  ASSERT_EQ(buy.steps.size(), 3u);

  StepSpec login;
  login.name = "login";
  login.method = "POST";
  login.path = "/shop/login";
  login.headers = {{"Content-Type", "application/json"}};
  login.body = R"({"user":"${user.name}","password":"${user.password}"})";
  login.expect.status = {200};
  login.extract = {{"token", ExtractSpec::From::json, "/token", std::nullopt},
                   {"sid", ExtractSpec::From::cookie, "session", std::nullopt},
                   {"id", ExtractSpec::From::regex, R"(id":(\d+))", 1u},
                   {"trace", ExtractSpec::From::header, "X-Trace-Id", std::nullopt}};
  login.checks = {{CheckSpec::Kind::json_equals, "/user", "alice"},
                  {CheckSpec::Kind::json_matches, "/id", "[0-9]+"},
                  {CheckSpec::Kind::body_contains, "", "token"}};
  login.think_time.distribution = ThinkTime::Distribution::constant;
  login.think_time.constant = 1s;
  EXPECT_EQ(buy.steps[0], login);

  const StepSpec& cart = buy.steps[1];
  EXPECT_EQ(cart.method, "GET");
  EXPECT_EQ(cart.path, "/shop/cart/${id}?sku=${items.sku}&n=${random(1, 5)}");
  EXPECT_EQ(cart.think_time.distribution, ThinkTime::Distribution::uniform);
  EXPECT_EQ(cart.think_time.min, 0s);
  EXPECT_EQ(cart.think_time.max, 3s);
  EXPECT_EQ(buy.steps[2].think_time.distribution, ThinkTime::Distribution::exponential);
  EXPECT_EQ(buy.steps[2].think_time.mean, 2s);

  // The defaults.
  const ScenarioSpec& browse = spec.scenarios[1];
  EXPECT_EQ(browse.weight, 1u);
  EXPECT_TRUE(browse.cookies);
  EXPECT_TRUE(browse.end_iteration_on_extract_miss);
  EXPECT_FALSE(browse.end_iteration_on_failure);
  EXPECT_FALSE(browse.pacing.has_value());
  EXPECT_EQ(browse.steps[0].think_time.distribution, ThinkTime::Distribution::none);
  EXPECT_EQ(spec.data[0].format, DataSourceSpec::Format::csv);
}

TEST(SpecScenarios, DataFormatFollowsTheNameUnlessGiven) {
  const auto format_of = [](const std::string& origin) {
    const ParsedLoadTest parsed = parse_loadtest(
        with_spec("target: {url: 'http://a/'}\nload: {duration: 1s}\ndata: [{name: d, " + origin +
                  "}]\nscenarios: [{name: s, steps: [{name: a}]}]"));
    EXPECT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
    return parsed.ok() ? parsed.spec.data.front().format : DataSourceSpec::Format::csv;
  };
  using F = DataSourceSpec::Format;
  EXPECT_EQ(format_of("file: rows.jsonl"), F::jsonl);
  EXPECT_EQ(format_of("file: ROWS.NDJSON"), F::jsonl);
  EXPECT_EQ(format_of("file: rows.csv"), F::csv);
  EXPECT_EQ(format_of("file: rows"), F::csv);
  EXPECT_EQ(format_of("file: rows.jsonl, format: csv"), F::csv);
  EXPECT_EQ(format_of("configMapKeyRef: {name: c, key: rows.ndjson}"), F::jsonl);
}

// A run of one scenario whose step is `step` (a flow map's inside), with
// `extra` lines of spec after it.
std::string one_step(const std::string& step, const std::string& extra = "") {
  return "target: {url: 'http://a/'}\nload: {duration: 1s}\nscenarios:\n- name: s\n  steps:\n"
         "  - {name: a, " +
         step + "}\n" + extra;
}

struct InvalidScenario {
  const char* rule;
  std::string spec_body;
  std::vector<std::string> errors;
};

void PrintTo(const InvalidScenario& row, std::ostream* out) {
  *out << row.rule;
}

class ScenarioValidation : public ::testing::TestWithParam<InvalidScenario> {};

TEST_P(ScenarioValidation, ReportsExactlyTheseErrors) {
  const ParsedLoadTest parsed = parse_loadtest(with_spec(GetParam().spec_body));
  EXPECT_FALSE(parsed.ok());
  EXPECT_EQ(messages(parsed), GetParam().errors);
}

std::string PrintRule(const ::testing::TestParamInfo<InvalidScenario>& info) {
  return info.param.rule;
}

const std::string kTarget = "target: {url: 'http://a/'}\n";
const std::string kLoad = "load: {duration: 1s}\n";
const std::string kOneScenario = "scenarios: [{name: s, steps: [{name: a}]}]\n";

INSTANTIATE_TEST_SUITE_P(
    Exclusive, ScenarioValidation,
    ::testing::Values(
        InvalidScenario{"requests_and_scenarios",
                        kTarget + kLoad + kOneScenario + "requests: [{name: r}]",
                        {"spec.scenarios: not with spec.requests: a run is a request mix or "
                         "scenarios, not both (give each request as a step of a scenario)"}},
        InvalidScenario{"load_requests_with_scenarios",
                        kTarget + "load: {requests: 10}\n" + kOneScenario,
                        {"spec.load.requests: not with spec.scenarios: use spec.load.iterations "
                         "(iterations to complete)",
                         "spec.load: one of duration or iterations is required"}},
        InvalidScenario{"iterations_without_scenarios",
                        kTarget + "load: {duration: 1s, iterations: 10}",
                        {"spec.load.iterations: only with spec.scenarios (a request mix is "
                         "bounded by spec.load.requests)"}},
        InvalidScenario{"data_without_scenarios",
                        kTarget + kLoad + "data: [{name: d, file: d.csv}]",
                        {"spec.data: only with spec.scenarios (their templates read the data)"}},
        InvalidScenario{"neither_duration_nor_iterations",
                        kTarget + "load: {connections: 2}\n" + kOneScenario,
                        {"spec.load: one of duration or iterations is required"}},
        InvalidScenario{"iterations_zero",
                        kTarget + "load: {iterations: 0}\n" + kOneScenario,
                        {"spec.load.iterations: must be >= 1, got 0"}},
        InvalidScenario{
            "iterations_at_rate_too_long",
            kTarget + "load: {rate: 0.5, iterations: 9000000000000000000}\n" + kOneScenario,
            {"spec.load.iterations: at spec.load.rate 0.5/s, 9000000000000000000 "
             "iterations take longer than 8760h"}},
        InvalidScenario{"h2c",
                        "target: {url: 'http://a/', protocol: h2c}\n" + kLoad + kOneScenario,
                        {"spec.target.protocol: scenarios run over HTTP/1.1 for now, got h2c"}},
        InvalidScenario{"http2",
                        "target: {url: 'https://a/', protocol: http2}\n" + kLoad + kOneScenario,
                        {"spec.target.protocol: scenarios run over HTTP/1.1 for now, got http2"}},
        InvalidScenario{"search",
                        kTarget + kLoad + kOneScenario +
                            "thresholds: ['p99 < 1s']\nsearch: {rate: {start: 10}}",
                        {"spec.search: not with spec.scenarios yet: it runs a request mix"}},
        InvalidScenario{
            "variants",
            "target: {protocol: http1}\n" + kLoad + kOneScenario +
                "variants: [{name: a, target: {url: 'http://a/'}}, {name: b, target: {url: "
                "'http://b/'}}]\nexperiment: {rounds: 2}",
            {"spec.variants: not with spec.scenarios yet: it runs a request mix",
             "spec.experiment: not with spec.scenarios yet: it runs a request mix"}},
        InvalidScenario{"threshold_on_unknown_step",
                        kTarget + kLoad + kOneScenario + "thresholds: ['b.p99 < 1s']",
                        {"spec.thresholds[0]: unknown step \"b\" in \"b.p99 < 1s\""}}),
    PrintRule);

INSTANTIATE_TEST_SUITE_P(
    Scenarios, ScenarioValidation,
    ::testing::Values(
        InvalidScenario{"scenario_not_a_map",
                        kTarget + kLoad + "scenarios: [buy]",
                        {"spec.scenarios[0]: must be a map, got \"buy\""}},
        InvalidScenario{"scenario_name_required",
                        kTarget + kLoad + "scenarios: [{steps: [{name: a}]}]",
                        {"spec.scenarios[0].name: required"}},
        InvalidScenario{"scenario_name_form",
                        kTarget + kLoad + "scenarios: [{name: Buy_1, steps: [{name: a}]}]",
                        {"spec.scenarios[0].name: invalid scenario name \"Buy_1\": must be a "
                         "lowercase RFC 1123 label (a-z, 0-9 and '-', at most 63 characters)"}},
        InvalidScenario{"scenario_named_twice",
                        kTarget + kLoad +
                            "scenarios: [{name: s, steps: [{name: a}]}, {name: s, steps: [{name: "
                            "a}]}]",
                        {"spec.scenarios[1].name: scenario \"s\" is named twice"}},
        InvalidScenario{"steps_required",
                        kTarget + kLoad + "scenarios: [{name: s}]",
                        {"spec.scenarios[0].steps: required: the requests a virtual user makes, "
                         "in order"}},
        InvalidScenario{"steps_empty",
                        kTarget + kLoad + "scenarios: [{name: s, steps: []}]",
                        {"spec.scenarios[0].steps: at least one step is required"}},
        InvalidScenario{"weight_zero",
                        kTarget + kLoad + "scenarios: [{name: s, weight: 0, steps: [{name: a}]}]",
                        {"spec.scenarios[0].weight: must be between 1 and 1000000, got 0"}},
        InvalidScenario{
            "cookies_not_boolean",
            kTarget + kLoad + "scenarios: [{name: s, cookies: 'yes', steps: [{name: a}]}]",
            {"spec.scenarios[0].cookies: must be true or false, got string \"yes\""}},
        InvalidScenario{
            "on_extract_miss",
            kTarget + kLoad + "scenarios: [{name: s, onExtractMiss: stop, steps: [{name: a}]}]",
            {"spec.scenarios[0].onExtractMiss: must be one of endIteration, continue, got "
             "\"stop\""}},
        InvalidScenario{
            "on_failure",
            kTarget + kLoad + "scenarios: [{name: s, onFailure: abort, steps: [{name: a}]}]",
            {"spec.scenarios[0].onFailure: must be one of continue, endIteration, got "
             "\"abort\""}},
        InvalidScenario{"pacing_zero",
                        kTarget + kLoad + "scenarios: [{name: s, pacing: 0s, steps: [{name: a}]}]",
                        {"spec.scenarios[0].pacing: must be > 0, got \"0s\""}},
        InvalidScenario{"pacing_too_long",
                        kTarget + kLoad + "scenarios: [{name: s, pacing: 61m, steps: [{name: a}]}]",
                        {"spec.scenarios[0].pacing: must be at most 1h, got \"61m\""}},
        InvalidScenario{"scenario_unknown_field",
                        kTarget + kLoad + "scenarios: [{name: s, loops: 3, steps: [{name: a}]}]",
                        {"spec.scenarios[0].loops: unknown field"}}),
    PrintRule);

INSTANTIATE_TEST_SUITE_P(
    Steps, ScenarioValidation,
    ::testing::Values(
        InvalidScenario{"step_name_required",
                        kTarget + kLoad + "scenarios: [{name: s, steps: [{path: /}]}]",
                        {"spec.scenarios[0].steps[0].name: required"}},
        InvalidScenario{"step_name_form",
                        kTarget + kLoad + "scenarios: [{name: s, steps: [{name: Login}]}]",
                        {"spec.scenarios[0].steps[0].name: invalid name \"Login\": must match "
                         "[a-z0-9]([-a-z0-9_]*[a-z0-9])? (names become metric labels)"}},
        InvalidScenario{
            "step_named_twice_in_a_scenario",
            kTarget + kLoad + "scenarios: [{name: s, steps: [{name: a}, {name: a}]}]",
            {"spec.scenarios[0].steps[1].name: duplicate name \"a\" in this scenario (steps of "
             "other scenarios may share it)"}},
        InvalidScenario{"method",
                        one_step("method: post"),
                        {"spec.scenarios[0].steps[0].method: invalid method \"post\": must be an "
                         "upper-case HTTP token such as GET or POST"}},
        InvalidScenario{"path_slash",
                        one_step("path: 'shop/${vu}'"),
                        {"spec.scenarios[0].steps[0].path: must start with '/', got "
                         "\"shop/${vu}\""}},
        InvalidScenario{"path_space_outside_references",
                        one_step("path: '/a b/${random(1, 2)}'"),
                        {"spec.scenarios[0].steps[0].path: must not contain spaces or control "
                         "characters outside ${...}, got \"/a b/${random(1, 2)}\""}},
        InvalidScenario{"unknown_variable_in_path",
                        one_step("path: '/cart/${tokn}', extract: [{name: token, json: /t}]"),
                        {"spec.scenarios[0].steps[0].path: unknown variable \"tokn\" in "
                         "\"${tokn}\""}},
        InvalidScenario{
            "variables_are_the_scenarios_own",
            "target: {url: 'http://a/'}\nload: {duration: 1s}\nscenarios:\n"
            "- {name: s, steps: [{name: a, extract: [{name: token, json: /t}]}]}\n"
            "- {name: t, steps: [{name: a, headers: {Authorization: 'Bearer ${token}'}}]}",
            {"spec.scenarios[1].steps[0].headers.Authorization: unknown variable \"token\" in "
             "\"${token}\""}},
        InvalidScenario{"unknown_data_source_in_body",
                        one_step("body: '{\"u\":\"${usr.name}\"}'"),
                        {"spec.scenarios[0].steps[0].body: unknown data source \"usr\" in "
                         "\"${usr.name}\""}},
        InvalidScenario{
            "undeclared_column",
            one_step("body: '${user.email}'",
                     "data: [{name: user, file: u.csv, columns: [name, password]}]"),
            {"spec.scenarios[0].steps[0].body: unknown column \"email\" of data source \"user\" "
             "in \"${user.email}\""}},
        InvalidScenario{"bad_template_syntax",
                        one_step("body: '${random(9,1)} ${token'"),
                        {"spec.scenarios[0].steps[0].body: bad random range: A is above B in "
                         "\"${random(9,1)}\"; unterminated \"${\" in \"${token\""}},
        InvalidScenario{"header_name",
                        one_step("headers: {'Bad Header': x}"),
                        {"spec.scenarios[0].steps[0].headers: invalid header name \"Bad "
                         "Header\""}},
        InvalidScenario{"header_framing",
                        one_step("headers: {Transfer-Encoding: chunked}"),
                        {"spec.scenarios[0].steps[0].headers: header \"Transfer-Encoding\" is set "
                         "by loadgen from the body"}},
        InvalidScenario{"expect_status",
                        one_step("expect: {status: [99]}"),
                        {"spec.scenarios[0].steps[0].expect.status[0]: must be between 100 and "
                         "599, got 99"}},
        InvalidScenario{"step_unknown_field",
                        one_step("headersFrom: []"),
                        {"spec.scenarios[0].steps[0].headersFrom: unknown field"}}),
    PrintRule);

INSTANTIATE_TEST_SUITE_P(
    Extract, ScenarioValidation,
    ::testing::Values(
        InvalidScenario{"extract_name_required",
                        one_step("extract: [{json: /t}]"),
                        {"spec.scenarios[0].steps[0].extract[0].name: required"}},
        InvalidScenario{"extract_name_builtin",
                        one_step("extract: [{name: vu, json: /t}]"),
                        {"spec.scenarios[0].steps[0].extract[0].name: invalid variable name: "
                         "\"vu\" is the name of a built-in"}},
        InvalidScenario{"extract_name_grammar",
                        one_step("extract: [{name: 'a.b', json: /t}]"),
                        {"spec.scenarios[0].steps[0].extract[0].name: invalid variable name: "
                         "\"a.b\" is not a name: want [A-Za-z_][A-Za-z0-9_-]*, at most 64 "
                         "bytes"}},
        InvalidScenario{"extract_no_source",
                        one_step("extract: [{name: t}]"),
                        {"spec.scenarios[0].steps[0].extract[0]: exactly one of json, header, "
                         "cookie or regex is required"}},
        InvalidScenario{"extract_two_sources",
                        one_step("extract: [{name: t, json: /t, header: X-T}]"),
                        {"spec.scenarios[0].steps[0].extract[0]: exactly one of json, header, "
                         "cookie or regex is required"}},
        InvalidScenario{"extract_bad_pointer",
                        one_step("extract: [{name: t, json: token}]"),
                        {"spec.scenarios[0].steps[0].extract[0].json: JSON pointer \"token\": "
                         "must be empty or start with \"/\""}},
        InvalidScenario{"extract_bad_header",
                        one_step("extract: [{name: t, header: 'X T'}]"),
                        {"spec.scenarios[0].steps[0].extract[0].header: header name \"X T\" is "
                         "not a token (RFC 9110)"}},
        InvalidScenario{"extract_bad_cookie",
                        one_step("extract: [{name: t, cookie: 'a=b'}]"),
                        {"spec.scenarios[0].steps[0].extract[0].cookie: cookie name \"a=b\" is "
                         "not a token (RFC 9110)"}},
        InvalidScenario{"extract_bad_regex",
                        one_step("extract: [{name: t, regex: '(x'}]"),
                        {"spec.scenarios[0].steps[0].extract[0].regex: regular expression "
                         "\"(x\": missing closing parenthesis at offset 2"}},
        InvalidScenario{"extract_group_beyond_the_pattern",
                        one_step("extract: [{name: t, regex: 'a(b)', group: 2}]"),
                        {"spec.scenarios[0].steps[0].extract[0].group: group 2 of \"a(b)\", "
                         "which has 1 group"}},
        InvalidScenario{"extract_group_range",
                        one_step("extract: [{name: t, regex: 'a(b)', group: 16}]"),
                        {"spec.scenarios[0].steps[0].extract[0].group: must be between 0 and 15, "
                         "got 16"}},
        InvalidScenario{"extract_group_without_regex",
                        one_step("extract: [{name: t, json: /t, group: 1}]"),
                        {"spec.scenarios[0].steps[0].extract[0].group: only with regex (the "
                         "group of the pattern to take)"}},
        InvalidScenario{
            "variable_named_as_data_source",
            one_step("extract: [{name: user, json: /u}]", "data: [{name: user, file: u.csv}]"),
            {"spec.scenarios[0].steps[0].extract[0].name: variable \"user\" is also the name of "
             "a data source (spec.data[0])"}},
        InvalidScenario{"extract_unknown_field",
                        one_step("extract: [{name: t, json: /t, default: x}]"),
                        {"spec.scenarios[0].steps[0].extract[0].default: unknown field"}}),
    PrintRule);

INSTANTIATE_TEST_SUITE_P(
    Checks, ScenarioValidation,
    ::testing::Values(
        InvalidScenario{"check_empty",
                        one_step("checks: [{}]"),
                        {"spec.scenarios[0].steps[0].checks[0]: one of json (with equals or "
                         "matches) or bodyContains is required"}},
        InvalidScenario{"check_json_alone",
                        one_step("checks: [{json: /a}]"),
                        {"spec.scenarios[0].steps[0].checks[0]: json needs exactly one of equals "
                         "or matches"}},
        InvalidScenario{"check_equals_and_matches",
                        one_step("checks: [{json: /a, equals: x, matches: y}]"),
                        {"spec.scenarios[0].steps[0].checks[0]: json needs exactly one of equals "
                         "or matches"}},
        InvalidScenario{"check_equals_without_json",
                        one_step("checks: [{equals: x}]"),
                        {"spec.scenarios[0].steps[0].checks[0].json: required with equals or "
                         "matches (the JSON pointer of the value)"}},
        InvalidScenario{"check_body_contains_with_json",
                        one_step("checks: [{bodyContains: x, json: /a}]"),
                        {"spec.scenarios[0].steps[0].checks[0]: bodyContains is a check of its "
                         "own: not with json, equals or matches"}},
        InvalidScenario{"check_body_contains_empty",
                        one_step("checks: [{bodyContains: ''}]"),
                        {"spec.scenarios[0].steps[0].checks[0].bodyContains: the text to look "
                         "for is empty"}},
        InvalidScenario{"check_bad_pointer",
                        one_step("checks: [{json: a, equals: x}]"),
                        {"spec.scenarios[0].steps[0].checks[0].json: JSON pointer \"a\": must be "
                         "empty or start with \"/\""}},
        InvalidScenario{"check_bad_pattern",
                        one_step("checks: [{json: /a, matches: '['}]"),
                        {"spec.scenarios[0].steps[0].checks[0].matches: regular expression "
                         "\"[\": missing terminating ] for character class at offset 1"}},
        InvalidScenario{"check_unknown_field",
                        one_step("checks: [{status: 200}]"),
                        {"spec.scenarios[0].steps[0].checks[0].status: unknown field",
                         "spec.scenarios[0].steps[0].checks[0]: one of json (with equals or "
                         "matches) or bodyContains is required"}}),
    PrintRule);

INSTANTIATE_TEST_SUITE_P(
    ThinkTimes, ScenarioValidation,
    ::testing::Values(
        InvalidScenario{"think_time_empty",
                        one_step("thinkTime: {}"),
                        {"spec.scenarios[0].steps[0].thinkTime: exactly one of constant, uniform "
                         "or exponential is required"}},
        InvalidScenario{"think_time_two",
                        one_step("thinkTime: {constant: 1s, exponential: {mean: 1s}}"),
                        {"spec.scenarios[0].steps[0].thinkTime: exactly one of constant, uniform "
                         "or exponential is required"}},
        InvalidScenario{"think_time_not_a_map",
                        one_step("thinkTime: 1s"),
                        {"spec.scenarios[0].steps[0].thinkTime: must be a map, got \"1s\""}},
        InvalidScenario{"constant_zero",
                        one_step("thinkTime: {constant: 0s}"),
                        {"spec.scenarios[0].steps[0].thinkTime.constant: must be > 0, got "
                         "\"0s\""}},
        InvalidScenario{"constant_too_long",
                        one_step("thinkTime: {constant: 2h}"),
                        {"spec.scenarios[0].steps[0].thinkTime.constant: must be at most 1h, got "
                         "\"2h\""}},
        InvalidScenario{"constant_no_unit",
                        one_step("thinkTime: {constant: 5}"),
                        {"spec.scenarios[0].steps[0].thinkTime.constant: invalid duration \"5\" "
                         "(a unit is required, e.g. \"5s\")"}},
        InvalidScenario{"uniform_max_below_min",
                        one_step("thinkTime: {uniform: {min: 3s, max: 1s}}"),
                        {"spec.scenarios[0].steps[0].thinkTime.uniform.max: must be >= min (3s), "
                         "got 1s"}},
        InvalidScenario{"uniform_max_required",
                        one_step("thinkTime: {uniform: {min: 1s}}"),
                        {"spec.scenarios[0].steps[0].thinkTime.uniform.max: required"}},
        InvalidScenario{"exponential_mean_required",
                        one_step("thinkTime: {exponential: {}}"),
                        {"spec.scenarios[0].steps[0].thinkTime.exponential.mean: required"}},
        InvalidScenario{"exponential_mean_too_long",
                        one_step("thinkTime: {exponential: {mean: 90m}}"),
                        {"spec.scenarios[0].steps[0].thinkTime.exponential.mean: must be at most "
                         "1h, got \"90m\""}}),
    PrintRule);

const std::string kScenarioReadingNothing = kTarget + kLoad + kOneScenario;

INSTANTIATE_TEST_SUITE_P(
    Data, ScenarioValidation,
    ::testing::Values(
        InvalidScenario{"data_name_required",
                        kScenarioReadingNothing + "data: [{file: u.csv}]",
                        {"spec.data[0].name: required"}},
        InvalidScenario{"data_name_builtin",
                        kScenarioReadingNothing + "data: [{name: now, file: u.csv}]",
                        {"spec.data[0].name: invalid data source name: \"now\" is the name of a "
                         "built-in"}},
        InvalidScenario{
            "data_named_twice",
            kScenarioReadingNothing + "data: [{name: u, file: u.csv}, {name: u, file: v.csv}]",
            {"spec.data[1].name: data source \"u\" is named twice"}},
        InvalidScenario{"data_no_origin",
                        kScenarioReadingNothing + "data: [{name: u}]",
                        {"spec.data[0]: exactly one of file (loadgen run), configMapKeyRef or "
                         "secretKeyRef is required"}},
        InvalidScenario{"data_two_origins",
                        kScenarioReadingNothing +
                            "data: [{name: u, file: u.csv, secretKeyRef: {name: s, key: k}}]",
                        {"spec.data[0]: exactly one of file (loadgen run), configMapKeyRef or "
                         "secretKeyRef is required"}},
        InvalidScenario{"data_file_empty",
                        kScenarioReadingNothing + "data: [{name: u, file: ''}]",
                        {"spec.data[0].file: must be a file's path, got \"\""}},
        InvalidScenario{"data_ref_key_required",
                        kScenarioReadingNothing + "data: [{name: u, configMapKeyRef: {name: c}}]",
                        {"spec.data[0].configMapKeyRef.key: required"}},
        InvalidScenario{
            "data_ref_bad_name",
            kScenarioReadingNothing + "data: [{name: u, secretKeyRef: {name: Users, key: k}}]",
            {"spec.data[0].secretKeyRef.name: invalid name \"Users\""}},
        InvalidScenario{"data_format",
                        kScenarioReadingNothing + "data: [{name: u, file: u.csv, format: json}]",
                        {"spec.data[0].format: must be one of csv, jsonl, got \"json\""}},
        InvalidScenario{"data_mode",
                        kScenarioReadingNothing + "data: [{name: u, file: u.csv, mode: once}]",
                        {"spec.data[0].mode: must be one of unique, sequential, random, got "
                         "\"once\""}},
        InvalidScenario{"data_on_exhausted",
                        kScenarioReadingNothing +
                            "data: [{name: u, file: u.csv, mode: unique, onExhausted: wrap}]",
                        {"spec.data[0].onExhausted: must be one of stop, recycle, got \"wrap\""}},
        InvalidScenario{
            "data_on_exhausted_without_unique",
            kScenarioReadingNothing + "data: [{name: u, file: u.csv, onExhausted: stop}]",
            {"spec.data[0].onExhausted: only with mode unique (sequential and random "
             "rows never run out)"}},
        InvalidScenario{"data_column_name",
                        kScenarioReadingNothing +
                            "data: [{name: u, file: u.csv, columns: [name, 'first name']}]",
                        {"spec.data[0].columns[1]: invalid column name: \"first name\" is not a "
                         "name: want [A-Za-z_][A-Za-z0-9_-]*"}},
        InvalidScenario{
            "data_column_twice",
            kScenarioReadingNothing + "data: [{name: u, file: u.csv, columns: [name, name]}]",
            {"spec.data[0].columns[1]: column \"name\" is named twice"}},
        InvalidScenario{"data_unknown_field",
                        kScenarioReadingNothing + "data: [{name: u, file: u.csv, header: true}]",
                        {"spec.data[0].header: unknown field"}}),
    PrintRule);

// A source without declared columns takes any column: its header decides
// when the data is read. Declared columns are checked before the run.
TEST(SpecScenarios, ColumnsAreCheckedOnlyWhereDeclared) {
  const auto parse = [](const std::string& data) {
    return parse_loadtest(with_spec(one_step("body: '${user.email}'", "data: [" + data + "]")));
  };
  EXPECT_TRUE(parse("{name: user, file: u.csv}").ok());
  EXPECT_TRUE(parse("{name: user, file: u.csv, columns: [email]}").ok());
  EXPECT_EQ(messages(parse("{name: user, file: u.csv, columns: [name]}")),
            std::vector<std::string>{"spec.scenarios[0].steps[0].body: unknown column \"email\" "
                                     "of data source \"user\" in \"${user.email}\""});
}

// Extracted anywhere in the scenario, a variable may be read by any step of
// it (a step before the extraction reads nothing in the first iteration:
// the run's to report).
TEST(SpecScenarios, AVariableIsTheWholeScenarios) {
  const ParsedLoadTest parsed =
      parse_loadtest(with_spec(kTarget + kLoad +
                               "scenarios:\n- name: s\n  steps:\n  - {name: a, path: '/x/${id}'}\n"
                               "  - {name: b, extract: [{name: id, json: /id}]}\n"));
  EXPECT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
}

TEST(SpecScenarios, ALocalFileIsRefusedInTheClusterOnly) {
  const ParsedLoadTest local = parse_loadtest(kShop);
  ASSERT_TRUE(local.ok()) << ::testing::PrintToString(messages(local));
  const ParsedLoadTest cluster = parse_loadtest_for_cluster(kShop);
  ASSERT_EQ(cluster.errors.size(), 1u);
  EXPECT_EQ(cluster.errors[0].path, "spec.data[0].file");
  EXPECT_NE(cluster.errors[0].message.find("\"users.csv\""), std::string::npos)
      << cluster.errors[0].message;
  EXPECT_NE(cluster.errors[0].message.find("configMapKeyRef"), std::string::npos);
  // The same spec with its rows from a ConfigMap runs in the cluster.
  std::string from_config_map = kShop;
  from_config_map.replace(from_config_map.find("file: users.csv"), 15,
                          "configMapKeyRef: {name: shop-users, key: users.csv}");
  EXPECT_TRUE(parse_loadtest_for_cluster(from_config_map).ok());
}

TEST(SpecScenarios, AnEmptyScenarioListIsARequestMix) {
  const ParsedLoadTest parsed = parse_loadtest(with_spec(kTarget + kLoad + "scenarios: []"));
  ASSERT_TRUE(parsed.ok()) << ::testing::PrintToString(messages(parsed));
  ASSERT_EQ(parsed.spec.requests.size(), 1u);
  EXPECT_EQ(parsed.spec.requests[0].name, "default");
}

TEST(SpecScenarios, ListsAreBounded) {
  const auto list = [](const std::string& item, size_t count) {
    std::string out = "[";
    for (size_t i = 0; i < count; ++i) out += (i > 0 ? ", " : "") + item;
    return out + "]";
  };
  const auto errors = [](const std::string& body) {
    return messages(parse_loadtest(with_spec(body)));
  };
  EXPECT_EQ(errors(kTarget + kLoad + "scenarios: " + list("{name: s, steps: [{name: a}]}", 33)),
            std::vector<std::string>{"spec.scenarios: at most 32 items, got 33"});
  EXPECT_EQ(
      errors(kTarget + kLoad + "scenarios: [{name: s, steps: " + list("{name: a}", 65) + "}]"),
      std::vector<std::string>{"spec.scenarios[0].steps: at most 64 items, got 65"});
  EXPECT_EQ(
      errors(one_step("extract: " + list("{name: t, json: /t}", 33))),
      std::vector<std::string>{"spec.scenarios[0].steps[0].extract: at most 32 items, got 33"});
  EXPECT_EQ(
      errors(one_step("checks: " + list("{bodyContains: x}", 33))),
      std::vector<std::string>{"spec.scenarios[0].steps[0].checks: at most 32 items, got 33"});
  EXPECT_EQ(errors(kScenarioReadingNothing + "data: " + list("{name: u, file: u.csv}", 9)),
            std::vector<std::string>{"spec.data: at most 8 items, got 9"});
}

}  // namespace
}  // namespace kubeload
