// kubectl-kubeload: the kubectl plugin (kubectl finds it on PATH as
// `kubectl kubeload`). The decisions live in cli.cpp, run.cpp and tables.cpp;
// this file does the I/O: configuration, API calls, following a run.

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stop_token>
#include <thread>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/meta.hpp"
#include "kubeload/duration.hpp"
#include "kubeload/names.hpp"
#include "operator/kube/client.hpp"
#include "operator/kube/config.hpp"
#include "plugin/cli.hpp"
#include "plugin/completion.hpp"
#include "plugin/printers.hpp"
#include "reports/gate_report.hpp"
#include "reports/recorded_run.hpp"
#include "reports/trend.hpp"

namespace kp = kubeload::plugin;
namespace kube = kubeload::kube;
using nlohmann::json;

namespace {

// The project version of CMakeLists.txt; the release archive and manifest carry it too.
constexpr const char* kVersion = KUBELOAD_VERSION;
// How long one watch request stays open before the loop looks at the clock.
constexpr int kWatchSeconds = 30;

int fail(const std::string& message) {
  std::fprintf(stderr, "kubectl kubeload: %s\n", message.c_str());
  return kp::kExitError;
}

struct Session {
  kube::ClusterConfig config;
  std::string namespace_;  // the flag, else the context's
  std::unique_ptr<kube::Client> client;
};

Session connect(const kp::Options& options) {
  Session session;
  session.config = kube::load_config(options.kubeconfig, options.context);
  session.namespace_ =
      options.namespace_.empty() ? session.config.default_namespace : options.namespace_;
  kube::ClientOptions client_options;
  client_options.field_manager = "kubectl-kubeload";
  client_options.user_agent = std::string("kubectl-kubeload/") + kVersion;
  client_options.impersonate_user = options.as;
  client_options.impersonate_groups = options.as_groups;
  if (options.request_timeout) client_options.request_timeout = *options.request_timeout;
  session.client = std::make_unique<kube::Client>(session.config, client_options);
  return session;
}

std::string describe(const kube::Response& response, const std::string& what) {
  if (response.is_not_found()) return what + " not found";
  return what + ": " + response.describe();
}

std::string in_namespace(const std::string& ns) {
  return ns.empty() ? "in all namespaces" : "in namespace \"" + ns + "\"";
}

// Objects in a list answer may come without apiVersion and kind; kubectl's
// printers (and -o name) need them.
json typed(json object, const kube::ResourceRef& resource) {
  if (!object.contains("apiVersion")) object["apiVersion"] = resource.api_version();
  if (!object.contains("kind")) object["kind"] = resource.kind;
  return object;
}

// A list the API server refused, with its status: history goes on without
// the records when it may not read them (403) or they do not exist (404: an
// operator from before records, its CRD not installed).
class ListError : public std::runtime_error {
 public:
  ListError(const std::string& message, int http_status)
      : std::runtime_error(message), http_status_(http_status) {}
  bool refused() const { return http_status_ == 403 || http_status_ == 404; }

 private:
  int http_status_;
};

// Every object of `resource` matching the selector, all pages. Throws ListError.
std::vector<json> list_all(Session& session, const kube::ResourceRef& resource,
                           const std::string& label_selector) {
  kube::ListOptions list;
  list.label_selector = label_selector;
  std::vector<json> items;
  do {
    const kube::Response response = session.client->list(resource, list);
    if (!response.ok()) {
      throw ListError(
          "list " + resource.plural + " " + in_namespace(resource.namespace_) +
              (label_selector.empty() ? "" : " with selector \"" + label_selector + "\"") + ": " +
              response.describe(),
          response.http_status);
    }
    for (const json& item : response.body.value("items", json::array())) {
      items.push_back(typed(item, resource));
    }
    list.continue_token =
        response.body.value("metadata", json::object()).value("continue", std::string());
  } while (!list.continue_token.empty());
  return items;
}

// The records of a LoadTest named `name`: by the kubeload.dev/loadtest label
// the operator writes (loadtest_label_value: a long name is hashed into it,
// so two names may share a label; newest_record_of checks loadTest.name).
std::vector<json> records_of_loadtest(Session& session, const std::string& ns,
                                      const std::string& name) {
  return list_all(
      session, kubeload::kube::resources::loadtestresults(ns),
      std::string(kubeload::api::kLoadTestLabel) + "=" + kubeload::loadtest_label_value(name));
}

// The run an argument of report or compare names (plugin/cli.hpp's
// RunReference): a LoadTest, else a LoadTestResult of that name, else the
// newest record of a LoadTest of that name that is gone. Throws
// std::runtime_error naming the argument.
json get_run(Session& session, const std::string& ns, const kp::RunReference& reference) {
  using Kind = kp::RunReference::Kind;
  const std::string where = " in namespace \"" + ns + "\"";
  if (reference.kind != Kind::record) {
    const kube::Response response =
        session.client->get(kubeload::kube::resources::loadtests(ns), reference.name);
    if (response.ok()) return typed(response.body, kubeload::kube::resources::loadtests());
    if (!response.is_not_found()) {
      throw std::runtime_error(describe(response, "loadtest \"" + reference.name + "\"" + where));
    }
  }
  if (reference.kind != Kind::loadtest) {
    const kube::Response response =
        session.client->get(kubeload::kube::resources::loadtestresults(ns), reference.name);
    if (response.ok()) return typed(response.body, kubeload::kube::resources::loadtestresults());
    if (reference.kind == Kind::record) {
      throw std::runtime_error(
          describe(response, "loadtestresult \"" + reference.name + "\"" + where));
    }
    if (!response.is_not_found()) {
      throw std::runtime_error("\"" + reference.argument + "\": no loadtest of that name" + where +
                               ", and reading loadtestresults failed: " + response.describe());
    }
  }
  std::vector<json> records;
  try {
    records = records_of_loadtest(session, ns, reference.name);
  } catch (const ListError& e) {
    throw std::runtime_error("\"" + reference.argument + "\": no loadtest of that name" + where +
                             ", and its records cannot be read: " + e.what());
  }
  if (std::optional<json> record = kp::newest_record_of(records, reference.name)) {
    return std::move(*record);
  }
  throw std::runtime_error(
      "\"" + reference.argument + "\": " +
      (reference.kind == Kind::loadtest
           ? "no loadtest of that name" + where + ", and no loadtestresult records one"
           : "no loadtest or loadtestresult of that name" + where +
                 ", and no loadtestresult records a loadtest so named"));
}

// The html report's trend: the records of the run's test in its namespace.
// Listing them is the report's extra, so a refusal (no `list` on
// loadtestresults, an operator without records) says so and the report is
// written without it.
std::optional<kubeload::loadgen::Trend> trend_for(Session& session, const kp::Options& options,
                                                  kubeload::loadgen::ReportFormat format,
                                                  const json& object) {
  if (format != kubeload::loadgen::ReportFormat::html || options.trend == 0) return std::nullopt;
  const kubeload::api::ObjectMeta metadata =
      kubeload::loadgen::as_loadtest(object).get<kubeload::api::LoadTest>().metadata;
  const auto test = metadata.labels.find(std::string(kubeload::kTestLabel));
  if (test == metadata.labels.end()) return std::nullopt;
  try {
    return kubeload::loadgen::trend_of(
        list_all(session, kubeload::kube::resources::loadtestresults(metadata.namespace_),
                 std::string(kubeload::kTestLabel) + "=" + test->second),
        object, options.trend);
  } catch (const std::runtime_error& e) {
    std::fprintf(stderr, "kubectl kubeload: the html report goes without its trend: %s\n",
                 e.what());
    return std::nullopt;
  }
}

std::string read_manifest(const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return text.str();
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw kp::UsageError("-f: cannot read \"" + path + "\"");
  text << file.rdbuf();
  return text.str();
}

// The report, or with -o json|yaml|name|jsonpath the object itself (a
// LoadTest, or the LoadTestResult record read instead).
void print_report(Session& session, const kp::Options& options, const json& object) {
  if (options.object_output) {
    kp::write_object(std::cout, *options.object_output, object);
  } else {
    kubeload::loadgen::write_loadtest_report(std::cout, options.format, object,
                                             trend_for(session, options, options.format, object));
  }
  std::cout.flush();
}

// The --report FORMAT=FILE files; false (with a message) when one cannot be written.
bool write_report_files(Session& session, const kp::Options& options, const json& loadtest) {
  bool ok = true;
  for (const auto& [format, path] : options.report_files) {
    const auto trend = trend_for(session, options, format, loadtest);
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    if (file) kubeload::loadgen::write_loadtest_report(file, format, loadtest, trend);
    if (!file) {
      std::fprintf(stderr, "kubectl kubeload: --report: cannot write \"%s\"\n", path.c_str());
      ok = false;
    }
  }
  return ok;
}

int command_run(const kp::Options& options) {
  const std::string source = options.filename == "-" ? "stdin" : options.filename;
  const std::string manifest = read_manifest(options.filename);
  Session session = connect(options);
  const kp::RunObject run = kp::run_object_from_manifest(manifest, source, options.namespace_,
                                                         session.config.default_namespace);
  const auto loadtests = kubeload::kube::resources::loadtests(run.namespace_);
  const kube::Response created = session.client->create(loadtests, run.object);
  if (!created.ok()) {
    return fail("create a run of " + source + " in namespace \"" + run.namespace_ +
                "\": " + created.describe());
  }
  json current = created.body;
  const std::string name = current.get<kubeload::api::LoadTest>().metadata.name;
  std::fprintf(stderr, "loadtest.kubeload.dev/%s created in namespace %s (test %s)\n", name.c_str(),
               run.namespace_.c_str(), run.test.c_str());
  if (!options.wait) {
    if (options.object_output) {
      kp::write_object(std::cout, *options.object_output,
                       typed(current, kubeload::kube::resources::loadtests()));
    } else {
      std::cout << name << "\n";
    }
    return kp::kExitPass;
  }

  const auto timeout = options.timeout.value_or(kp::default_wait_timeout(run.spec));
  const bool unlimited = options.timeout && options.timeout->count() == 0;
  const auto started = std::chrono::steady_clock::now();
  const auto deadline =
      started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
  std::string resource_version = current.get<kubeload::api::LoadTest>().metadata.resource_version;
  std::string last_line;
  bool deleted = false;
  const auto show = [&](const json& loadtest) {
    const std::string line = kp::progress_line(loadtest);
    if (line == last_line) return;
    last_line = line;
    const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(
        std::chrono::steady_clock::now() - started);
    std::fprintf(stderr, "[%4llds] %s: %s\n", static_cast<long long>(elapsed.count()), name.c_str(),
                 line.c_str());
  };
  show(current);

  int failures_in_a_row = 0;
  while (!kp::is_finished(current) && !deleted) {
    const auto now = std::chrono::steady_clock::now();
    if (!unlimited && now >= deadline) {
      std::fprintf(stderr,
                   "kubectl kubeload: timed out after %s waiting for loadtest %s (%s); it goes on "
                   "running: `kubectl kubeload report %s -n %s` shows it later\n",
                   kubeload::format_duration(timeout).c_str(), name.c_str(), last_line.c_str(),
                   name.c_str(), run.namespace_.c_str());
      write_report_files(session, options, current);
      return kp::kExitError;
    }
    kube::WatchOptions watch;
    watch.field_selector = "metadata.name=" + name;
    watch.resource_version = resource_version;
    const auto left = std::chrono::duration_cast<std::chrono::seconds>(deadline - now).count() + 1;
    watch.timeout_seconds =
        unlimited ? kWatchSeconds : static_cast<int>(std::min<long long>(kWatchSeconds, left));
    std::stop_source stop;
    try {
      const kube::WatchResult result = session.client->watch(
          loadtests, watch,
          [&](const kube::WatchEvent& event) {
            if (event.type == kube::WatchEventType::Deleted) {
              deleted = true;
              stop.request_stop();
            } else if (event.type == kube::WatchEventType::Added ||
                       event.type == kube::WatchEventType::Modified) {
              current = event.object;
              show(current);
              if (kp::is_finished(current)) stop.request_stop();
            }
          },
          stop.get_token());
      resource_version = result.resource_version;
      if (result.end == kube::WatchResult::End::Gone ||
          result.end == kube::WatchResult::End::Error) {
        // Too old a version or a refused watch: read the object afresh.
        const kube::Response fresh = session.client->get(loadtests, name);
        if (fresh.is_not_found()) {
          deleted = true;
        } else if (fresh.ok()) {
          current = fresh.body;
          resource_version = current.get<kubeload::api::LoadTest>().metadata.resource_version;
          show(current);
        } else if (++failures_in_a_row > 5) {
          return fail("follow loadtest " + name + ": " + fresh.describe());
        }
        if (result.end == kube::WatchResult::End::Error)
          std::this_thread::sleep_for(std::chrono::seconds(1));
      } else {
        failures_in_a_row = 0;
      }
    } catch (const kube::TransportError& e) {
      // The API server can restart under a long run; keep trying until the deadline.
      if (++failures_in_a_row == 1 || failures_in_a_row % 10 == 0) {
        std::fprintf(stderr, "kubectl kubeload: %s (retrying)\n", e.what());
      }
      std::this_thread::sleep_for(std::chrono::seconds(std::min(failures_in_a_row, 5)));
    }
  }
  if (deleted) return fail("loadtest " + name + " was deleted before it finished");

  current = typed(std::move(current), kubeload::kube::resources::loadtests());
  print_report(session, options, current);
  const bool reports_written = write_report_files(session, options, current);
  const kp::Outcome outcome = kp::outcome_of(current);
  std::fprintf(stderr, "%s: %s\n", name.c_str(), outcome.summary.c_str());
  return reports_written ? outcome.exit_code : kp::kExitError;
}

int command_report(const kp::Options& options) {
  Session session = connect(options);
  const json object = get_run(session, session.namespace_, options.runs.front());
  print_report(session, options, object);
  return kp::kExitPass;
}

int command_compare(const kp::Options& options) {
  Session session = connect(options);
  std::vector<json> runs;
  for (const kp::RunReference& reference : options.runs) {
    runs.push_back(get_run(session, session.namespace_, reference));
  }
  kp::write_compare(std::cout, runs, options.table_format);
  return kp::kExitPass;
}

int command_history(const kp::Options& options) {
  Session session = connect(options);
  // -A ignores -n, as kubectl does.
  const std::string ns = options.all_namespaces ? "" : session.namespace_;
  std::string selector = std::string(kubeload::kTestLabel) + "=" + options.test;
  if (!options.selector.empty()) selector += "," + options.selector;
  // The runs whose LoadTest is gone live on as records; a run's record has
  // its LoadTest's labels, so the same selector finds both.
  std::vector<json> records;
  try {
    records = list_all(session, kubeload::kube::resources::loadtestresults(ns), selector);
  } catch (const ListError& e) {
    if (!e.refused()) throw;
    std::fprintf(stderr,
                 "kubectl kubeload: runs whose LoadTest is gone are left out (%s); the LoadTests "
                 "follow\n",
                 e.what());
  }
  std::vector<json> items = kp::runs_of_test(
      list_all(session, kubeload::kube::resources::loadtests(ns), selector), std::move(records));
  if (items.empty()) {
    std::fprintf(stderr, "no runs of test \"%s\"%s in %s\n", options.test.c_str(),
                 options.selector.empty() ? "" : (" matching " + options.selector).c_str(),
                 ns.empty() ? "any namespace" : ("namespace \"" + ns + "\"").c_str());
  }
  if (options.object_output) {
    kp::write_object_list(std::cout, *options.object_output,
                          kp::newest_first(std::move(items), options.limit));
  } else {
    kp::write_history(std::cout, std::move(items), options.table_format, options.limit,
                      options.all_namespaces);
  }
  return kp::kExitPass;
}

// `__complete`: the candidates; those from the cluster only when it answers
// (a completion never prints an error).
int command_complete(const kp::Options& options) {
  using FromCluster = kp::Completion::FromCluster;
  const kp::Completion completion = kp::complete(options.words);
  std::vector<std::string> from_cluster;
  const auto add = [&](const std::string& value) {
    if (!value.empty() &&
        std::find(from_cluster.begin(), from_cluster.end(), value) == from_cluster.end()) {
      from_cluster.push_back(value);
    }
  };
  const auto try_listing = [&](Session& session, const kube::ResourceRef& resource,
                               const std::string& selector, auto value_of) {
    try {
      for (const json& item : list_all(session, resource, selector)) {
        add(value_of(item.get<kubeload::api::LoadTest>().metadata));
      }
    } catch (const std::exception&) {
      // no access to this kind: the others still complete
    }
  };
  const auto name_of = [](const kubeload::api::ObjectMeta& metadata) { return metadata.name; };
  if (completion.from_cluster != FromCluster::nothing) {
    try {
      kp::Options connection;
      connection.namespace_ = completion.namespace_;
      connection.context = completion.context;
      connection.kubeconfig = completion.kubeconfig;
      Session session = connect(connection);
      const std::string ns = session.namespace_;
      switch (completion.from_cluster) {
        case FromCluster::tests: {
          // A test whose LoadTests are all gone still has its records.
          const auto test_of = [](const kubeload::api::ObjectMeta& metadata) {
            const auto label = metadata.labels.find(std::string(kubeload::kTestLabel));
            return label == metadata.labels.end() ? std::string() : label->second;
          };
          const std::string selector(kubeload::kTestLabel);
          try_listing(session, kubeload::kube::resources::loadtests(ns), selector, test_of);
          try_listing(session, kubeload::kube::resources::loadtestresults(ns), selector, test_of);
          break;
        }
        case FromCluster::loadtest_names:
          try_listing(session, kubeload::kube::resources::loadtests(ns), "", name_of);
          break;
        case FromCluster::record_names:
          try_listing(session, kubeload::kube::resources::loadtestresults(ns), "", name_of);
          break;
        case FromCluster::run_names:
          try_listing(session, kubeload::kube::resources::loadtests(ns), "", name_of);
          try_listing(session, kubeload::kube::resources::loadtestresults(ns), "", name_of);
          break;
        case FromCluster::nothing:
          break;
      }
    } catch (const std::exception&) {
      // no cluster, no access: the static candidates only
    }
  }
  kp::write_completion(std::cout, completion, from_cluster);
  return kp::kExitPass;
}

}  // namespace

int main(int argc, char** argv) {
  kp::Options options;
  try {
    options = kp::parse_arguments(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const kp::UsageError& e) {
    return fail(e.what());
  }
  try {
    switch (options.command) {
      case kp::Command::help:
        std::fputs(kp::usage_text(options.help_topic).c_str(), stdout);
        return kp::kExitPass;
      case kp::Command::version:
        std::printf("kubectl-kubeload %s\n", kVersion);
        return kp::kExitPass;
      case kp::Command::run:
        return command_run(options);
      case kp::Command::report:
        return command_report(options);
      case kp::Command::compare:
        return command_compare(options);
      case kp::Command::history:
        return command_history(options);
      case kp::Command::completion:
        std::fputs(kp::completion_script(options.shell).c_str(), stdout);
        return kp::kExitPass;
      case kp::Command::complete:
        return command_complete(options);
    }
  } catch (const kp::UsageError& e) {
    return fail(e.what());
  } catch (const kube::ConfigError& e) {
    return fail(e.what());
  } catch (const kube::TransportError& e) {
    return fail(std::string("cannot reach the API server: ") + e.what());
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return kp::kExitError;
}
