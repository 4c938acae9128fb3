// The gate as GitHub-flavoured Markdown, for a pull-request comment or a CI
// job summary: the verdict first, then the numbers, then what was checked.

#include <string>
#include <vector>

#include "kubeload/comparison.hpp"
#include "reports/escape.hpp"
#include "reports/gate_report.hpp"
#include "reports/report_writers.hpp"

namespace kubeload::loadgen {
namespace {

std::string ms(const SummaryRow& row, double value) {
  return row.latency_measured ? report::fixed(value, 3) : "-";
}

std::string errors_cell(const SummaryRow& row) {
  return report::grouped(row.failures) + " (" + report::fixed(row.error_rate * 100.0, 2) + "%)";
}

std::string mark(bool passed) {
  return passed ? "✅" : "❌";
}

std::string headline(const GateReport& report) {
  if (report.failed()) return "💥 run failed";
  if (!report.finished()) return "⏳ " + report.phase;
  if (report.verdict_value() == api::Verdict::Pass) return "✅ Pass";
  if (report.verdict_value() == api::Verdict::Fail) return "❌ Fail";
  return "➖ no gate";
}

void write_rows_table(std::ostream& out, const char* label, const std::vector<SummaryRow>& rows) {
  out << "| " << label << " | requests | rps | errors | p50 ms | p90 ms | p99 ms | max ms |\n";
  out << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const SummaryRow& row : rows) {
    out << "| " << markdown_cell(row.label.empty() ? "total" : row.label) << " | "
        << report::grouped(row.requests) << " | " << report::grouped_fixed(row.rps, 1) << " | "
        << errors_cell(row) << " | " << ms(row, row.latency_ms.p50) << " | "
        << ms(row, row.latency_ms.p90) << " | " << ms(row, row.latency_ms.p99) << " | "
        << ms(row, row.latency_ms.max) << " |\n";
  }
}

void write_table(std::ostream& out, const ExperimentTable& table) {
  out << "|";
  for (const std::string& cell : table.header) out << " " << markdown_cell(cell) << " |";
  out << "\n|";
  for (size_t c = 0; c < table.header.size(); ++c) out << (c == 0 ? "---|" : "---:|");
  out << "\n";
  for (const std::vector<std::string>& row : table.rows) {
    out << "|";
    for (const std::string& cell : row) out << " " << markdown_cell(cell) << " |";
    out << "\n";
  }
}

// Inconclusive is no pass either: only Pass is green.
std::string comparison_mark(const api::ComparisonRow& c) {
  if (comparison_passed(c)) return mark(true);
  return c.outcome == to_string(ComparisonOutcome::Inconclusive) ? "❔" : mark(false);
}

void write_experiment(std::ostream& out, const ExperimentReport& experiment) {
  out << "#### Variants\n\n"
      << experiment_progress(experiment) << ", each variant's rounds merged.\n\n";
  write_table(out, variants_table(experiment));
  out << '\n';
  if (const ExperimentTable differences = differences_table(experiment);
      !differences.rows.empty()) {
    out << "#### Differences\n\nEach variant minus the base: the mean per round, its 95% "
           "interval and the change relative to the base.\n\n";
    write_table(out, differences);
    out << '\n';
  }
  if (!experiment.comparisons.empty()) {
    out << "#### Comparisons\n\n";
    out << "| | comparison | outcome | margin | limit |\n|---|---|---|---:|---|\n";
    for (const api::ComparisonRow& c : experiment.comparisons) {
      std::string outcome = c.outcome;
      if (c.rounds_needed) {
        outcome += " (about " + std::to_string(*c.rounds_needed) + " rounds would decide)";
      }
      out << "| " << comparison_mark(c) << " | " << markdown_code(c.expression) << " | "
          << markdown_cell(outcome) << " | " << markdown_cell(comparison_margin_text(c)) << " | "
          << markdown_cell(comparison_limit(c.expression)) << " |\n";
    }
    out << '\n';
  }
}

}  // namespace

void write_markdown_report(std::ostream& out, const GateReport& report) {
  out << "### kubeload " << markdown_code(report.title) << ": " << headline(report) << "\n\n";
  if (!report.message.empty()) out << "> " << markdown_cell(report.message) << "\n\n";
  if (const std::string note = shared_target_note(report.shared_with); !note.empty()) {
    out << "> **" << markdown_cell(note) << "**\n\n";
  }
  if (const std::string note = generator_saturated_note(report.generator_saturated);
      !note.empty()) {
    out << "> **" << markdown_cell(note) << "**\n\n";
  }
  out << "- **Target:** " << markdown_code(report.target) << "\n";
  // The test's identity, as the JUnit report names it; a bare URL run has none of its own.
  if (report.identity != report.target)
    out << "- **Test:** " << markdown_code(report.identity) << "\n";
  out << "- **Phase:** " << report.phase << ", **verdict:** " << report.verdict << "\n";
  if (report.has_result) {
    out << "- **Duration:** " << report::fixed(report.run.duration_seconds, 1) << " s\n";
  }
  out << '\n';
  if (report.has_result) {
    SummaryRow total = report.run;
    total.label = "total";
    write_rows_table(out, "", {total});
    out << '\n';
  } else if (report.experiment) {
    write_experiment(out, *report.experiment);
  } else if (report.search) {
    out << "#### Capacity search\n\n" << markdown_cell(search_outcome(*report.search)) << "\n\n";
    if (!report.search->steps.empty()) {
      write_table(out, search_table(*report.search));
      out << '\n';
    }
  } else {
    out << "No result was collected.\n\n";
  }
  if (!report.thresholds.empty()) {
    out << "#### Thresholds\n\n";
    out << "| | threshold | observed | limit |\n|---|---|---:|---|\n";
    for (const ThresholdRow& t : report.thresholds) {
      out << "| " << mark(t.passed) << " | " << markdown_code(t.expression) << " | "
          << markdown_cell(t.observed) << " | " << markdown_cell(t.limit) << " |\n";
    }
    out << '\n';
  }
  if (report.baseline) {
    const BaselineReport& b = *report.baseline;
    out << "#### Baseline";
    if (!b.load_test_name.empty()) out << " " << markdown_code(b.load_test_name);
    out << ": " << mark(b.passed) << "\n\n";
    if (!b.message.empty()) out << markdown_cell(b.message) << "\n\n";
    if (!b.checks.empty()) {
      out << "| | metric | change | max regression |\n|---|---|---:|---:|\n";
      for (const BaselineCheck& c : b.checks) {
        out << "| " << mark(c.passed) << " | " << markdown_cell(c.metric) << " | "
            << markdown_cell(c.delta) << " | "
            << (c.max_regression_percent ? report::compact_number(*c.max_regression_percent) + "%"
                                         : std::string("-"))
            << " |\n";
      }
      out << '\n';
    }
  }
  if (!report.stages.empty()) {
    out << "<details><summary>Stages</summary>\n\n";
    write_rows_table(out, "stage", report.stages);
    out << "\n</details>\n\n";
  }
  if (!report.scenarios.empty()) {
    out << "<details><summary>Scenarios</summary>\n\n";
    out << "| scenario | iterations | failed | p50 ms | p95 ms | p99 ms | max ms |\n";
    out << "|---|---:|---:|---:|---:|---:|---:|\n";
    for (const ScenarioRow& row : report.scenarios) {
      const auto duration = [&](double value) {
        return row.duration_measured ? report::fixed(value, 3) : std::string("-");
      };
      out << "| " << markdown_cell(row.name) << " | " << report::grouped(row.iterations) << " | "
          << report::grouped(row.failed) << " (" << report::fixed(row.failed_percent, 2) << "%) | "
          << duration(row.duration_ms.p50) << " | " << duration(row.duration_ms.p95) << " | "
          << duration(row.duration_ms.p99) << " | " << duration(row.duration_ms.max) << " |\n";
    }
    out << "\n</details>\n\n";
  }
  // A scenario run lists its steps even when there is one.
  if (report.requests.size() > 1 || (!report.scenarios.empty() && !report.requests.empty())) {
    out << (report.scenarios.empty() ? "<details><summary>Requests by name</summary>\n\n"
                                     : "<details><summary>Steps</summary>\n\n");
    write_rows_table(out, report.scenarios.empty() ? "request" : "step", report.requests);
    out << "\n</details>\n\n";
  }
  out << "<sub>kubeload";
  if (!report.started.empty()) out << " · started " << markdown_cell(report.started);
  if (!report.completed.empty()) out << " · completed " << markdown_cell(report.completed);
  out << "</sub>\n";
}

}  // namespace kubeload::loadgen
