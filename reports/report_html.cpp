// The gate as one self-contained HTML page: no scripts, fonts or images from
// anywhere, so it opens the same from a CI artifact, a mail or a laptop
// offline. The latency curve is inline SVG drawn here: HdrHistogram's
// percentile distribution on a log scale of 1/(1-percentile), where 90%, 99%
// and 99.9% are equally far apart and the tail is as visible as the median.

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "reports/escape.hpp"
#include "reports/gate_report.hpp"
#include "reports/report_writers.hpp"

namespace kubeload::loadgen {
namespace {

std::string num(double value) {
  return report::fixed(value, 1);
}

std::string ms(const SummaryRow& row, double value) {
  return row.latency_measured ? report::fixed(value, 3) : "-";
}

// 1, 2, 2.5 or 5 times a power of ten: the step of about `ticks` grid lines up to `top`.
double nice_step(double top, int ticks) {
  const double raw = top / ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (raw <= factor * magnitude) return factor * magnitude;
  }
  return 10.0 * magnitude;
}

std::string percentile_label(int decade) {
  if (decade == 0) return "0%";
  std::string label = "99.9999999";
  label = decade == 1 ? "90" : label.substr(0, static_cast<size_t>(decade == 2 ? 2 : decade + 1));
  return label + "%";
}

// Without a histogram (a status from before histograms were kept), the
// summary's percentiles are the points there are.
std::vector<PercentilePoint> points_of_summary(const SummaryRow& run) {
  const LatencySummary& s = run.latency_ms;
  std::vector<PercentilePoint> points;
  const std::pair<double, double> known[] = {{0, s.min},  {50, s.p50},   {66, s.p66}, {75, s.p75},
                                             {80, s.p80}, {90, s.p90},   {95, s.p95}, {98, s.p98},
                                             {99, s.p99}, {99.9, s.p999}};
  for (const auto& [percentile, value] : known) {
    points.push_back(PercentilePoint{percentile, value, 0, 1.0 / (1.0 - percentile / 100.0)});
  }
  points.push_back(PercentilePoint{100, s.max, run.requests, 1000});
  return points;
}

void write_curve(std::ostream& out, const GateReport& report,
                 const std::vector<PercentilePoint>& points) {
  constexpr double kWidth = 820, kHeight = 400, kLeft = 72, kRight = 24, kTop = 20, kBottom = 56;
  const double plot_width = kWidth - kLeft - kRight;
  const double plot_height = kHeight - kTop - kBottom;
  double last_inverse = 10;
  double top = 0;
  for (const PercentilePoint& p : points) {
    last_inverse = std::max(last_inverse, p.inverse);
    top = std::max(top, p.value_ms);
  }
  // Latency thresholds on percentiles are drawn as the limit they set.
  struct Limit {
    double inverse, value_ms;
    std::string label;
    bool passed;
  };
  std::vector<Limit> limits;
  for (const ThresholdRow& row : report.thresholds) {
    const auto parsed = parse_threshold(row.expression);
    const auto* threshold = std::get_if<Threshold>(&parsed);
    // The curve is the requests' latency: thresholds of a row or of the iterations are not on it.
    if (threshold == nullptr || threshold->scope != ThresholdScope::run) continue;
    double percentile = -1;
    switch (threshold->metric) {
      case ThresholdMetric::p50:
        percentile = 50;
        break;
      case ThresholdMetric::p90:
        percentile = 90;
        break;
      case ThresholdMetric::p95:
        percentile = 95;
        break;
      case ThresholdMetric::p99:
        percentile = 99;
        break;
      case ThresholdMetric::p999:
        percentile = 99.9;
        break;
      default:
        break;
    }
    if (percentile < 0) continue;
    limits.push_back(
        Limit{1.0 / (1.0 - percentile / 100.0), threshold->value, row.expression, row.passed});
  }
  // The scale is the curve's: a limit far above it would flatten the curve,
  // so one up to twice the curve's top widens the scale and a higher one is
  // drawn on the top edge, its label saying where it really is.
  double data_top = top;
  for (const Limit& limit : limits) {
    if (limit.value_ms <= 2 * data_top || data_top <= 0) top = std::max(top, limit.value_ms);
  }
  const int decades = std::max(1, static_cast<int>(std::ceil(std::log10(last_inverse) - 1e-9)));
  if (top <= 0) top = 1;
  const double step = nice_step(top, 5);
  const double y_top = std::ceil(top / step) * step;
  const auto x_of = [&](double inverse) {
    return kLeft + plot_width * std::log10(std::max(inverse, 1.0)) / decades;
  };
  const auto y_of = [&](double value) { return kTop + plot_height * (1.0 - value / y_top); };

  out << "<svg id=\"latency-curve\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth
      << "\" height=\"" << kHeight << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
      << "\" role=\"img\" aria-label=\"latency by percentile\">\n";
  out << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << plot_width << "\" height=\""
      << plot_height << "\" class=\"plot\"/>\n";
  for (double v = 0; v <= y_top + step / 2; v += step) {
    out << "<line class=\"grid\" x1=\"" << kLeft << "\" x2=\"" << kLeft + plot_width << "\" y1=\""
        << num(y_of(v)) << "\" y2=\"" << num(y_of(v)) << "\"/>";
    out << "<text class=\"tick\" x=\"" << kLeft - 8 << "\" y=\"" << num(y_of(v) + 4)
        << "\" text-anchor=\"end\">" << report::compact_number(v) << "</text>\n";
  }
  for (int d = 0; d <= decades; ++d) {
    const double x = x_of(std::pow(10.0, d));
    out << "<line class=\"grid\" x1=\"" << num(x) << "\" x2=\"" << num(x) << "\" y1=\"" << kTop
        << "\" y2=\"" << kTop + plot_height << "\"/>";
    out << "<text class=\"tick\" x=\"" << num(x) << "\" y=\"" << kTop + plot_height + 18
        << "\" text-anchor=\"middle\">" << percentile_label(d) << "</text>\n";
  }
  out << "<text class=\"axis\" x=\"" << num(kLeft + plot_width / 2) << "\" y=\"" << kHeight - 10
      << "\" text-anchor=\"middle\">percentile</text>\n";
  out << "<text class=\"axis\" transform=\"translate(18 " << num(kTop + plot_height / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">latency (ms)</text>\n";
  const double right = kLeft + plot_width;
  for (const Limit& limit : limits) {
    const bool above = limit.value_ms > y_top;
    const double y = y_of(std::min(limit.value_ms, y_top));
    // A percentile past the last recorded one is drawn at the plot's edge.
    const double x = std::min(x_of(limit.inverse), right);
    const bool at_right = x > kLeft + plot_width * 0.75;
    const char* state = limit.passed ? "pass" : "fail";
    out << "<line class=\"limit " << state << "\" x1=\"" << kLeft << "\" x2=\"" << num(x)
        << "\" y1=\"" << num(y) << "\" y2=\"" << num(y) << "\"/><circle class=\"limit " << state
        << "\" cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"4\"/>";
    out << "<text class=\"limit-label\" x=\"" << num(at_right ? x - 6 : x + 6) << "\" y=\""
        << num(above ? y + 16 : y - 6) << "\" text-anchor=\"" << (at_right ? "end" : "start")
        << "\">" << (above ? "&#8593; " : "") << html_escape(limit.label) << "</text>\n";
  }
  out << "<polyline id=\"latency-curve-line\" class=\"curve\" points=\"";
  for (size_t i = 0; i < points.size(); ++i) {
    out << (i == 0 ? "" : " ") << num(x_of(points[i].inverse)) << ","
        << num(y_of(points[i].value_ms));
  }
  out << "\"/>\n</svg>\n";
}

// The test's last runs: p50 and p99 over one plot, rps under it, one x step
// per run (runs are not evenly spaced in time, and a gap of a week says
// nothing about the service). The run itself and its baseline records are
// marked; the table after it names every point.
void write_trend_panel(
    std::ostream& out, const std::vector<TrendPoint>& points, double top_y, double height,
    const char* unit,
    const std::vector<std::pair<const char*, std::optional<double> TrendPoint::*>>& series) {
  constexpr double kWidth = 820, kLeft = 72, kRight = 24;
  const double plot_width = kWidth - kLeft - kRight;
  double top = 0;
  for (const TrendPoint& p : points) {
    for (const auto& [name, member] : series) {
      if (p.*member) top = std::max(top, *(p.*member));
    }
  }
  if (top <= 0) top = 1;
  const double step = nice_step(top, 4);
  const double y_top = std::ceil(top / step) * step;
  const auto x_of = [&](size_t i) {
    return points.size() == 1 ? kLeft + plot_width / 2
                              : kLeft + plot_width * static_cast<double>(i) /
                                            static_cast<double>(points.size() - 1);
  };
  const auto y_of = [&](double value) { return top_y + height * (1.0 - value / y_top); };
  out << "<rect x=\"" << kLeft << "\" y=\"" << num(top_y) << "\" width=\"" << plot_width
      << "\" height=\"" << num(height) << "\" class=\"plot\"/>\n";
  for (double v = 0; v <= y_top + step / 2; v += step) {
    out << "<line class=\"grid\" x1=\"" << kLeft << "\" x2=\"" << kLeft + plot_width << "\" y1=\""
        << num(y_of(v)) << "\" y2=\"" << num(y_of(v)) << "\"/>";
    out << "<text class=\"tick\" x=\"" << kLeft - 8 << "\" y=\"" << num(y_of(v) + 4)
        << "\" text-anchor=\"end\">" << report::compact_number(v) << "</text>\n";
  }
  out << "<text class=\"axis\" transform=\"translate(18 " << num(top_y + height / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">" << unit << "</text>\n";
  for (const auto& line : series) {
    // Not a structured binding: clang 14 (the fuzz build's) cannot capture one in a lambda.
    const char* const name = line.first;
    const auto member = line.second;
    // A run without the figure breaks the line rather than pretending a value.
    std::string segment;
    const auto flush = [&] {
      if (segment.find(' ') != std::string::npos) {
        out << "<polyline class=\"trend " << name << "\" points=\"" << segment << "\"/>\n";
      }
      segment.clear();
    };
    for (size_t i = 0; i < points.size(); ++i) {
      const std::optional<double>& value = points[i].*member;
      if (!value) {
        flush();
        continue;
      }
      segment += (segment.empty() ? "" : " ") + num(x_of(i)) + "," + num(y_of(*value));
    }
    flush();
    for (size_t i = 0; i < points.size(); ++i) {
      const TrendPoint& p = points[i];
      const std::optional<double>& value = p.*member;
      if (!value) continue;
      const char* mark = p.this_run ? " this-run" : p.baseline ? " baseline" : "";
      out << "<circle class=\"point " << name << mark << "\" cx=\"" << num(x_of(i)) << "\" cy=\""
          << num(y_of(*value)) << "\" r=\"" << (*mark ? 6 : 3.5) << "\"><title>"
          << html_escape(p.load_test) << " " << name << " " << report::fixed(*value, 3)
          << (p.this_run   ? " (this run)"
              : p.baseline ? " (baseline)"
                           : "")
          << "</title></circle>\n";
    }
  }
  for (size_t i = 0; i < points.size(); ++i) {
    out << "<text class=\"tick\" x=\"" << num(x_of(i)) << "\" y=\"" << num(top_y + height + 16)
        << "\" text-anchor=\"middle\">" << i + 1 << "</text>\n";
  }
}

void write_trend(std::ostream& out, const Trend& trend) {
  out << "<h2>Trend of <code>" << html_escape(trend.test) << "</code></h2>\n";
  if (trend.points.empty()) {
    out << "<p>No runs of the test were recorded.</p>\n";
    return;
  }
  constexpr double kWidth = 820, kHeight = 480;
  out << "<svg id=\"trend\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth
      << "\" height=\"" << kHeight << "\" viewBox=\"0 0 " << kWidth << " " << kHeight
      << "\" role=\"img\" aria-label=\"p50, p99 and rps of the last runs\">\n";
  write_trend_panel(out, trend.points, 20, 200, "latency (ms)",
                    {{"p50", &TrendPoint::p50_ms}, {"p99", &TrendPoint::p99_ms}});
  write_trend_panel(out, trend.points, 270, 150, "rps", {{"rps", &TrendPoint::rps}});
  // The legend: what each line and mark is.
  const double y = kHeight - 12;
  out << "<line class=\"trend p50\" x1=\"72\" x2=\"96\" y1=\"" << y - 4 << "\" y2=\"" << y - 4
      << "\"/><text class=\"tick\" x=\"100\" y=\"" << y << "\">p50</text>"
      << "<line class=\"trend p99\" x1=\"140\" x2=\"164\" y1=\"" << y - 4 << "\" y2=\"" << y - 4
      << "\"/><text class=\"tick\" x=\"168\" y=\"" << y << "\">p99</text>"
      << "<line class=\"trend rps\" x1=\"208\" x2=\"232\" y1=\"" << y - 4 << "\" y2=\"" << y - 4
      << "\"/><text class=\"tick\" x=\"236\" y=\"" << y << "\">rps</text>"
      << "<circle class=\"point this-run\" cx=\"290\" cy=\"" << y - 4
      << "\" r=\"6\"/><text class=\"tick\" x=\"300\" y=\"" << y << "\">this run</text>"
      << "<circle class=\"point baseline\" cx=\"370\" cy=\"" << y - 4
      << "\" r=\"6\"/><text class=\"tick\" x=\"380\" y=\"" << y << "\">baseline</text>\n</svg>\n";
  out << "<p>The last " << trend.points.size() << " run" << (trend.points.size() == 1 ? "" : "s")
      << " of the test up to this one, from their LoadTestResult records, oldest first.</p>\n";
  if (!trend.baselines_not_shown.empty()) {
    out << "<p>Compared with, not shown (older than these runs, or gone):";
    for (const std::string& name : trend.baselines_not_shown) {
      out << " <code>" << html_escape(name) << "</code>";
    }
    out << ".</p>\n";
  }
  out << "<details><summary>Runs</summary>\n<table id=\"trend-runs\"><thead><tr><th>#</th>"
         "<th>run</th><th>revision</th><th>started</th><th>verdict</th><th>p50 ms</th>"
         "<th>p99 ms</th><th>rps</th><th>mark</th></tr></thead><tbody>\n";
  const auto cell = [](const std::optional<double>& value, int decimals) {
    return value ? report::grouped_fixed(*value, decimals) : std::string("-");
  };
  for (size_t i = 0; i < trend.points.size(); ++i) {
    const TrendPoint& p = trend.points[i];
    out << "<tr><td>" << i + 1 << "</td><td class=\"text\">" << html_escape(p.load_test)
        << "</td><td class=\"text\">" << html_escape(p.revision) << "</td><td class=\"text\">"
        << html_escape(p.started) << "</td><td class=\"text\">" << html_escape(p.verdict)
        << "</td><td>" << cell(p.p50_ms, 3) << "</td><td>" << cell(p.p99_ms, 3) << "</td><td>"
        << cell(p.rps, 1) << "</td><td class=\"text\">"
        << (p.this_run   ? "this run"
            : p.baseline ? "baseline"
                         : "")
        << "</td></tr>\n";
  }
  out << "</tbody></table>\n</details>\n";
}

void write_rows(std::ostream& out, const char* id, const char* label,
                const std::vector<SummaryRow>& rows) {
  out << "<table id=\"" << id << "\"><thead><tr><th>" << label
      << "</th><th>requests</th><th>rps</th><th>errors</th><th>error %</th><th>p50 ms</th>"
         "<th>p90 ms</th><th>p99 ms</th><th>max ms</th></tr></thead><tbody>\n";
  for (const SummaryRow& row : rows) {
    out << "<tr><td class=\"label\">" << html_escape(row.label.empty() ? "total" : row.label)
        << "</td><td>" << report::grouped(row.requests) << "</td><td>"
        << report::grouped_fixed(row.rps, 1) << "</td><td>" << report::grouped(row.failures)
        << "</td><td>" << report::fixed(row.error_rate * 100.0, 2) << "</td><td>"
        << ms(row, row.latency_ms.p50) << "</td><td>" << ms(row, row.latency_ms.p90) << "</td><td>"
        << ms(row, row.latency_ms.p99) << "</td><td>" << ms(row, row.latency_ms.max)
        << "</td></tr>\n";
  }
  out << "</tbody></table>\n";
}

void write_scenarios(std::ostream& out, const std::vector<ScenarioRow>& rows) {
  out << "<table id=\"scenarios\"><thead><tr><th>scenario</th><th>iterations</th><th>per s</th>"
         "<th>failed</th><th>failed %</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th>"
         "<th>max ms</th></tr></thead><tbody>\n";
  for (const ScenarioRow& row : rows) {
    const auto duration = [&](double value) {
      return row.duration_measured ? report::fixed(value, 3) : std::string("-");
    };
    out << "<tr><td class=\"label\">" << html_escape(row.name) << "</td><td>"
        << report::grouped(row.iterations) << "</td><td>"
        << report::grouped_fixed(row.iterations_per_second, 1) << "</td><td>"
        << report::grouped(row.failed) << "</td><td>" << report::fixed(row.failed_percent, 2)
        << "</td><td>" << duration(row.duration_ms.p50) << "</td><td>"
        << duration(row.duration_ms.p95) << "</td><td>" << duration(row.duration_ms.p99)
        << "</td><td>" << duration(row.duration_ms.max) << "</td></tr>\n";
  }
  out << "</tbody></table>\n";
}

// The one result: its summary, status codes and errors, and its latency curve.
void write_result(std::ostream& out, const GateReport& report) {
  out << "<h2>Result</h2>\n";
  if (report.has_result) {
    write_rows(out, "summary", "", {report.run});
    out << "<p>Status codes: ";
    if (report.status_codes.empty()) out << "no complete responses";
    bool first = true;
    for (const auto& [code, n] : report.status_codes) {
      out << (first ? "" : ", ") << "<code>" << code << "</code> " << report::grouped(n);
      first = false;
    }
    out << ". Errors: ";
    first = true;
    // The kinds every run can have, always; the others (an open model's,
    // HTTP/2's, a scenario's) when there were any.
    for (const ErrorKind kind : kAllErrorKinds) {
      const bool always = kind == ErrorKind::connect || kind == ErrorKind::timeout ||
                          kind == ErrorKind::read || kind == ErrorKind::write ||
                          kind == ErrorKind::status || kind == ErrorKind::length;
      if (!always && report.errors[kind] == 0) continue;
      out << (first ? "" : ", ") << to_string(kind) << " " << report::grouped(report.errors[kind]);
      first = false;
    }
    out << ".</p>\n";
  } else {
    out << "<p>No result was collected.</p>\n";
  }

  out << "<h2>Latency by percentile</h2>\n";
  std::vector<PercentilePoint> points;
  if (report.latency_us) points = percentile_distribution(*report.latency_us);
  const bool from_histogram = !points.empty();
  if (!from_histogram && report.has_result && report.run.latency_measured) {
    points = points_of_summary(report.run);
  }
  if (points.empty()) {
    out << "<p>No latency was recorded.</p>\n";
  } else {
    write_curve(out, report, points);
    out << "<p>"
        << (from_histogram ? "HdrHistogram percentile distribution" : "Summary percentiles")
        << " of " << report::grouped(report.run.requests)
        << " requests; x is 1/(1-percentile) on a log scale.</p>\n";
    out << "<details><summary>Percentile distribution</summary>\n<table "
           "id=\"percentile-distribution\"><thead><tr><th>value ms</th><th>percentile</th>"
           "<th>total count</th><th>1/(1-percentile)</th></tr></thead><tbody>\n";
    for (const PercentilePoint& p : points) {
      out << "<tr><td>" << report::fixed(p.value_ms, 3) << "</td><td>"
          << report::fixed(p.percentile / 100.0, 6) << "</td><td>" << p.count_at_or_below
          << "</td><td>" << (p.percentile >= 100 ? "-" : report::fixed(p.inverse, 2))
          << "</td></tr>\n";
    }
    out << "</tbody></table>\n</details>\n";
  }
}

void write_table(std::ostream& out, const char* id, const ExperimentTable& table) {
  out << "<table id=\"" << id << "\"><thead><tr>";
  for (const std::string& cell : table.header) out << "<th>" << html_escape(cell) << "</th>";
  out << "</tr></thead><tbody>\n";
  for (const std::vector<std::string>& row : table.rows) {
    out << "<tr>";
    for (size_t c = 0; c < row.size(); ++c) {
      out << (c == 0 ? "<td class=\"label\">" : "<td>") << html_escape(row[c]) << "</td>";
    }
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

// An experiment in place of the one result: the variants side by side, the
// differences with their intervals, the comparisons (Inconclusive is no pass).
void write_experiment(std::ostream& out, const ExperimentReport& experiment) {
  out << "<h2>Variants</h2>\n<p>" << html_escape(experiment_progress(experiment))
      << ", each variant's rounds merged.</p>\n";
  write_table(out, "variants", variants_table(experiment));
  if (const ExperimentTable differences = differences_table(experiment);
      !differences.rows.empty()) {
    out << "<h2>Differences</h2>\n<p>Each variant minus the base: the mean per round, its 95% "
           "interval and the change relative to the base.</p>\n";
    write_table(out, "differences", differences);
  }
  if (experiment.comparisons.empty()) return;
  out << "<h2>Comparisons</h2>\n<table id=\"comparisons\"><thead><tr><th>comparison</th>"
         "<th>margin</th><th>limit</th><th>outcome</th></tr></thead><tbody>\n";
  for (const api::ComparisonRow& c : experiment.comparisons) {
    std::string outcome = c.outcome;
    if (c.rounds_needed) {
      outcome += " (about " + std::to_string(*c.rounds_needed) + " rounds would decide)";
    }
    out << "<tr><td class=\"text\"><code>" << html_escape(c.expression) << "</code></td><td>"
        << html_escape(comparison_margin_text(c)) << "</td><td class=\"text\">"
        << html_escape(comparison_limit(c.expression)) << "</td><td class=\""
        << (comparison_passed(c) ? "ok" : "miss") << "\">" << html_escape(outcome)
        << "</td></tr>\n";
  }
  out << "</tbody></table>\n";
}

constexpr const char* kStyle =
    R"(body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:900px;color:#1f2328;padding:0 16px}
h1{font-size:22px;margin:0 0 8px}h2{font-size:17px;margin:28px 0 10px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
code{font-family:ui-monospace,monospace;background:#f3f4f6;padding:1px 4px;border-radius:4px}
header{border-radius:8px;padding:16px 20px;border:1px solid #d0d7de}
header.pass{background:#dafbe1;border-color:#4ac26b}header.fail,header.failed{background:#ffebe9;border-color:#ff8182}
header.none,header.running{background:#f6f8fa}
.badge{display:inline-block;font-weight:700;font-size:15px;padding:2px 10px;border-radius:12px;background:#fff;border:1px solid #d0d7de}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:12px 0 0}dl.facts dt{color:#57606a}dl.facts dd{margin:0}
table{border-collapse:collapse;font-size:14px;margin:4px 0}th,td{padding:4px 10px;border-bottom:1px solid #eaeef2;text-align:right}
th{background:#f6f8fa}td.label,th:first-child,td.text{text-align:left}
td.ok{color:#1a7f37;font-weight:700}td.miss{color:#cf222e;font-weight:700}
svg{background:#fff;max-width:100%;height:auto}.plot{fill:#fff;stroke:#8c959f}.grid{stroke:#eaeef2}
.tick{font-size:12px;fill:#57606a}.axis{font-size:13px;fill:#1f2328}
.curve{fill:none;stroke:#0969da;stroke-width:2.5}.limit{stroke-width:1.5;stroke-dasharray:5 4}
line.limit.pass{stroke:#1a7f37}line.limit.fail{stroke:#cf222e}circle.limit.pass{fill:#1a7f37}circle.limit.fail{fill:#cf222e}
.limit-label{font-size:12px;fill:#1f2328}
.trend{fill:none;stroke-width:2}.trend.p50{stroke:#0969da}.trend.p99{stroke:#bc4c00}.trend.rps{stroke:#1a7f37}
.point{fill:#fff;stroke-width:2}.point.p50{stroke:#0969da}.point.p99{stroke:#bc4c00}.point.rps{stroke:#1a7f37}
.point.this-run{fill:#1f2328;stroke:#1f2328}.point.baseline{fill:#fff;stroke:#8250df;stroke-width:3}
footer{margin-top:28px;font-size:12px;color:#57606a}
)";

}  // namespace

void write_html_report(std::ostream& out, const GateReport& report) {
  const std::optional<api::Verdict> verdict = report.verdict_value();
  const std::string state = report.failed()                 ? "failed"
                            : !report.finished()            ? "running"
                            : verdict == api::Verdict::Pass ? "pass"
                            : verdict == api::Verdict::Fail ? "fail"
                                                            : "none";
  const std::string badge = report.failed()                 ? "run failed"
                            : !report.finished()            ? report.phase
                            : verdict == api::Verdict::None ? "no gate"
                                                            : report.verdict;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>kubeload " << html_escape(report.title) << ": " << html_escape(badge)
      << "</title>\n<style>\n"
      << kStyle << "</style>\n</head>\n<body>\n";
  out << "<header id=\"verdict\" class=\"" << state << "\">\n<h1>kubeload <code>"
      << html_escape(report.title) << "</code> <span class=\"badge\">" << html_escape(badge)
      << "</span></h1>\n";
  if (!report.message.empty()) out << "<p>" << html_escape(report.message) << "</p>\n";
  if (const std::string note = shared_target_note(report.shared_with); !note.empty()) {
    out << "<p id=\"shared-target\"><strong>" << html_escape(note) << "</strong></p>\n";
  }
  if (const std::string note = generator_saturated_note(report.generator_saturated);
      !note.empty()) {
    out << "<p id=\"generator-saturated\"><strong>" << html_escape(note) << "</strong></p>\n";
  }
  out << "<dl class=\"facts\">";
  const std::pair<const char*, std::string> facts[] = {
      {"target", report.target},   {"test", report.test},       {"phase", report.phase},
      {"verdict", report.verdict}, {"started", report.started}, {"completed", report.completed}};
  for (const auto& [name, value] : facts) {
    if (!value.empty()) out << "<dt>" << name << "</dt><dd>" << html_escape(value) << "</dd>";
  }
  out << "</dl>\n</header>\n";

  if (report.experiment && !report.has_result) {
    write_experiment(out, *report.experiment);
  } else if (report.search && !report.has_result) {
    out << "<h2>Capacity search</h2>\n<p>" << html_escape(search_outcome(*report.search))
        << "</p>\n";
    if (!report.search->steps.empty())
      write_table(out, "search-steps", search_table(*report.search));
  } else {
    write_result(out, report);
  }

  if (!report.thresholds.empty()) {
    out << "<h2>Thresholds</h2>\n<table id=\"thresholds\"><thead><tr><th>threshold</th>"
           "<th>observed</th><th>limit</th><th>result</th></tr></thead><tbody>\n";
    for (const ThresholdRow& t : report.thresholds) {
      out << "<tr><td class=\"text\"><code>" << html_escape(t.expression) << "</code></td><td>"
          << html_escape(t.observed) << "</td><td>" << html_escape(t.limit) << "</td><td class=\""
          << (t.passed ? "ok\">pass" : "miss\">FAIL") << "</td></tr>\n";
    }
    out << "</tbody></table>\n";
  }
  if (report.baseline) {
    const BaselineReport& b = *report.baseline;
    out << "<h2>Baseline";
    if (!b.load_test_name.empty()) out << " <code>" << html_escape(b.load_test_name) << "</code>";
    out << ": " << (b.passed ? "passed" : "failed") << "</h2>\n";
    if (!b.message.empty()) out << "<p>" << html_escape(b.message) << "</p>\n";
    if (!b.checks.empty()) {
      out << "<table id=\"baseline\"><thead><tr><th>metric</th><th>change</th>"
             "<th>max regression</th><th>result</th></tr></thead><tbody>\n";
      for (const BaselineCheck& c : b.checks) {
        out << "<tr><td class=\"text\">" << html_escape(c.metric) << "</td><td>"
            << html_escape(c.delta) << "</td><td>"
            << (c.max_regression_percent ? report::compact_number(*c.max_regression_percent) + "%"
                                         : std::string("-"))
            << "</td><td class=\"" << (c.passed ? "ok\">pass" : "miss\">FAIL") << "</td></tr>\n";
      }
      out << "</tbody></table>\n";
    }
  }
  if (report.trend) write_trend(out, *report.trend);
  if (!report.stages.empty()) {
    out << "<h2>Stages</h2>\n";
    write_rows(out, "stages", "stage", report.stages);
  }
  if (!report.scenarios.empty()) {
    out << "<h2>Scenarios</h2>\n";
    write_scenarios(out, report.scenarios);
  }
  // A scenario run lists its steps even when there is one.
  if (report.requests.size() > 1 || (!report.scenarios.empty() && !report.requests.empty())) {
    out << (report.scenarios.empty() ? "<h2>Requests by name</h2>\n" : "<h2>Steps</h2>\n");
    write_rows(out, "requests", report.scenarios.empty() ? "request" : "step", report.requests);
  }
  out << "<footer>Generated by kubeload from ";
  out << (report.finished() ? "the final status" : "a status taken while the run was going");
  out << ".</footer>\n</body>\n</html>\n";
}

}  // namespace kubeload::loadgen
