// compare and history: runs as rows and columns, from their LoadTests or
// their LoadTestResult records (read as the LoadTest they record,
// reports/recorded_run.hpp). The numbers are the status's own
// (status.result), shown the way the seed posts compared servers by hand:
// the same metrics side by side, each change spelled out.

#include <algorithm>
#include <cmath>
#include <set>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/api/loadtest_result.hpp"
#include "kubeload/api/meta.hpp"
#include "kubeload/api/status.hpp"
#include "kubeload/json_access.hpp"
#include "kubeload/rfc3339.hpp"
#include "plugin/cli.hpp"
#include "reports/escape.hpp"
#include "reports/gate_report.hpp"
#include "reports/recorded_run.hpp"
#include "reports/report_writers.hpp"

namespace kubeload::plugin {
namespace {

using loadgen::as_loadtest;
using loadgen::is_result_record;
using loadgen::markdown_cell;
using loadgen::report::fixed;
using loadgen::report::grouped;
using loadgen::report::grouped_fixed;
using nlohmann::json;

// What compare and history show of one run.
struct Run {
  std::string name;  // the LoadTest's
  std::string namespace_;
  std::string created;
  std::string revision;           // kubeload.dev/revision (a record's loadTest.revision)
  std::string record;             // its LoadTestResult's name; "" before it has one
  bool loadtest_deleted = false;  // shown from its record
  std::string phase;
  std::string verdict;
  std::optional<uint64_t> requests;
  std::optional<uint64_t> failures;
  std::optional<double> rps, p50, p90, p99, error_rate;
  bool latency_measured = false;
};

std::string time_text(const std::optional<api::Time>& time) {
  return time ? rfc3339::format(*time) : std::string();
}

Run run_of(const json& given) {
  const json loadtest = as_loadtest(given);
  const api::LoadTest object = loadtest.get<api::LoadTest>();
  const api::StatusSpelling spelled = api::status_spelling(loadtest);
  Run run;
  run.name = object.metadata.name;
  run.namespace_ = object.metadata.namespace_;
  run.created = time_text(object.metadata.creation_timestamp);
  if (const auto revision = object.metadata.annotations.find(std::string(api::kRevisionAnnotation));
      revision != object.metadata.annotations.end()) {
    run.revision = revision->second;
  }
  run.loadtest_deleted = is_result_record(given);
  if (run.loadtest_deleted) {
    run.record = given.get<api::LoadTest>().metadata.name;
  } else if (object.status.result_record) {
    run.record = *object.status.result_record;
  }
  run.phase = spelled.phase.empty() ? api::name(api::Phase::Pending) : spelled.phase;
  run.verdict = spelled.verdict.empty() ? api::name(api::Verdict::None) : spelled.verdict;
  if (!object.status.result) return run;
  const api::ResultFigures figures = api::result_figures(object.status);
  run.requests = figures.requests;
  run.failures = figures.failures;
  run.rps = figures.rps;
  run.error_rate = figures.error_rate;
  // Latencies of a run without a complete response are unknown, not 0.
  run.latency_measured = figures.complete_responses > 0;
  if (run.latency_measured) {
    run.p50 = figures.metric("p50");
    run.p90 = figures.metric("p90");
    run.p99 = figures.metric("p99");
  }
  return run;
}

std::string or_dash(const std::optional<double>& value, int decimals) {
  return value ? grouped_fixed(*value, decimals) : "-";
}

// Percent change of `now` against `base`; empty when either is unknown.
std::optional<double> change_percent(const std::optional<double>& base,
                                     const std::optional<double>& now) {
  if (!base || !now) return std::nullopt;
  if (*base == 0) {
    if (*now == 0) return 0.0;
    return std::nullopt;  // from nothing: no percentage says it
  }
  return (*now - *base) / *base * 100.0;
}

std::string signed_fixed(double value, int decimals) {
  const std::string shown = fixed(value, decimals);
  return (shown.front() == '-' || shown == fixed(0.0, decimals) ? "" : "+") + shown;
}

std::string change_text(const std::optional<double>& base, const std::optional<double>& now) {
  if (!base || !now) return "";
  const std::optional<double> change = change_percent(base, now);
  if (!change) return "(new)";
  return "(" + signed_fixed(*change, 1) + "%)";
}

std::string points_text(const std::optional<double>& base, const std::optional<double>& now) {
  if (!base || !now) return "";
  return "(" + signed_fixed((*now - *base) * 100.0, 2) + "pp)";
}

std::string errors_cell(const Run& run) {
  if (!run.failures || !run.error_rate) return "-";
  return grouped(*run.failures) + " (" + fixed(*run.error_rate * 100.0, 2) + "%)";
}

std::string with_change(const std::string& value, const std::string& change) {
  return change.empty() ? value : value + " " + change;
}

// The first `left_columns` and the last `trailing_left` columns are text
// (aligned left); those between are numbers.
void write_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                 TableFormat format, size_t left_columns, size_t trailing_left = 0) {
  const auto left = [&](size_t c) {
    return c < left_columns || c + trailing_left >= rows[0].size();
  };
  if (rows.empty()) return;
  if (format == TableFormat::markdown) {
    for (size_t r = 0; r < rows.size(); ++r) {
      out << "|";
      for (const std::string& cell : rows[r]) out << " " << markdown_cell(cell) << " |";
      out << "\n";
      if (r == 0) {
        out << "|";
        for (size_t c = 0; c < rows[0].size(); ++c) out << (left(c) ? "---|" : "---:|");
        out << "\n";
      }
    }
    return;
  }
  std::vector<loadgen::report::TextTable::Column> columns;
  for (size_t c = 0; c < rows[0].size(); ++c) {
    columns.push_back({rows[0][c], left(c) ? loadgen::report::TextTable::Align::left
                                           : loadgen::report::TextTable::Align::right});
  }
  loadgen::report::TextTable table(columns);
  for (size_t r = 1; r < rows.size(); ++r) table.add_row(rows[r]);
  table.write(out);
}

json optional_json(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

}  // namespace

namespace {

std::string name_of(const json& loadtest) {
  return json_access::text(
      json_access::member(json_access::member(as_loadtest(loadtest), "metadata"), "name"));
}

}  // namespace

bool is_experiment(const json& loadtest) {
  const json object = as_loadtest(loadtest);
  const json& variants = json_access::member(json_access::member(object, "spec"), "variants");
  const json& experiment = json_access::member(json_access::member(object, "status"), "experiment");
  return (variants.is_array() && !variants.empty()) || experiment.is_object();
}

void write_experiment_compare(std::ostream& out, const json& loadtest, TableFormat format) {
  const loadgen::GateReport report = loadgen::gate_report_from_loadtest(loadtest);
  const loadgen::ExperimentReport none;
  const loadgen::ExperimentReport& experiment = report.experiment ? *report.experiment : none;
  if (format == TableFormat::json) {
    json document = {{"experiment", report.run_name},
                     {"namespace", report.namespace_},
                     {"phase", report.phase},
                     {"verdict", report.verdict},
                     {"message", report.message},
                     {"rounds", experiment.rounds},
                     {"completedRounds", experiment.completed_rounds},
                     {"variants", json::array()},
                     {"differences", json::array()},
                     {"comparisons", json::array()}};
    for (const loadgen::VariantColumn& v : experiment.variants) {
      json row = {{"name", v.name}, {"target", v.target}, {"rounds", v.rounds}};
      const loadgen::SummaryRow& r = v.row;
      const bool measured = v.has_result && r.latency_measured;
      row["requests"] = v.has_result ? json(r.requests) : json(nullptr);
      row["rps"] = v.has_result ? json(r.rps) : json(nullptr);
      row["latencyMs"] = {{"p50", measured ? json(r.latency_ms.p50) : json(nullptr)},
                          {"p90", measured ? json(r.latency_ms.p90) : json(nullptr)},
                          {"p99", measured ? json(r.latency_ms.p99) : json(nullptr)}};
      row["errorRate"] = v.has_result ? json(r.error_rate) : json(nullptr);
      row["cpuCores"] = optional_json(v.usage.cpu_cores_mean);
      row["cpuPerRequest"] = optional_json(v.cpu_per_request);
      row["memoryBytes"] =
          v.usage.memory_bytes_max ? json(*v.usage.memory_bytes_max) : json(nullptr);
      document["variants"].push_back(std::move(row));
    }
    for (const api::MetricDifference& d : experiment.differences) {
      document["differences"].push_back({{"variant", d.variant},
                                         {"reference", d.reference},
                                         {"metric", d.metric},
                                         {"mean", d.mean},
                                         {"low", d.low},
                                         {"high", d.high},
                                         {"relativePercent", optional_json(d.relative_percent)},
                                         {"text", loadgen::difference_text(d)}});
    }
    for (const api::ComparisonRow& c : experiment.comparisons) {
      document["comparisons"].push_back(
          {{"expression", c.expression},
           {"outcome", c.outcome},
           {"passed", loadgen::comparison_passed(c)},
           {"mean", optional_json(c.mean)},
           {"low", optional_json(c.low)},
           {"high", optional_json(c.high)},
           {"roundsNeeded", c.rounds_needed ? json(*c.rounds_needed) : json(nullptr)},
           {"message", c.message}});
    }
    out << document.dump(2) << "\n";
    return;
  }
  if (format == TableFormat::text) {
    out << report.title << ": " << report.phase << ", verdict " << report.verdict;
    if (!report.message.empty()) out << " (" << report.message << ")";
    out << "\n\n";
    loadgen::write_experiment_text(out, experiment);
    return;
  }
  // markdown: the tables of the text, for a pull-request comment.
  const auto table_rows = [](const loadgen::ExperimentTable& table) {
    std::vector<std::vector<std::string>> rows = {table.header};
    rows.insert(rows.end(), table.rows.begin(), table.rows.end());
    return rows;
  };
  out << "**" << markdown_cell(report.title) << "**: " << markdown_cell(report.phase)
      << ", verdict " << markdown_cell(report.verdict) << ", "
      << markdown_cell(loadgen::experiment_progress(experiment)) << "\n\n";
  write_table(out, table_rows(loadgen::variants_table(experiment)), format, 1);
  if (const loadgen::ExperimentTable differences = loadgen::differences_table(experiment);
      !differences.rows.empty()) {
    out << "\n";
    write_table(out, table_rows(differences), format, 1);
  }
  if (!experiment.comparisons.empty()) {
    std::vector<std::vector<std::string>> rows = {{"comparison", "outcome", "margin"}};
    for (const api::ComparisonRow& c : experiment.comparisons) {
      rows.push_back({c.expression, c.outcome, loadgen::comparison_margin_text(c)});
    }
    out << "\n";
    write_table(out, rows, format, 2);
  }
}

void write_compare(std::ostream& out, const std::vector<json>& loadtests, TableFormat format) {
  // An experiment compares its own variants; its runs are not one run each.
  if (loadtests.size() == 1) {
    if (!is_experiment(loadtests.front())) {
      throw UsageError("compare: \"" + name_of(loadtests.front()) +
                       "\" is not an experiment (spec.variants): give two or more runs, or one "
                       "experiment");
    }
    write_experiment_compare(out, loadtests.front(), format);
    return;
  }
  for (const json& loadtest : loadtests) {
    if (is_experiment(loadtest)) {
      throw UsageError("compare: \"" + name_of(loadtest) +
                       "\" is an experiment: compare it alone to see its variants side by side");
    }
  }
  std::vector<Run> runs;
  for (const json& loadtest : loadtests) runs.push_back(run_of(loadtest));
  if (runs.empty()) return;
  const Run& base = runs.front();
  if (format == TableFormat::json) {
    json document = {{"baseline", base.name}, {"runs", json::array()}};
    for (const Run& run : runs) {
      json row = {{"name", run.name},
                  {"phase", run.phase},
                  {"verdict", run.verdict},
                  {"requests", run.requests ? json(*run.requests) : json(nullptr)},
                  {"rps", optional_json(run.rps)},
                  {"latencyMs",
                   {{"p50", optional_json(run.p50)},
                    {"p90", optional_json(run.p90)},
                    {"p99", optional_json(run.p99)}}},
                  {"errorRate", optional_json(run.error_rate)}};
      json changes = {{"rpsPercent", optional_json(change_percent(base.rps, run.rps))},
                      {"p50Percent", optional_json(change_percent(base.p50, run.p50))},
                      {"p90Percent", optional_json(change_percent(base.p90, run.p90))},
                      {"p99Percent", optional_json(change_percent(base.p99, run.p99))}};
      changes["errorRatePoints"] = base.error_rate && run.error_rate
                                       ? json((*run.error_rate - *base.error_rate) * 100.0)
                                       : json(nullptr);
      row["change"] = std::move(changes);
      document["runs"].push_back(std::move(row));
    }
    out << document.dump(2) << "\n";
    return;
  }
  // Metrics down, runs across: each run's column reads as one report.
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {""};
  for (size_t i = 0; i < runs.size(); ++i) {
    header.push_back(runs[i].name + (i == 0 ? " (base)" : ""));
  }
  rows.push_back(header);
  const auto add = [&](const std::string& label, auto cell_of) {
    std::vector<std::string> row = {label};
    for (size_t i = 0; i < runs.size(); ++i) row.push_back(cell_of(runs[i], i == 0));
    rows.push_back(std::move(row));
  };
  add("phase", [](const Run& r, bool) { return r.phase; });
  add("verdict", [](const Run& r, bool) { return r.verdict; });
  add("requests", [](const Run& r, bool) { return r.requests ? grouped(*r.requests) : "-"; });
  add("rps", [&](const Run& r, bool first) {
    return with_change(or_dash(r.rps, 1), first ? "" : change_text(base.rps, r.rps));
  });
  add("p50 ms", [&](const Run& r, bool first) {
    return with_change(or_dash(r.p50, 3), first ? "" : change_text(base.p50, r.p50));
  });
  add("p90 ms", [&](const Run& r, bool first) {
    return with_change(or_dash(r.p90, 3), first ? "" : change_text(base.p90, r.p90));
  });
  add("p99 ms", [&](const Run& r, bool first) {
    return with_change(or_dash(r.p99, 3), first ? "" : change_text(base.p99, r.p99));
  });
  add("errors", [&](const Run& r, bool first) {
    return with_change(errors_cell(r), first ? "" : points_text(base.error_rate, r.error_rate));
  });
  write_table(out, rows, format, 1);
  if (format == TableFormat::text) {
    out << "\nChanges are against " << base.name
        << ": percent for rps and latencies, percentage points (pp) for errors.\n";
  }
}

std::vector<json> newest_first(std::vector<json> loadtests, std::optional<uint32_t> limit) {
  // Each object's metadata read once, sorted with it.
  std::vector<std::pair<api::ObjectMeta, json>> rows;
  for (json& loadtest : loadtests) {
    rows.emplace_back(as_loadtest(loadtest).get<api::LoadTest>().metadata, std::move(loadtest));
  }
  // Newest first; an unknown creation time sorts below every known one.
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
    return a.first.creation_timestamp != b.first.creation_timestamp
               ? a.first.creation_timestamp > b.first.creation_timestamp
               : a.first.name > b.first.name;
  });
  loadtests.clear();
  for (auto& row : rows) loadtests.push_back(std::move(row.second));
  if (limit && loadtests.size() > *limit) loadtests.resize(*limit);
  return loadtests;
}

std::vector<json> runs_of_test(std::vector<json> loadtests, std::vector<json> records) {
  std::set<std::string> live_uids;
  for (const json& loadtest : loadtests) {
    const std::string uid = loadtest.get<api::LoadTest>().metadata.uid;
    if (!uid.empty()) live_uids.insert(uid);
  }
  std::vector<json> runs = std::move(loadtests);
  for (json& record : records) {
    const api::LoadTestResult typed = record.get<api::LoadTestResult>();
    const auto label = typed.metadata.labels.find(std::string(api::kLoadTestUidLabel));
    const std::string uid =
        label != typed.metadata.labels.end() ? label->second : typed.load_test.uid;
    if (!live_uids.contains(uid)) runs.push_back(std::move(record));
  }
  return runs;
}

std::optional<json> newest_record_of(const std::vector<json>& records,
                                     const std::string& loadtest_name) {
  std::vector<json> of_it;
  for (const json& record : records) {
    if (is_result_record(record) &&
        record.get<api::LoadTestResult>().load_test.name == loadtest_name) {
      of_it.push_back(record);
    }
  }
  if (of_it.empty()) return std::nullopt;
  return newest_first(std::move(of_it), 1).front();
}

void write_history(std::ostream& out, std::vector<json> loadtests, TableFormat format,
                   std::optional<uint32_t> limit, bool all_namespaces) {
  std::vector<Run> runs;
  for (const json& loadtest : newest_first(std::move(loadtests), limit)) {
    runs.push_back(run_of(loadtest));
  }
  if (format == TableFormat::json) {
    json document = json::array();
    for (const Run& run : runs) {
      json row = {{"name", run.name},
                  {"created", run.created},
                  {"phase", run.phase},
                  {"verdict", run.verdict},
                  {"rps", optional_json(run.rps)},
                  {"p99Ms", optional_json(run.p99)},
                  {"errorRate", optional_json(run.error_rate)},
                  {"revision", run.revision.empty() ? json(nullptr) : json(run.revision)},
                  {"record", run.record.empty() ? json(nullptr) : json(run.record)},
                  {"loadTestDeleted", run.loadtest_deleted}};
      if (all_namespaces) row["namespace"] = run.namespace_;
      document.push_back(std::move(row));
    }
    out << document.dump(2) << "\n";
    return;
  }
  std::vector<std::string> header = {"NAME",    "CREATED",   "PHASE",    "VERDICT", "RPS",
                                     "P99(ms)", "ERRORS(%)", "REVISION", "RECORD",  "LOADTEST"};
  if (all_namespaces) header.insert(header.begin(), "NAMESPACE");
  std::vector<std::vector<std::string>> rows = {header};
  for (const Run& run : runs) {
    std::vector<std::string> row = {
        run.name, run.created, run.phase, run.verdict, or_dash(run.rps, 1), or_dash(run.p99, 3),
        run.error_rate ? fixed(*run.error_rate * 100.0, 2) : std::string("-"),
        run.revision.empty() ? "-" : run.revision, run.record.empty() ? "-" : run.record,
        // A run shown from its record: the LoadTest was deleted (a TTL, a
        // GitOps tool re-creating it); report and compare still read it.
        run.loadtest_deleted ? "deleted" : "present"};
    if (all_namespaces) row.insert(row.begin(), run.namespace_);
    rows.push_back(std::move(row));
  }
  // Numbers right-aligned, the text columns after them left.
  write_table(out, rows, format, all_namespaces ? 5 : 4, 3);
}

}  // namespace kubeload::plugin
