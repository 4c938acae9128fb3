#include "plugin/cli.hpp"

#include <cctype>
#include <charconv>
#include <map>

#include "kubeload/duration.hpp"
#include "kubeload/names.hpp"

namespace kubeload::plugin {
namespace {

constexpr const char* kOverview =
    R"(kubectl kubeload: run LoadTests as CI gates and read their results

Usage:
  kubectl kubeload run -f FILE [--wait[=false]] [--timeout D] [-o FORMAT] [--report FORMAT=FILE]
  kubectl kubeload report NAME [-o FORMAT] [--trend N]
  kubectl kubeload compare A B [C ...] | EXPERIMENT [-o text|markdown|json]
  kubectl kubeload history TEST [-A] [-l SELECTOR] [--limit N] [-o FORMAT]
  kubectl kubeload completion bash|zsh

Commands:
  run         create a new run of a LoadTest manifest, follow it, print its report
  report      print the report of a LoadTest or of its LoadTestResult record
  compare     runs side by side, with the change of each against the first;
              one experiment: its variants, differences and comparisons
  history     the runs of one test (label kubeload.dev/test), newest first,
              their records included (runs whose LoadTest is gone too)
  completion  the shell completion script for bash or zsh

Flags every command takes:
  -n, --namespace NS   the namespace (default: the manifest's, else the context's)
      --kubeconfig F   the kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)
      --context NAME   the kubeconfig context (default: current-context)
      --as USER        impersonate USER (as kubectl --as)
      --as-group GROUP impersonate GROUP too (repeatable; needs --as)
      --request-timeout D
                       give up on one API request after D (30s, 1m, a number of
                       seconds; 0: no limit; default 30s)
  -h, --help           usage (of a command: kubectl kubeload COMMAND --help)

Output (-o, --output): json, yaml, name and jsonpath=TEMPLATE print the
objects as kubectl does (run, report, history); the reports (text ab
jmeter junit markdown html) and tables (text markdown) by name as well.
--format FORMAT picks a report or table only: --format json is the report's
or the table's own JSON, -o json the object.

Exit status: 0 passed (run) or done, 1 the run missed its gate,
2 error: bad input, API error, a failed run or a timeout.
)";

constexpr const char* kRunUsage = R"(Usage: kubectl kubeload run -f FILE [flags]

Creates a new run of the LoadTest in FILE: the object is created with
metadata.generateName "<name>-" and the label kubeload.dev/test kept (set to
the manifest's name when missing), so every run is a new object and its
history stays. Progress goes to stderr; the report goes to stdout.

Flags:
  -f, --filename FILE   the LoadTest manifest (YAML or JSON, one document; - for stdin)
      --wait[=BOOL]     follow the run to its end (default true); --wait=false
                        prints the new name and exits 0
      --timeout D       give up waiting after D (e.g. 10m, 1h; 0: no limit); default:
                        the spec's start timeout + warm-up + duration + 5m, or 1h
                        for a run bounded by a request count alone
  -o, --output FORMAT   the report: text (default) | ab | jmeter | junit | markdown | html;
                        or the finished LoadTest: json | yaml | name | jsonpath=TEMPLATE
                        (with --wait=false: the created LoadTest, printed at once)
      --format FORMAT   the report only: text | ab | jmeter | json | junit | markdown | html
      --report FORMAT=FILE
                        also write that report to FILE when the wait ends (repeatable),
                        e.g. --report junit=kubeload.xml --report html=kubeload.html;
                        written after a timeout too, showing the run unfinished
      --trend N         the html report's trend: p50, p99 and rps of the test's
                        last N runs from their records (default 20; 0: none)

Exit status: 0 verdict Pass (or no gate), 1 verdict Fail, 2 the run failed,
the wait timed out, or any error.
)";

constexpr const char* kReportUsage = R"(Usage: kubectl kubeload report NAME [-o FORMAT] [--trend N]

Prints the report of a run from its status. NAME is a LoadTest, else a
LoadTestResult record, else a LoadTest that is gone (its newest record);
lt/NAME or ltr/NAME (loadtest/NAME, loadtestresult/NAME) names one kind only.

Flags:
  -o, --output FORMAT   the report: text (default) | ab | jmeter | junit | markdown | html;
                        or the object: json | yaml | name | jsonpath=TEMPLATE
      --format FORMAT   the report only: text | ab | jmeter | json | junit | markdown | html
      --trend N         the html report's trend: p50, p99 and rps of the test's
                        last N runs up to this one, from their records (default 20;
                        0: none)

Exit status: 0 printed, 2 error (not found, no access, a bad status).
)";

constexpr const char* kCompareUsage = R"(Usage: kubectl kubeload compare A B [C ...] [-o FORMAT]
       kubectl kubeload compare EXPERIMENT [-o FORMAT]

Shows runs side by side (phase, verdict, requests, rps, p50, p90, p99,
errors), each with its change against the first: percent for rps and
latencies, percentage points for the error rate. Each of A, B, ... is a
LoadTest, else a LoadTestResult record, else a LoadTest that is gone (its
newest record); lt/NAME or ltr/NAME (loadtest/NAME, loadtestresult/NAME)
names one kind only.

One experiment (a LoadTest with spec.variants) shows its variants side by
side (requests, rps, p50, p90, p99, errors, the target's CPU and memory),
each variant's difference from the first with its 95% interval, and each
comparison's outcome.

Flags:
  -o, --output FORMAT   text | markdown | json (default text); compare prints a
                        comparison, not objects: no yaml, name or jsonpath
      --format FORMAT   the same

Exit status: 0 printed, 2 error.
)";

constexpr const char* kHistoryUsage =
    R"(Usage: kubectl kubeload history TEST [-A] [-l SELECTOR] [--limit N] [-o FORMAT]

Lists the runs of the test, newest first: the LoadTests labelled
kubeload.dev/test=TEST and their LoadTestResult records, each run once (its
LoadTest while it exists, else its record, the LoadTest shown as deleted),
with phase, verdict, rps, p99, errors, revision and record.

Flags:
  -A, --all-namespaces  the runs in every namespace, with a NAMESPACE column
                        (-n is then ignored, as in kubectl)
  -l, --selector SEL    only runs matching the label selector too, e.g.
                        -l 'env=staging,tier in (web,api)'
      --limit N         at most N runs, the newest (default: all)
  -o, --output FORMAT   the table: text (default) | markdown; or the runs as
                        kubectl get prints them: json | yaml | name | jsonpath=TEMPLATE
                        (json, yaml and jsonpath see a List: {.items[*].metadata.name};
                        a run whose LoadTest is gone is its LoadTestResult record)
      --format FORMAT   the table only: text | markdown | json (one summary row per run)

Exit status: 0 printed (also when there are no runs), 2 error.
)";

constexpr const char* kCompletionUsage = R"(Usage: kubectl kubeload completion bash|zsh

Prints the shell completion script of kubectl-kubeload: commands, flags,
output formats, and LoadTest names and tests read from the cluster.

  bash:  source <(kubectl kubeload completion bash)        # in ~/.bashrc
  zsh:   source <(kubectl kubeload completion zsh)         # in ~/.zshrc, after compinit

For `kubectl kubeload <TAB>` (kubectl 1.26 and later), put the script
kubectl_complete-kubeload (plugin/krew/) on PATH next to kubectl-kubeload;
kubectl's own completion runs it.

Exit status: 0 printed, 2 an unknown shell.
)";

const std::map<std::string, Command> kCommands = {{"run", Command::run},
                                                  {"report", Command::report},
                                                  {"compare", Command::compare},
                                                  {"history", Command::history},
                                                  {"completion", Command::completion}};

constexpr const char* kReportFormats = "text, ab, jmeter, json, junit, markdown, html";
constexpr const char* kTableFormats = "text, markdown, json";

// A namespace name: RFC 1123 label, lowercase.
bool is_dns_label(const std::string& value) {
  return !value.empty() && value.size() <= 63 && value.front() != '-' && value.back() != '-' &&
         value.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
}

bool parse_bool(const std::string& flag, const std::string& text) {
  if (text == "true") return true;
  if (text == "false") return false;
  throw UsageError(flag + ": must be true or false, got \"" + text + "\"");
}

}  // namespace

std::string usage_text(const std::string& topic) {
  if (topic == "run") return kRunUsage;
  if (topic == "report") return kReportUsage;
  if (topic == "compare") return kCompareUsage;
  if (topic == "history") return kHistoryUsage;
  if (topic == "completion") return kCompletionUsage;
  return kOverview;
}

Options parse_arguments(const std::vector<std::string>& args) {
  Options options;
  std::vector<std::string> positional;
  bool help = false;
  std::optional<std::string> output_text;  // -o, --output
  std::optional<std::string> format_text;  // --format
  std::string output_flag;
  bool timeout_given = false;
  bool wait_given = false;
  bool limit_given = false;
  bool only_positional = false;
  bool all_namespaces_given = false;
  bool selector_given = false;
  bool trend_given = false;

  // Shell completion hands over a partial command line: no checks.
  if (!args.empty() && args.front() == "__complete") {
    options.command = Command::complete;
    options.words.assign(args.begin() + 1, args.end());
    return options;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (only_positional || arg == "-" || arg.empty() || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      only_positional = true;
      continue;
    }
    // --flag=value, -n=value, -nVALUE (kubectl's pflag accepts all three;
    // -ojsonpath={.a=b} keeps its '=' inside the value)
    std::string name = arg;
    std::optional<std::string> inline_value;
    if (arg[1] != '-') {
      name = arg.substr(0, 2);
      if (arg.size() > 2) inline_value = arg.substr(arg[2] == '=' ? 3 : 2);
    } else if (const size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    }
    const auto value = [&]() -> std::string {
      if (inline_value) {
        if (inline_value->empty()) throw UsageError(name + ": needs a value");
        return *inline_value;
      }
      if (i + 1 >= args.size()) throw UsageError(name + ": needs a value");
      return args[++i];
    };
    if (name == "-h" || name == "--help") {
      help = true;
    } else if (name == "--version") {
      options.command = Command::version;
      return options;
    } else if (name == "-n" || name == "--namespace") {
      options.namespace_ = value();
      if (!is_dns_label(options.namespace_)) {
        throw UsageError(name + ": \"" + options.namespace_ + "\" is not a namespace name");
      }
    } else if (name == "--kubeconfig") {
      options.kubeconfig = value();
    } else if (name == "--context") {
      options.context = value();
    } else if (name == "--as") {
      options.as = value();
    } else if (name == "--as-group") {
      options.as_groups.push_back(value());
    } else if (name == "--request-timeout") {
      // kubectl's: a bare number is seconds, else a duration; 0 means none.
      const std::string text = value();
      uint32_t seconds = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
      std::optional<std::chrono::nanoseconds> parsed;
      if (ec == std::errc() && end == text.data() + text.size()) {
        parsed = std::chrono::seconds(seconds);
      } else {
        parsed = parse_duration(text);
      }
      if (!parsed) {
        throw UsageError(name + ": \"" + text +
                         "\" is not a duration (e.g. 30s, 1m, a number of seconds, 0 for none)");
      }
      options.request_timeout = std::chrono::ceil<std::chrono::milliseconds>(*parsed);
    } else if (name == "-f" || name == "--filename") {
      if (!options.filename.empty()) throw UsageError(name + ": give one file");
      options.filename = value();
    } else if (name == "--wait") {
      options.wait = inline_value ? parse_bool(name, *inline_value) : true;
      wait_given = true;
    } else if (name == "--timeout") {
      const std::string text = value();
      const auto parsed = parse_duration(text);
      if (!parsed) {
        throw UsageError(name + ": \"" + text + "\" is not a duration (e.g. 90s, 10m, 1h)");
      }
      options.timeout = *parsed;
      timeout_given = true;
    } else if (name == "-o" || name == "--output") {
      output_text = value();
      output_flag = name;
    } else if (name == "--format") {
      format_text = value();
    } else if (name == "-A" || name == "--all-namespaces") {
      options.all_namespaces = inline_value ? parse_bool(name, *inline_value) : true;
      all_namespaces_given = true;
    } else if (name == "-l" || name == "--selector") {
      options.selector = value();
      check_label_selector(name, options.selector);
      selector_given = true;
    } else if (name == "--report") {
      const std::string text = value();
      const size_t eq = text.find('=');
      if (eq == std::string::npos || eq + 1 == text.size()) {
        throw UsageError(name + ": must be FORMAT=FILE, got \"" + text + "\"");
      }
      const auto format = loadgen::parse_report_format(text.substr(0, eq));
      if (!format) {
        throw UsageError(name + ": \"" + text.substr(0, eq) +
                         "\" is not a format (text, ab, jmeter, json, junit, markdown, html)");
      }
      options.report_files.emplace_back(*format, text.substr(eq + 1));
    } else if (name == "--trend") {
      const std::string text = value();
      uint32_t runs = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), runs);
      if (ec != std::errc() || end != text.data() + text.size()) {
        throw UsageError(name + ": must be a whole number of runs (0 for none), got \"" + text +
                         "\"");
      }
      options.trend = runs;
      trend_given = true;
    } else if (name == "--limit") {
      const std::string text = value();
      uint32_t limit = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
      if (ec != std::errc() || end != text.data() + text.size() || limit == 0) {
        throw UsageError(name + ": must be a positive whole number, got \"" + text + "\"");
      }
      options.limit = limit;
      limit_given = true;
    } else {
      throw UsageError("unknown flag \"" + arg + "\" (kubectl kubeload --help lists them)");
    }
  }

  if (positional.empty()) {
    options.command = Command::help;
    return options;
  }
  const auto command = kCommands.find(positional.front());
  if (command == kCommands.end()) {
    if (positional.front() == "help") {
      options.command = Command::help;
      if (positional.size() > 1) options.help_topic = positional[1];
      return options;
    }
    throw UsageError("unknown command \"" + positional.front() +
                     "\" (one of run, report, compare, history, completion)");
  }
  if (help) {
    options.command = Command::help;
    options.help_topic = positional.front();
    return options;
  }
  options.command = command->second;
  positional.erase(positional.begin());
  const std::string& verb = command->first;
  const auto refuse = [&](bool given, const char* flag) {
    if (given) throw UsageError(verb + ": " + flag + " is a flag of `run` only");
  };

  switch (options.command) {
    case Command::run:
      if (options.filename.empty()) throw UsageError("run: -f FILE is required");
      if (!positional.empty()) {
        throw UsageError("run: unexpected argument \"" + positional.front() +
                         "\" (the manifest comes with -f FILE)");
      }
      break;
    case Command::report:
      if (positional.size() != 1) {
        throw UsageError("report: give exactly one LoadTest or LoadTestResult name, got " +
                         std::to_string(positional.size()));
      }
      options.runs = {parse_run_reference("report", positional.front())};
      break;
    case Command::compare:
      // One name: an experiment, whose variants compare (write_compare).
      if (positional.empty()) {
        throw UsageError(
            "compare: give two or more LoadTest or LoadTestResult names, or one experiment");
      }
      for (const std::string& argument : positional) {
        options.runs.push_back(parse_run_reference("compare", argument));
      }
      break;
    case Command::history:
      if (positional.size() != 1) {
        throw UsageError("history: give exactly one test (the kubeload.dev/test label), got " +
                         std::to_string(positional.size()));
      }
      options.test = positional.front();
      if (!kubeload::is_label_value(options.test) || options.test.empty()) {
        throw UsageError("history: \"" + options.test +
                         "\" is not a label value (63 characters at most: letters, digits, "
                         "-, _ and . inside)");
      }
      break;
    case Command::completion:
      if (positional.size() != 1 || (positional[0] != "bash" && positional[0] != "zsh")) {
        throw UsageError("completion: give the shell, bash or zsh" +
                         (positional.empty() ? std::string() : ", got \"" + positional[0] + "\""));
      }
      options.shell = positional[0];
      break;
    default:
      break;
  }
  if (options.command != Command::run) {
    if (!options.filename.empty()) throw UsageError(verb + ": -f is a flag of `run` only");
    refuse(wait_given, "--wait");
    refuse(timeout_given, "--timeout");
    refuse(!options.report_files.empty(), "--report");
  }
  if (options.command != Command::history) {
    const auto history_only = [&](bool given, const char* flag) {
      if (given) throw UsageError(verb + ": " + flag + " is a flag of `history` only");
    };
    history_only(limit_given, "--limit");
    history_only(all_namespaces_given, "-A/--all-namespaces");
    history_only(selector_given, "-l/--selector");
  }
  if (trend_given && options.command != Command::run && options.command != Command::report) {
    throw UsageError(verb + ": --trend is a flag of `report` and `run` only");
  }
  if (output_text && format_text) {
    throw UsageError(verb + ": give -o or --format, not both (-o " + *output_text + ", --format " +
                     *format_text + ")");
  }
  const bool prints_objects = options.command == Command::run ||
                              options.command == Command::report ||
                              options.command == Command::history;
  const bool prints_tables =
      options.command == Command::compare || options.command == Command::history;
  if (output_text && prints_objects) {
    options.object_output = parse_object_output(output_flag, *output_text);
  }
  if (options.object_output || (!output_text && !format_text)) return options;
  const std::string& value = output_text ? *output_text : *format_text;
  const std::string flag = output_text ? output_flag : "--format";
  // With -o, json is the object: the report's and table's JSON is --format json.
  const std::string object_formats =
      output_text && prints_objects ? std::string(kObjectFormats) + ", " : "";
  if (prints_tables) {
    if (value == "text") {
      options.table_format = TableFormat::text;
    } else if (value == "markdown") {
      options.table_format = TableFormat::markdown;
    } else if (value == "json") {
      options.table_format = TableFormat::json;
    } else {
      throw UsageError(flag + ": \"" + value + "\" is not an output format of " + verb + " (" +
                       object_formats +
                       (object_formats.empty() ? kTableFormats : "text, markdown") + ")");
    }
  } else if (options.command == Command::run || options.command == Command::report) {
    const auto format = loadgen::parse_report_format(value);
    if (!format) {
      throw UsageError(
          flag + ": \"" + value + "\" is not an output format of " + verb + " (" + object_formats +
          (object_formats.empty() ? kReportFormats : "text, ab, jmeter, junit, markdown, html") +
          ")");
    }
    options.format = *format;
  } else {
    throw UsageError(verb + ": " + flag + " is not a flag of " + verb);
  }
  return options;
}

std::optional<RunReference::Kind> run_reference_kind(const std::string& type) {
  // kubectl's spellings of the CRDs' names (crds/: shortNames lt and ltr).
  static const std::map<std::string, RunReference::Kind> kTypes = {
      {"lt", RunReference::Kind::loadtest},
      {"loadtest", RunReference::Kind::loadtest},
      {"loadtests", RunReference::Kind::loadtest},
      {"loadtest.kubeload.dev", RunReference::Kind::loadtest},
      {"loadtests.kubeload.dev", RunReference::Kind::loadtest},
      {"ltr", RunReference::Kind::record},
      {"loadtestresult", RunReference::Kind::record},
      {"loadtestresults", RunReference::Kind::record},
      {"loadtestresult.kubeload.dev", RunReference::Kind::record},
      {"loadtestresults.kubeload.dev", RunReference::Kind::record}};
  std::string lower = type;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto kind = kTypes.find(lower);
  if (kind == kTypes.end()) return std::nullopt;
  return kind->second;
}

RunReference parse_run_reference(const std::string& verb, const std::string& argument) {
  RunReference reference;
  reference.argument = argument;
  reference.name = argument;
  if (const size_t slash = argument.find('/'); slash != std::string::npos) {
    const std::optional<RunReference::Kind> kind = run_reference_kind(argument.substr(0, slash));
    if (!kind) {
      throw UsageError(verb + ": \"" + argument +
                       "\": the type is lt (loadtest) or ltr (loadtestresult), as in lt/NAME "
                       "or ltr/NAME, got \"" +
                       argument.substr(0, slash) + "\"");
    }
    reference.kind = *kind;
    reference.name = argument.substr(slash + 1);
  }
  if (!kubeload::is_dns1123_subdomain(reference.name)) {
    throw UsageError(verb + ": \"" + argument + "\" is not a " +
                     (reference.kind == RunReference::Kind::loadtest ? "LoadTest"
                      : reference.kind == RunReference::Kind::record
                          ? "LoadTestResult"
                          : "LoadTest or LoadTestResult") +
                     " name (lowercase letters, digits, - and ., 253 at most)");
  }
  return reference;
}

void check_label_selector(const std::string& flag, const std::string& selector) {
  const auto trim = [](std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    return std::string(text);
  };
  const auto bad = [&](const std::string& requirement, const std::string& why) {
    return UsageError(flag + ": \"" + requirement + "\" in selector \"" + selector +
                      "\" is not a label requirement: " + why);
  };
  const auto check_key = [&](const std::string& requirement, const std::string& key) {
    if (!kubeload::is_qualified_name(key)) {
      throw bad(requirement, "\"" + key +
                                 "\" is not a label key (an optional DNS prefix and /, then at "
                                 "most 63 letters, digits, -, _ and .)");
    }
  };
  const auto check_value = [&](const std::string& requirement, const std::string& value) {
    if (!kubeload::is_label_value(value)) {
      throw bad(requirement, "\"" + value +
                                 "\" is not a label value (at most 63 letters, digits, -, _ "
                                 "and . inside)");
    }
  };
  if (trim(selector).empty()) throw UsageError(flag + ": the selector is empty");
  // Requirements are split at commas outside the parentheses of in/notin.
  std::vector<std::string> requirements;
  int depth = 0;
  std::string current;
  for (const char c : selector) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      requirements.push_back(trim(current));
      current.clear();
    } else {
      current += c;
    }
  }
  requirements.push_back(trim(current));
  for (const std::string& requirement : requirements) {
    if (requirement.empty()) throw bad(requirement, "an empty requirement (two commas?)");
    if (requirement.front() == '!') {
      check_key(requirement, trim(std::string_view(requirement).substr(1)));
      continue;
    }
    if (const size_t op = requirement.find_first_of("=!"); op != std::string::npos) {
      const std::string key = trim(std::string_view(requirement).substr(0, op));
      size_t value_at = op + 1;
      if (requirement[op] == '!' || requirement.compare(op, 2, "==") == 0) {
        if (requirement.compare(op, 2, "!=") != 0 && requirement.compare(op, 2, "==") != 0) {
          throw bad(requirement, "'!' only as \"!key\" or \"!=\"");
        }
        value_at = op + 2;
      }
      check_key(requirement, key);
      check_value(requirement, trim(std::string_view(requirement).substr(value_at)));
      continue;
    }
    if (const size_t op = requirement.find_first_of("<>"); op != std::string::npos) {
      // key>N, key<N: the API server compares the label as an integer.
      check_key(requirement, trim(std::string_view(requirement).substr(0, op)));
      const std::string number = trim(std::string_view(requirement).substr(op + 1));
      long long parsed = 0;
      const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), parsed);
      if (number.empty() || ec != std::errc() || end != number.data() + number.size()) {
        throw bad(requirement, "\"" + number + "\" is not an integer (for > and <)");
      }
      continue;
    }
    const size_t space = requirement.find(' ');
    if (space == std::string::npos) {
      if (requirement.find_first_of("()") != std::string::npos) {
        throw bad(requirement,
                  "the operators are =, ==, !=, in, notin, >, <, and !key or key alone");
      }
      check_key(requirement, requirement);
      continue;
    }
    const std::string key = requirement.substr(0, space);
    const std::string rest = trim(std::string_view(requirement).substr(space));
    std::string op;
    if (rest.rfind("in", 0) == 0) op = "in";
    if (rest.rfind("notin", 0) == 0) op = "notin";
    const std::string set = op.empty() ? "" : trim(std::string_view(rest).substr(op.size()));
    if (op.empty() || set.size() < 2 || set.front() != '(' || set.back() != ')') {
      throw bad(requirement,
                "the operators are =, ==, !=, in (v1,v2), notin (v1,v2), >, <, and !key "
                "or key alone");
    }
    check_key(requirement, key);
    const std::string values = set.substr(1, set.size() - 2);
    size_t from = 0;
    while (true) {
      const size_t comma = values.find(',', from);
      check_value(requirement,
                  trim(std::string_view(values).substr(
                      from, comma == std::string::npos ? std::string::npos : comma - from)));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
  }
}

}  // namespace kubeload::plugin
