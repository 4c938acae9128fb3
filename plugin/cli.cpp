#include "plugin/cli.hpp"

#include <charconv>
#include <map>

#include "kubeload/duration.hpp"

namespace kubeload::plugin {
namespace {

constexpr const char* kOverview =
    R"(kubectl kubeload: run LoadTests as CI gates and read their results

Usage:
  kubectl kubeload run -f FILE [--wait[=false]] [--timeout D] [-o FORMAT] [--report FORMAT=FILE]
  kubectl kubeload report NAME [-o FORMAT]
  kubectl kubeload compare A B [C ...] [-o text|markdown|json]
  kubectl kubeload history TEST [--limit N] [-o text|markdown|json]

Commands:
  run       create a new run of a LoadTest manifest, follow it, print its report
  report    print the report of a LoadTest
  compare   runs side by side, with the change of each against the first
  history   the runs of one test (label kubeload.dev/test), newest first

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

Report formats (-o, --format): text ab jmeter json junit markdown html

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
  -o, --format FORMAT   text | ab | jmeter | json | junit | markdown | html (default text)
      --report FORMAT=FILE
                        also write that report to FILE when the wait ends (repeatable),
                        e.g. --report junit=kubeload.xml --report html=kubeload.html;
                        written after a timeout too, showing the run unfinished

Exit status: 0 verdict Pass (or no gate), 1 verdict Fail, 2 the run failed,
the wait timed out, or any error.
)";

constexpr const char* kReportUsage = R"(Usage: kubectl kubeload report NAME [-o FORMAT]

Prints the report of the LoadTest NAME from its status.

Flags:
  -o, --format FORMAT   text | ab | jmeter | json | junit | markdown | html (default text)

Exit status: 0 printed, 2 error (not found, no access, a bad status).
)";

constexpr const char* kCompareUsage = R"(Usage: kubectl kubeload compare A B [C ...] [-o FORMAT]

Shows LoadTests side by side (phase, verdict, requests, rps, p50, p90, p99,
errors), each with its change against the first: percent for rps and
latencies, percentage points for the error rate.

Flags:
  -o, --format FORMAT   text | markdown | json (default text)

Exit status: 0 printed, 2 error.
)";

constexpr const char* kHistoryUsage =
    R"(Usage: kubectl kubeload history TEST [--limit N] [-o FORMAT]

Lists the LoadTests labelled kubeload.dev/test=TEST, newest first, with
phase, verdict, rps, p99 and errors.

Flags:
      --limit N         at most N runs (default: all)
  -o, --format FORMAT   text | markdown | json (default text)

Exit status: 0 printed (also when there are no runs), 2 error.
)";

const std::map<std::string, Command> kCommands = {{"run", Command::run},
                                                  {"report", Command::report},
                                                  {"compare", Command::compare},
                                                  {"history", Command::history}};

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
  return kOverview;
}

Options parse_arguments(const std::vector<std::string>& args) {
  Options options;
  std::vector<std::string> positional;
  bool help = false;
  bool format_given = false;
  std::string format_text;
  std::string format_flag;
  bool timeout_given = false;
  bool wait_given = false;
  bool limit_given = false;
  bool only_positional = false;

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
    // --flag=value, -n=value, -nVALUE (kubectl's pflag accepts all three)
    std::string name = arg;
    std::optional<std::string> inline_value;
    if (const size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
    } else if (arg.size() > 2 && arg[1] != '-') {
      name = arg.substr(0, 2);
      inline_value = arg.substr(2);
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
    } else if (name == "-o" || name == "--output" || name == "--format") {
      format_text = value();
      format_flag = name;
      format_given = true;
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
                     "\" (one of run, report, compare, history)");
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
        throw UsageError("report: give exactly one LoadTest name, got " +
                         std::to_string(positional.size()));
      }
      options.names = positional;
      break;
    case Command::compare:
      if (positional.size() < 2) {
        throw UsageError("compare: give two or more LoadTest names, got " +
                         std::to_string(positional.size()));
      }
      options.names = positional;
      break;
    case Command::history:
      if (positional.size() != 1) {
        throw UsageError("history: give exactly one test (the kubeload.dev/test label), got " +
                         std::to_string(positional.size()));
      }
      options.test = positional.front();
      if (!is_label_value(options.test) || options.test.empty()) {
        throw UsageError("history: \"" + options.test +
                         "\" is not a label value (63 characters at most: letters, digits, "
                         "-, _ and . inside)");
      }
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
  if (limit_given && options.command != Command::history) {
    throw UsageError(verb + ": --limit is a flag of `history` only");
  }
  for (const std::string& name : options.names) {
    if (name.empty() || name.size() > 253 ||
        name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-.") != std::string::npos) {
      throw UsageError(verb + ": \"" + name + "\" is not a LoadTest name");
    }
  }
  if (format_given) {
    if (options.command == Command::compare || options.command == Command::history) {
      if (format_text == "text") {
        options.table_format = TableFormat::text;
      } else if (format_text == "markdown") {
        options.table_format = TableFormat::markdown;
      } else if (format_text == "json") {
        options.table_format = TableFormat::json;
      } else {
        throw UsageError(format_flag + ": must be text, markdown or json for " + verb + ", got \"" +
                         format_text + "\"");
      }
    } else {
      const auto format = loadgen::parse_report_format(format_text);
      if (!format) {
        throw UsageError(format_flag +
                         ": must be text, ab, jmeter, json, junit, markdown or html, got \"" +
                         format_text + "\"");
      }
      options.format = *format;
    }
  }
  return options;
}

bool is_label_value(const std::string& value) {
  if (value.size() > 63) return false;
  if (value.empty()) return true;
  const auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (!alnum(value.front()) || !alnum(value.back())) return false;
  for (const char c : value) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

}  // namespace kubeload::plugin
