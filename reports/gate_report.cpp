#include "reports/gate_report.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <variant>

#include <nlohmann/json.hpp>

#include "kubeload/api/loadtest.hpp"
#include "kubeload/comparison.hpp"
#include "kubeload/json_access.hpp"
#include "kubeload/names.hpp"
#include "kubeload/rfc3339.hpp"
#include "kubeload/spec.hpp"
#include "kubeload/text.hpp"
#include "kubeload/url.hpp"
#include "reports/recorded_run.hpp"
#include "reports/report_writers.hpp"

namespace kubeload::loadgen {
namespace {

using json_access::count_or_zero;
using json_access::member;
using json_access::text;
using nlohmann::json;

// A summary as the status writes it (api::ResultRow's latency_ms...); a
// figure it lacks reads as 0.
LatencySummary latency_of(const std::map<std::string, double>& summary) {
  LatencySummary s;
  for (const auto& [name, figure] : kLatencyFigures) {
    const auto it = summary.find(std::string(name));
    s.*figure = it == summary.end() ? 0.0 : it->second;
  }
  return s;
}

std::string time_text(const std::optional<api::Time>& time) {
  return time ? rfc3339::format(*time) : std::string();
}

// A row of status.result, status.stages or status.requestResults: the
// result schema, histograms optional.
SummaryRow summary_of(const api::ResultRow& row, std::string label) {
  const Result numbers = result_from_json(row.encoded);  // validates the counters
  SummaryRow out;
  out.label = std::move(label);
  out.requests = numbers.requests;
  out.failures = numbers.failures();
  out.error_rate = numbers.error_rate();
  out.duration_seconds = numbers.duration_seconds;
  out.rps = numbers.rps();
  out.latency_measured = row.complete_responses > 0 || numbers.latency.total_count() > 0;
  out.latency_ms = latency_of(row.latency_ms);
  return out;
}

SummaryRow summary_of(const Result& result, std::string label) {
  SummaryRow out;
  out.label = std::move(label);
  out.requests = result.requests;
  out.failures = result.failures();
  out.error_rate = result.error_rate();
  out.duration_seconds = result.duration_seconds;
  out.rps = result.rps();
  out.latency_measured = result.latency.total_count() > 0;
  out.latency_ms = LatencySummary::of(result.latency);
  return out;
}

std::string stage_label(int index, std::optional<uint64_t> connections,
                        std::optional<double> rate) {
  std::string label = "stage " + std::to_string(index);
  if (rate) return label + " (" + report::compact_number(*rate) + "/s)";
  if (connections) {
    return label + " (" + std::to_string(*connections) + (*connections == 1 ? " conn)" : " conns)");
  }
  return label;
}

BaselineReport baseline_of(const api::BaselineOutcome& status_baseline) {
  BaselineReport out;
  out.load_test_name = status_baseline.load_test_name.value_or("");
  out.passed = status_baseline.passed;
  out.message = status_baseline.message.value_or("");
  for (const api::BaselineCheck& row : status_baseline.checks) {
    BaselineCheck check;
    check.metric = row.metric;
    check.delta = row.delta;
    check.max_regression_percent = row.max_regression_percent;
    // The operator's own decision: a delta rounded to 0.1% cannot tell
    // 10.04% from a 10% limit.
    check.passed = row.passed;
    out.checks.push_back(std::move(check));
  }
  return out;
}

std::string target_of(const json& spec_target) {
  if (const std::string url = text(member(spec_target, "url")); !url.empty()) return url;
  const json& service = member(spec_target, "service");
  if (!service.is_object()) return "";
  const std::string scheme =
      text(member(service, "scheme")).empty() ? "http" : text(member(service, "scheme"));
  std::string out = scheme + "://" + text(member(service, "name"));
  if (const std::string ns = text(member(service, "namespace")); !ns.empty()) out += "." + ns;
  if (member(service, "port").is_number_integer()) {
    out += ":" + std::to_string(member(service, "port").get<int64_t>());
  }
  return out;
}

RunInfo run_info_of(const json& spec, const ParsedLoadTest& parsed, const std::string& target) {
  RunInfo info;
  info.url = target;
  const std::string parse_url =
      parsed.spec.url.value_or(target.starts_with("http") ? target : std::string());
  const auto url = parse_http_url(parse_url);
  if (const HttpUrl* t = std::get_if<HttpUrl>(&url)) {
    info.scheme = t->scheme;
    info.host = t->host;
    info.port = t->port;
    info.path = t->target;
  } else if (parsed.spec.service) {
    info.scheme = parsed.spec.service->scheme;
    info.host = parsed.spec.service->name;
    info.port = parsed.spec.service->port;
    info.path = "/";
  }
  const LoadSpec& load = parsed.spec.load;
  if (load.connections) {
    info.connections = *load.connections;
  } else if (!load.stages.empty() && load.stages.front().connections) {
    info.connections = *load.stages.front().connections;
  } else if (load.max_connections) {
    info.connections = *load.max_connections;
  }
  info.rate = load.rate;
  if (!info.rate && !load.stages.empty() && load.stages.front().rate) {
    info.rate = load.stages.front().rate;
  }
  info.keep_alive = load.keep_alive;
  const json& workers = member(spec, "workers");
  info.workers = workers.is_number_integer() && workers.get<int64_t>() > 0
                     ? static_cast<uint32_t>(count_or_zero(workers))
                     : parsed.spec.workers;
  return info;
}

// spec.variants[] of that name (null when there is none).
const json& variant_spec(const json& spec, const std::string& name) {
  const json& variants = member(spec, "variants");
  if (variants.is_array()) {
    for (const json& variant : variants) {
      if (text(member(variant, "name")) == name) return variant;
    }
  }
  return member(spec, "no such variant");
}

// A searched value with its unit: "106.25/s", "40 connections".
std::string search_value(const api::SearchStatus& search, double value) {
  return shortest(value) + (search.over == "connections" ? " connections" : "/s");
}

// A step's figure scaled (errorRate x 100: percent) or "-" when it has none.
std::string step_metric(const api::SearchStep& step, ComparedMetric metric, double factor,
                        int decimals) {
  const auto it = step.metrics.find(std::string(to_string(metric)));
  return it == step.metrics.end() ? std::string("-") : report::fixed(it->second * factor, decimals);
}

// A ResultView from a status row without histograms: the latency summaries
// come from its latencyMs, waitingMs and connectMs.
report::ResultView view_of_summary(const api::ResultRow& row) {
  report::ResultView view = report::view_of(result_from_json(row.encoded));
  view.complete_responses = row.complete_responses;
  view.total = latency_of(row.latency_ms);
  view.waiting = latency_of(row.waiting_ms);
  view.connect = latency_of(row.connect_ms);
  view.processing = report::processing_estimate(view.total, view.connect);
  return view;
}

// ab's and JMeter's report of an experiment: each variant's merged rounds as
// a run of its own, its target the variant's (ab: one block per variant;
// JMeter: one row per variant, labelled by its name like a sampler). The
// text report: the variants side by side (write_experiment_text).
void write_experiment_report(std::ostream& out, ReportFormat format, const json& loadtest,
                             const api::LoadTest& object, const GateReport& gate) {
  const ExperimentReport& experiment = *gate.experiment;
  if (format != ReportFormat::ab && format != ReportFormat::jmeter) {
    out << gate.title << ": " << gate.phase;
    if (!gate.message.empty()) out << " (" << gate.message << ")";
    out << "\n\n";
    write_experiment_text(out, experiment);
    write_gate_text(out, gate);
    return;
  }
  const ParsedLoadTest parsed = parse_loadtest(loadtest.dump());
  const std::vector<api::VariantOutcome> none;
  const std::vector<api::VariantOutcome>& variants =
      object.status.experiment ? object.status.experiment->variants : none;
  report::TextTable jmeter = report::jmeter_table();
  bool any = false;
  for (const api::VariantOutcome& variant : variants) {
    if (!variant.result) continue;
    api::LoadTestStatus holder;  // the status's reading of a result row
    holder.result = *variant.result;
    const api::ResultRow row = *api::result_row(holder);
    RunResult run;
    run.result = result_from_json(row.encoded);
    run.finished = true;
    // The variant's target in place of the spec's, as its rounds ran.
    ParsedLoadTest as_run = parsed;
    as_run.spec.url.reset();
    as_run.spec.service.reset();
    for (const VariantSpec& spec : parsed.spec.variants) {
      if (spec.name != variant.name) continue;
      as_run.spec.url = spec.url;
      as_run.spec.service = spec.service;
    }
    report::ReportModel model = report::build_report_model(
        run_info_of(object.spec, as_run,
                    target_of(member(variant_spec(object.spec, variant.name), "target"))),
        run);
    // The merge keeps no histograms: the summaries the operator computed.
    model.run = view_of_summary(row);
    if (model.open_model) model.time_per_request_ms = model.run.total.mean;
    if (format == ReportFormat::jmeter) {
      jmeter.add_row(report::jmeter_row(variant.name, model.run));
    } else {
      out << (any ? "\n" : "") << "Variant: " << variant.name << " (" << variant.target << ", "
          << variant.rounds << (variant.rounds == 1 ? " round" : " rounds") << ")\n\n";
      report::write_ab_report(out, model);
    }
    any = true;
  }
  if (!any) {
    out << gate.title << ": " << gate.phase << ", no variant has a result yet";
    if (!gate.message.empty()) out << " (" << gate.message << ")";
    out << '\n';
    return;
  }
  if (format == ReportFormat::jmeter) jmeter.write(out);
}

// The reports of a capacity search: its steps are its result. JMeter's
// Aggregate Report gets a row per step, as a JMeter sweep has a row per
// thread-group size (the status keeps each step's figures, not its counts:
// the samples, min and KB/sec columns are "-"; each step's own report has
// them); every other format shows the sweep table after the answer.
void write_search_report(std::ostream& out, ReportFormat format, const GateReport& gate) {
  const api::SearchStatus& search = *gate.search;
  if (format == ReportFormat::jmeter && !search.steps.empty()) {
    report::TextTable jmeter = report::jmeter_table();
    for (const api::SearchStep& step : search.steps) {
      const auto metric = [&](ComparedMetric m, double factor, int decimals) {
        return step_metric(step, m, factor, decimals);
      };
      jmeter.add_row(
          {"step " + std::to_string(step.step) + " " + search_value(search, step.value), "-",
           metric(ComparedMetric::mean, 1, 0), metric(ComparedMetric::p50, 1, 0),
           metric(ComparedMetric::p90, 1, 0), metric(ComparedMetric::p95, 1, 0),
           metric(ComparedMetric::p99, 1, 0), "-", metric(ComparedMetric::max, 1, 0),
           metric(ComparedMetric::errorRate, 100, 2) + (step.metrics.count("errorRate") ? "%" : ""),
           metric(ComparedMetric::rps, 1, 1) + (step.metrics.count("rps") ? "/sec" : ""), "-"});
    }
    jmeter.write(out);
    return;
  }
  out << gate.title << ": " << gate.phase;
  if (!gate.message.empty()) out << " (" << gate.message << ")";
  out << "\n\n";
  write_search_text(out, search);
  write_gate_text(out, gate);
}

// How a compared metric's values are shown: latencies in ms, rps per
// second, errorRate in percentage points, cpuPerRequest in CPU
// milliseconds (its core-seconds per request are a few ten-thousandths).
struct MetricScale {
  double factor = 1;
  int decimals = 3;
  const char* unit = "";
};

MetricScale scale_of(const std::string& metric) {
  const std::optional<ComparedMetric> known = compared_metric_from(metric);
  if (!known) return {};
  switch (unit_of(*known)) {
    case ComparedUnit::milliseconds:
      return {1, 2, " ms"};
    case ComparedUnit::per_second:
      return {1, 1, "/s"};
    case ComparedUnit::ratio:
      return {100, 2, " pp"};
    case ComparedUnit::core_seconds:
      return {1000, 3, " ms CPU"};
  }
  return {};
}

std::string signed_fixed(double value, int decimals) {
  const std::string shown = report::fixed(value, decimals);
  if (shown == "-") return shown;  // not finite
  return (shown.front() == '-' || shown == report::fixed(0.0, decimals) ? "" : "+") + shown;
}

ExperimentReport experiment_of(const json& spec, const api::ExperimentStatus* status) {
  ExperimentReport out;
  const std::string cpu_per_request(to_string(ComparedMetric::cpuPerRequest));
  if (status != nullptr) {
    out.rounds = status->rounds;
    out.completed_rounds = status->completed_rounds;
    for (const api::VariantOutcome& variant : status->variants) {
      VariantColumn column;
      column.name = variant.name;
      column.target = variant.target;
      column.rounds = variant.rounds;
      column.usage = variant.usage;
      if (variant.result) {
        // The status's own reading of a result row (a status holding it as
        // its result is the one way in).
        api::LoadTestStatus holder;
        holder.result = *variant.result;
        column.row = summary_of(*api::result_row(holder), variant.name);
        column.has_result = true;
      }
      if (const auto it = variant.metrics.find(cpu_per_request); it != variant.metrics.end()) {
        column.cpu_per_request = it->second;
      }
      out.variants.push_back(std::move(column));
    }
    out.differences = status->differences;
    out.comparisons = status->comparisons;
  }
  // Before the operator wrote any: the variants the spec names, no numbers yet.
  if (out.variants.empty() && member(spec, "variants").is_array()) {
    for (const json& variant : member(spec, "variants")) {
      VariantColumn column;
      column.name = text(member(variant, "name"));
      column.target = target_of(member(variant, "target"));
      column.row.label = column.name;
      out.variants.push_back(std::move(column));
    }
  }
  return out;
}

std::string or_dash(const std::optional<double>& value, int decimals) {
  return value ? report::grouped_fixed(*value, decimals) : std::string("-");
}

}  // namespace

std::string test_identity(const std::string& test_label, const std::string& generate_name,
                          const std::string& name, const std::string& target) {
  if (!test_label.empty()) return test_label;
  if (std::string stem = generate_name; !stem.empty()) {
    while (!stem.empty() && stem.back() == '-') stem.pop_back();
    if (!stem.empty()) return stem;
  }
  if (!name.empty()) return name;
  return target;
}

std::string shared_target_note(const std::vector<std::string>& shared_with) {
  if (shared_with.empty()) return "";
  std::string runs;
  for (std::size_t i = 0; i < shared_with.size(); ++i) {
    if (i > 0) runs += i + 1 == shared_with.size() ? " and " : ", ";
    runs += shared_with[i];
  }
  return "Target shared with " + runs +
         " during this run: its latency and the target's CPU/memory include their load.";
}

std::string generator_saturated_note(const std::string& generator_saturated) {
  if (generator_saturated.empty()) return "";
  return "Generator saturated: " + generator_saturated;
}

std::string generator_saturation_warning(const GeneratorCpu& cpu) {
  if (!cpu.saturated()) return "";
  return "loadgen used " + describe_use(cpu) + " during the measured " +
         report::fixed(cpu.window_seconds, 1) + " s: " + std::string(kSaturationMeaning) +
         "; give it more CPU (-t up to its CPUs), or spread the load over more machines (a "
         "LoadTest's spec.workers)";
}

std::string signed_metric_text(const std::string& metric, double value) {
  const MetricScale scale = scale_of(metric);
  return signed_fixed(value * scale.factor, scale.decimals) + scale.unit;
}

std::string interval_text(const std::string& metric, double mean, double low, double high) {
  const MetricScale scale = scale_of(metric);
  return signed_metric_text(metric, mean) + " [" +
         signed_fixed(low * scale.factor, scale.decimals) + ", " +
         signed_fixed(high * scale.factor, scale.decimals) + "]";
}

std::string difference_text(const api::MetricDifference& difference) {
  std::string out =
      interval_text(difference.metric, difference.mean, difference.low, difference.high);
  if (difference.relative_percent) {
    out += " (" + signed_fixed(*difference.relative_percent, 1) + "%)";
  }
  return out;
}

std::string comparison_margin_text(const api::ComparisonRow& comparison) {
  if (!comparison.mean || !comparison.low || !comparison.high) return "no interval";
  const auto parsed = parse_comparison(comparison.expression);
  const Comparison* known = std::get_if<Comparison>(&parsed);
  return interval_text(known ? std::string(to_string(known->metric)) : std::string(),
                       *comparison.mean, *comparison.low, *comparison.high);
}

bool comparison_passed(const api::ComparisonRow& comparison) {
  return comparison.outcome == to_string(ComparisonOutcome::Pass);
}

std::string comparison_limit(const std::string& expression) {
  const auto parsed = parse_comparison(expression);
  const Comparison* known = std::get_if<Comparison>(&parsed);
  if (known == nullptr) return "";
  return std::string(to_string(known->op)) + " 0 over the whole 95% interval";
}

ExperimentTable variants_table(const ExperimentReport& experiment) {
  ExperimentTable table;
  table.header.push_back("");
  for (size_t i = 0; i < experiment.variants.size(); ++i) {
    table.header.push_back(experiment.variants[i].name + (i == 0 ? " (base)" : ""));
  }
  const auto add = [&](const std::string& label, auto cell_of) {
    std::vector<std::string> row = {label};
    for (const VariantColumn& v : experiment.variants) {
      // Where and how often it ran is known before any number.
      const bool known = v.has_result || label == "target" || label == "rounds";
      row.push_back(known ? cell_of(v) : std::string("-"));
    }
    table.rows.push_back(std::move(row));
  };
  const auto ms = [](const VariantColumn& v, double value) {
    return v.row.latency_measured ? report::fixed(value, 3) : std::string("-");
  };
  add("target", [](const VariantColumn& v) { return v.target; });
  add("rounds", [](const VariantColumn& v) { return std::to_string(v.rounds); });
  add("requests", [](const VariantColumn& v) { return report::grouped(v.row.requests); });
  add("rps", [](const VariantColumn& v) { return report::grouped_fixed(v.row.rps, 1); });
  add("p50 ms", [&](const VariantColumn& v) { return ms(v, v.row.latency_ms.p50); });
  add("p90 ms", [&](const VariantColumn& v) { return ms(v, v.row.latency_ms.p90); });
  add("p99 ms", [&](const VariantColumn& v) { return ms(v, v.row.latency_ms.p99); });
  add("errors", [](const VariantColumn& v) {
    return report::grouped(v.row.failures) + " (" + report::fixed(v.row.error_rate * 100.0, 2) +
           "%)";
  });
  add("target CPU cores",
      [](const VariantColumn& v) { return or_dash(v.usage.cpu_cores_mean, 3); });
  add("CPU ms per request", [](const VariantColumn& v) {
    return v.cpu_per_request ? report::fixed(*v.cpu_per_request * 1000.0, 3) : std::string("-");
  });
  add("target memory", [](const VariantColumn& v) {
    return v.usage.memory_bytes_max && *v.usage.memory_bytes_max >= 0
               ? report::human_bytes(static_cast<uint64_t>(*v.usage.memory_bytes_max))
               : std::string("-");
  });
  return table;
}

ExperimentTable differences_table(const ExperimentReport& experiment) {
  ExperimentTable table;
  if (experiment.differences.empty()) return table;
  // One column per variant against its reference, in the order they come.
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const api::MetricDifference& d : experiment.differences) {
    const std::pair<std::string, std::string> pair{d.variant, d.reference};
    if (std::find(pairs.begin(), pairs.end(), pair) == pairs.end()) pairs.push_back(pair);
  }
  table.header.push_back("metric");
  for (const auto& [variant, reference] : pairs)
    table.header.push_back(variant + " - " + reference);
  // The metrics in kComparedMetrics' order, then any this version does not know.
  std::vector<std::string> metrics;
  for (const ComparedMetricName& known : kComparedMetrics) metrics.emplace_back(known.name);
  for (const api::MetricDifference& d : experiment.differences) {
    if (std::find(metrics.begin(), metrics.end(), d.metric) == metrics.end()) {
      metrics.push_back(d.metric);
    }
  }
  for (const std::string& metric : metrics) {
    std::vector<std::string> row = {metric};
    bool any = false;
    // A pair, not its structured binding: clang 14 (the fuzz build) cannot
    // capture a binding in a lambda.
    for (const std::pair<std::string, std::string>& pair : pairs) {
      const auto it = std::find_if(experiment.differences.begin(), experiment.differences.end(),
                                   [&](const api::MetricDifference& d) {
                                     return d.metric == metric && d.variant == pair.first &&
                                            d.reference == pair.second;
                                   });
      any = any || it != experiment.differences.end();
      row.push_back(it == experiment.differences.end() ? "-" : difference_text(*it));
    }
    if (any) table.rows.push_back(std::move(row));
  }
  return table;
}

std::string experiment_progress(const ExperimentReport& experiment) {
  const size_t n = experiment.variants.size();
  return std::to_string(experiment.completed_rounds) + " of " + std::to_string(experiment.rounds) +
         " round" + (experiment.rounds == 1 ? "" : "s") + " of " + std::to_string(n) + " variant" +
         (n == 1 ? "" : "s");
}

void write_experiment_text(std::ostream& out, const ExperimentReport& experiment) {
  const auto write = [&](const ExperimentTable& t) {
    std::vector<report::TextTable::Column> columns;
    for (size_t c = 0; c < t.header.size(); ++c) {
      columns.push_back(
          {t.header[c], c == 0 ? report::TextTable::Align::left : report::TextTable::Align::right});
    }
    report::TextTable table(columns);
    for (const std::vector<std::string>& row : t.rows) table.add_row(row);
    table.write(out, "  ");
  };
  out << "Experiment: " << experiment_progress(experiment) << "\n\nVariants:\n";
  write(variants_table(experiment));
  if (const ExperimentTable differences = differences_table(experiment);
      !differences.rows.empty()) {
    out << "\nDifferences (mean per round [95% interval], relative change):\n";
    write(differences);
  }
  if (!experiment.comparisons.empty()) {
    out << "\nComparisons:\n";
    for (const api::ComparisonRow& c : experiment.comparisons) {
      out << "  " << report::pad_right(c.outcome, 12) << "  " << c.expression << "  (margin "
          << comparison_margin_text(c);
      if (c.rounds_needed) out << ", about " << *c.rounds_needed << " rounds would decide";
      out << ")\n";
    }
  }
}

ExperimentTable search_table(const api::SearchStatus& search) {
  ExperimentTable table;
  table.header = {"step",
                  search.over == "connections" ? "connections" : "rate",
                  "verdict",
                  "rps",
                  "p50 ms",
                  "p90 ms",
                  "p99 ms",
                  "errors %",
                  "target CPU cores",
                  "CPU ms per request",
                  "failed"};
  for (const api::SearchStep& step : search.steps) {
    std::string verdict = step.verdict ? std::string(api::to_string(*step.verdict))
                          : step.phase ? std::string(api::to_string(*step.phase))
                                       : std::string("Pending");
    std::string failed;
    for (const std::string& f : step.failed) failed += (failed.empty() ? "" : "; ") + f;
    table.rows.push_back(
        {std::to_string(step.step), search_value(search, step.value), verdict,
         step_metric(step, ComparedMetric::rps, 1, 1), step_metric(step, ComparedMetric::p50, 1, 3),
         step_metric(step, ComparedMetric::p90, 1, 3), step_metric(step, ComparedMetric::p99, 1, 3),
         step_metric(step, ComparedMetric::errorRate, 100, 2),
         step.cpu_cores ? report::fixed(*step.cpu_cores, 3) : std::string("-"),
         step_metric(step, ComparedMetric::cpuPerRequest, 1000, 3),
         failed.empty() ? std::string("-") : failed});
  }
  return table;
}

std::string search_outcome(const api::SearchStatus& search) {
  std::string out;
  if (search.highest_passing) {
    out = "highest passing " + search.over + " " + search_value(search, *search.highest_passing);
  }
  if (search.first_failing) {
    out += std::string(out.empty() ? "" : ", ") + "first failing " +
           search_value(search, *search.first_failing);
  }
  if (out.empty())
    out = search.steps.empty() ? "no step finished yet" : "no step passed or failed yet";
  if (search.limit) {
    out += " (limit " + search_value(search, *search.limit) +
           (search.limit_by.empty() ? "" : ", " + search.limit_by) + ")";
  }
  return out;
}

void write_search_text(std::ostream& out, const api::SearchStatus& search) {
  out << "Capacity search: " << search_outcome(search) << "\n\n";
  if (search.steps.empty()) return;
  const ExperimentTable t = search_table(search);
  std::vector<report::TextTable::Column> columns;
  for (size_t c = 0; c < t.header.size(); ++c) {
    columns.push_back({t.header[c], c + 1 == t.header.size() || c == 2
                                        ? report::TextTable::Align::left
                                        : report::TextTable::Align::right});
  }
  report::TextTable table(columns);
  for (const std::vector<std::string>& row : t.rows) table.add_row(row);
  table.write(out, "  ");
}

std::string threshold_limit(const std::string& expression) {
  const size_t op = expression.find_first_of("<>=");
  if (op == std::string::npos) return "";
  std::string limit = expression.substr(op);
  size_t end = limit.find_first_not_of("<>=");
  if (end != std::string::npos && limit[end] != ' ') limit.insert(end, " ");
  limit.erase(limit.find_last_not_of(" \t") + 1);
  return limit;
}

GateReport gate_report_from_loadtest(const json& given) {
  if (!given.is_object()) {
    throw std::invalid_argument("a LoadTest or LoadTestResult must be a JSON object");
  }
  const json loadtest = as_loadtest(given);
  const api::LoadTest object = loadtest.get<api::LoadTest>();
  const api::ObjectMeta& metadata = object.metadata;
  GateReport out;
  out.run_name = metadata.name;
  out.namespace_ = metadata.namespace_;
  out.title = (metadata.namespace_.empty() ? "" : metadata.namespace_ + "/") + out.run_name;
  if (const auto label = metadata.labels.find(std::string(kTestLabel));
      label != metadata.labels.end()) {
    out.test = label->second;
  }
  out.target = target_of(member(object.spec, "target"));
  out.identity = test_identity(out.test, metadata.generate_name, out.run_name, out.target);

  const api::LoadTestStatus& status = object.status;
  const api::StatusSpelling spelled = api::status_spelling(loadtest);
  out.phase = spelled.phase.empty() ? api::name(api::Phase::Pending) : spelled.phase;
  out.verdict = spelled.verdict.empty() ? api::name(api::Verdict::None) : spelled.verdict;
  out.reason = status.reason;
  out.message = status.message;
  out.started = time_text(status.start_time);
  out.completed = time_text(status.completion_time);

  if (const std::optional<api::ResultRow> result = api::result_row(status)) {
    out.has_result = true;
    out.run = summary_of(*result, "");
    const Result full = result_from_json(result->encoded);
    out.status_codes = full.status_codes;
    out.errors = full.errors;
    if (result->histograms) out.latency_us = full.latency;
  }
  for (const api::ResultRow& row : api::stage_rows(status)) {
    out.stages.push_back(summary_of(
        row, stage_label(static_cast<int>(row.index), row.connections, row.target_rate)));
  }
  for (const api::ResultRow& row : api::request_rows(status)) {
    out.requests.push_back(summary_of(row, row.name));
  }
  out.scenarios = scenario_rows_of(api::scenario_rows(status), out.run.duration_seconds);
  for (const api::ThresholdRow& row : status.thresholds) {
    out.thresholds.push_back(
        ThresholdRow{row.expression, row.observed, threshold_limit(row.expression), row.passed});
  }
  if (status.baseline) out.baseline = baseline_of(*status.baseline);
  if (status.target) {
    for (const api::SharedRun& run : status.target->shared_with) {
      out.shared_with.push_back(api::to_string(run));
    }
  }
  if (const api::Condition* saturated =
          api::find_condition(status.conditions, api::ConditionType::GeneratorSaturated);
      saturated != nullptr && saturated->status == api::ConditionStatus::True) {
    out.generator_saturated = saturated->message;
  }
  if (status.search) {
    out.search = *status.search;
  } else if (member(object.spec, "search").is_object()) {
    out.search = api::SearchStatus{};  // no step yet: the answer says so
    out.search->over =
        member(member(object.spec, "search"), "connections").is_object() ? "connections" : "rate";
  }
  const json& spec_variants = member(object.spec, "variants");
  if (status.experiment || (spec_variants.is_array() && !spec_variants.empty())) {
    out.experiment = experiment_of(object.spec, status.experiment ? &*status.experiment : nullptr);
    // An experiment's targets are its variants'.
    if (out.target.empty()) {
      for (const VariantColumn& variant : out.experiment->variants) {
        out.target += (out.target.empty() ? "" : "; ") + variant.name + ": " + variant.target;
      }
    }
  }
  return out;
}

GateReport gate_report_from_run(const std::string& name, const std::string& test,
                                const RunInfo& info, const RunResult& run,
                                const std::vector<ThresholdOutcome>& gates,
                                const std::optional<GeneratorCpu>& cpu) {
  GateReport out;
  out.title = name.empty() ? info.url : name;
  if (cpu) out.generator_saturated = generator_saturation_warning(*cpu);
  out.test = test;
  out.target = info.url;
  out.identity = test_identity(test, "", name, info.url);
  out.phase = api::name(api::Phase::Succeeded);
  out.has_result = true;
  out.run = summary_of(run.result, "");
  out.status_codes = run.result.status_codes;
  out.errors = run.result.errors;
  out.latency_us = run.result.latency;
  for (const StageResult& stage : run.stages) {
    out.stages.push_back(
        summary_of(stage.result, stage_label(stage.index, stage.connections, stage.rate)));
  }
  for (const NamedResult& named : run.request_results) {
    out.requests.push_back(summary_of(named.result, named.name));
  }
  out.scenarios = scenario_rows_of(run);
  size_t missed = 0;
  for (const ThresholdOutcome& gate : gates) {
    out.thresholds.push_back(ThresholdRow{gate.expression, gate.observed,
                                          threshold_limit(gate.expression), gate.passed});
    if (!gate.passed) ++missed;
  }
  if (gates.empty()) {
    out.verdict = api::name(api::Verdict::None);
    out.reason = api::name(api::Reason::NoGate);
    out.message = "no thresholds to check";
  } else if (missed == 0) {
    out.verdict = api::name(api::Verdict::Pass);
    out.reason = api::name(api::Reason::ThresholdsPassed);
    out.message = "all " + std::to_string(gates.size()) + " threshold" +
                  (gates.size() == 1 ? "" : "s") + " met";
  } else {
    out.verdict = api::name(api::Verdict::Fail);
    out.reason = api::name(api::Reason::ThresholdsFailed);
    out.message =
        std::to_string(missed) + " of " + std::to_string(gates.size()) + " thresholds missed";
  }
  if (!run.finished) {
    out.phase = api::name(api::Phase::Running);
    out.verdict = api::name(api::Verdict::None);
  }
  return out;
}

std::vector<PercentilePoint> percentile_distribution(const Histogram& micros, int ticks_per_half) {
  std::vector<PercentilePoint> points;
  const uint64_t total = micros.total_count();
  if (total == 0 || ticks_per_half < 1) return points;
  // Cumulative counts by bucket, to give each point its exact count.
  std::vector<std::pair<int64_t, uint64_t>> cumulative;  // highest equivalent value, count <= it
  uint64_t running = 0;
  micros.for_each_nonempty([&](int64_t /*low*/, int64_t high, uint64_t n) {
    running += n;
    cumulative.emplace_back(high, running);
  });
  const auto count_at_or_below = [&](int64_t value) {
    uint64_t below = 0;
    for (const auto& [high, n] : cumulative) {
      if (micros.lowest_equivalent_value(high) > value) break;
      below = n;
    }
    return below;
  };
  const auto add = [&](double percentile) {
    const int64_t value = micros.value_at_percentile(percentile);
    const double remaining = 1.0 - percentile / 100.0;
    points.push_back(PercentilePoint{percentile, static_cast<double>(value) / 1000.0,
                                     count_at_or_below(value),
                                     remaining > 0 ? 1.0 / remaining : 0});
  };
  // Percentiles beyond 1 - 1/total only repeat the maximum.
  const double last_inverse = static_cast<double>(total);
  for (int step = 0;; ++step) {
    const double inverse = std::pow(2.0, static_cast<double>(step) / ticks_per_half);
    if (inverse > last_inverse) break;
    add(100.0 * (1.0 - 1.0 / inverse));
  }
  // The maximum, at 100%: drawn at the curve's last x.
  const double end_inverse = points.empty() ? 1.0 : std::max(points.back().inverse, 1.0);
  add(100.0);
  points.back().inverse = end_inverse;
  return points;
}

void write_loadtest_report(std::ostream& out, ReportFormat format, const json& given,
                           const std::optional<Trend>& trend) {
  if (!given.is_object()) {
    throw std::invalid_argument("a LoadTest or LoadTestResult must be a JSON object");
  }
  const json loadtest = as_loadtest(given);
  switch (format) {
    case ReportFormat::junit:
      write_junit_report(out, gate_report_from_loadtest(loadtest));
      return;
    case ReportFormat::markdown:
      write_markdown_report(out, gate_report_from_loadtest(loadtest));
      return;
    case ReportFormat::html: {
      GateReport report = gate_report_from_loadtest(loadtest);
      report.trend = trend;
      write_html_report(out, report);
      return;
    }
    default:
      break;
  }
  const api::LoadTest object = loadtest.get<api::LoadTest>();
  const GateReport gate = gate_report_from_loadtest(loadtest);
  if (format == ReportFormat::json) {
    // The status as the operator wrote it, under the LoadTest's name.
    const json& status = member(loadtest, "status");
    json document = {{"name", object.metadata.name},
                     {"namespace", object.metadata.namespace_},
                     {"test", gate.test},
                     {"status", status.is_object() ? status : json::object()}};
    out << document.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
    return;
  }
  const std::optional<api::ResultRow> result = api::result_row(object.status);
  if (!result && gate.experiment) {
    write_experiment_report(out, format, loadtest, object, gate);
    return;
  }
  if (!result && gate.search) {
    write_search_report(out, format, gate);
    return;
  }
  if (!result) {
    out << gate.title << ": " << gate.phase << ", no result yet";
    if (!gate.message.empty()) out << " (" << gate.message << ")";
    out << '\n';
    write_gate_text(out, gate);
    return;
  }
  RunResult run;
  run.result = result_from_json(result->encoded);
  run.finished = gate.finished();
  const std::vector<api::ResultRow> stages = api::stage_rows(object.status);
  for (const api::ResultRow& row : stages) {
    StageResult stage;
    stage.result = result_from_json(row.encoded);
    stage.index = static_cast<int>(row.index);
    stage.duration_seconds_planned = row.planned_duration_seconds;
    stage.connections = row.connections;
    stage.rate = row.target_rate;
    run.stages.push_back(std::move(stage));
  }
  const std::vector<api::ResultRow> named = api::request_rows(object.status);
  for (const api::ResultRow& row : named) {
    run.request_results.push_back(NamedResult{row.name, result_from_json(row.encoded)});
  }
  const ParsedLoadTest parsed = parse_loadtest(loadtest.dump());
  report::ReportModel model =
      report::build_report_model(run_info_of(object.spec, parsed, gate.target), run);
  // The status keeps histograms for the whole run only; the rows show the
  // summaries the operator computed from the merged histograms.
  for (size_t i = 0; i < model.stages.size() && i < stages.size(); ++i) {
    model.stages[i].result = view_of_summary(stages[i]);
  }
  for (size_t i = 0; i < model.requests.size() && i < named.size(); ++i) {
    model.requests[i].result = view_of_summary(named[i]);
  }
  model.scenarios = gate.scenarios;
  switch (format) {
    case ReportFormat::ab:
      report::write_ab_report(out, model);
      return;
    case ReportFormat::jmeter:
      report::write_jmeter_report(out, model);
      return;
    default:
      out << gate.title << ": " << gate.phase;
      if (!gate.message.empty()) out << " (" << gate.message << ")";
      out << "\n\n";
      report::write_text_report(out, model);
      write_gate_text(out, gate);
      return;
  }
}

void write_gate_text(std::ostream& out, const GateReport& report) {
  if (const std::string note = shared_target_note(report.shared_with); !note.empty()) {
    out << '\n' << note << '\n';
  }
  if (const std::string note = generator_saturated_note(report.generator_saturated);
      !note.empty()) {
    out << '\n' << note << '\n';
  }
  if (!report.thresholds.empty()) {
    out << "\nThresholds:\n";
    for (const ThresholdRow& t : report.thresholds) {
      out << "  " << (t.passed ? "PASS  " : "FAIL  ") << t.expression << "  (observed "
          << t.observed << ")\n";
    }
  }
  if (report.baseline) {
    const BaselineReport& b = *report.baseline;
    out << "\nBaseline" << (b.load_test_name.empty() ? "" : " " + b.load_test_name) << ": "
        << (b.passed ? "passed" : "failed");
    if (!b.message.empty()) out << " (" << b.message << ")";
    out << '\n';
    for (const BaselineCheck& c : b.checks) {
      out << "  " << (c.passed ? "PASS  " : "FAIL  ") << c.metric << " " << c.delta;
      if (c.max_regression_percent) {
        out << "  (max regression " << report::compact_number(*c.max_regression_percent) << "%)";
      }
      out << '\n';
    }
  }
  if (!report.thresholds.empty() || report.baseline || report.finished()) {
    out << "Verdict: " << report.verdict << '\n';
  }
}

}  // namespace kubeload::loadgen
