// The gate as JUnit XML, the format CI test tabs read (GitHub, GitLab,
// Jenkins, Tekton dashboards): one test case for the run itself, one per
// threshold, one per comparison of an experiment's variants and one per
// baseline delta. A miss is a <failure> carrying what
// was observed and the limit; a run that did not finish is an <error>, so a
// suite is never green without a finished run behind it.
//
// CI systems key a test by its names (GitLab by classname and name, Jenkins
// by suite, class and name) to show its history and what a merge request
// changed. So every name here is the test's identity, the same for every run
// of it: the suite and classname are the test (GateReport::identity), a case
// is "run", a threshold's expression or "baseline <metric>". What differs
// per run (the generated LoadTest name, the baseline run compared with) goes
// into properties and the cases' text. tests/reports/junit.xsd is the
// format this follows, checked by the reports tier.

#include <map>
#include <string>
#include <string_view>

#include "kubeload/comparison.hpp"
#include "kubeload/names.hpp"
#include "reports/escape.hpp"
#include "reports/gate_report.hpp"
#include "reports/report_writers.hpp"

namespace kubeload::loadgen {
namespace {

// The property naming the run a report is of (`kubectl kubeload report NAME`
// shows it again), beside kubeload.dev/test, the identity the names follow.
constexpr std::string_view kRunProperty = "kubeload.dev/run";

struct Case {
  std::string classname;
  std::string name;
  enum class Outcome { passed, failure, error } outcome = Outcome::passed;
  std::string type;     // failure/error type
  std::string message;  // one line
  std::string detail;   // element text
};

std::string summary_line(const GateReport& report) {
  const SummaryRow& run = report.run;
  std::string line = report::grouped(run.requests) + " requests, " +
                     report::grouped_fixed(run.rps, 1) + "/s, " + report::grouped(run.failures) +
                     " errors (" + report::fixed(run.error_rate * 100.0, 2) + "%)";
  if (run.latency_measured) {
    line += ", p50 " + report::fixed(run.latency_ms.p50, 3) + " ms, p90 " +
            report::fixed(run.latency_ms.p90, 3) + " ms, p99 " +
            report::fixed(run.latency_ms.p99, 3) + " ms";
  }
  // A scenario run: a line per scenario.
  for (const ScenarioRow& s : report.scenarios) {
    line += "\nscenario " + s.name + ": " + report::grouped(s.iterations) + " iterations, " +
            report::grouped(s.failed) + " failed (" + report::fixed(s.failed_percent, 2) + "%)";
    if (s.duration_measured) {
      line += ", duration p50 " + report::fixed(s.duration_ms.p50, 3) + " ms, p95 " +
              report::fixed(s.duration_ms.p95, 3) + " ms, p99 " +
              report::fixed(s.duration_ms.p99, 3) + " ms, max " +
              report::fixed(s.duration_ms.max, 3) + " ms";
    }
  }
  return line;
}

// An experiment's run case: its rounds and each variant's numbers.
std::string experiment_line(const ExperimentReport& experiment) {
  std::string line = experiment_progress(experiment);
  for (const VariantColumn& v : experiment.variants) {
    line += "\n" + v.name + " (" + v.target + "): ";
    if (!v.has_result) {
      line += "no result";
      continue;
    }
    line += report::grouped(v.row.requests) + " requests, " + report::grouped_fixed(v.row.rps, 1) +
            "/s, " + report::fixed(v.row.error_rate * 100.0, 2) + "% errors";
    if (v.row.latency_measured) {
      line += ", p50 " + report::fixed(v.row.latency_ms.p50, 3) + " ms, p99 " +
              report::fixed(v.row.latency_ms.p99, 3) + " ms";
    }
  }
  for (const api::MetricDifference& d : experiment.differences) {
    line += "\n" + d.variant + " - " + d.reference + " " + d.metric + ": " + difference_text(d);
  }
  return line;
}

}  // namespace

void write_junit_report(std::ostream& out, const GateReport& report) {
  std::vector<Case> cases;
  Case run{report.identity, "run", Case::Outcome::passed, "", "", ""};
  if (report.failed()) {
    run.outcome = Case::Outcome::error;
    run.type = report.reason.empty() ? report.phase : report.reason;
    run.message = "the run failed: " + report.message;
  } else if (!report.finished()) {
    run.outcome = Case::Outcome::error;
    run.type = "NotFinished";
    run.message = "the run has not finished (phase " + report.phase + ")";
  }
  if (report.has_result) {
    run.detail = report.title + ": " + summary_line(report);
  } else if (report.experiment) {
    run.detail = report.title + ": " + experiment_line(*report.experiment);
  } else if (report.search) {
    run.detail = report.title + ": capacity search, " + search_outcome(*report.search);
    for (const std::vector<std::string>& row : search_table(*report.search).rows) {
      run.detail += "\nstep " + row[0] + ": " + row[1] + " " + row[2] + ", " + row[3] + "/s, p99 " +
                    row[6] + " ms, errors " + row[7] + "%";
      if (row.back() != "-") run.detail += ", failed " + row.back();
    }
  } else {
    run.detail = report.title + ": no result";
  }
  if (const std::string note = shared_target_note(report.shared_with); !note.empty()) {
    run.detail += "\n" + note;
  }
  if (const std::string note = generator_saturated_note(report.generator_saturated);
      !note.empty()) {
    run.detail += "\n" + note;
  }
  cases.push_back(run);

  for (const ThresholdRow& t : report.thresholds) {
    Case c{report.identity, t.expression, Case::Outcome::passed, "", "", ""};
    c.detail = "observed " + t.observed + ", limit " + t.limit;
    if (!t.passed) {
      c.outcome = Case::Outcome::failure;
      c.type = "ThresholdMissed";
      c.message = t.expression + ": observed " + t.observed + ", limit " + t.limit;
    }
    cases.push_back(c);
  }
  // One case per comparison, named by its expression: Fail and Inconclusive
  // are failures (an interval that cannot decide passes no gate).
  if (report.experiment) {
    for (const api::ComparisonRow& comparison : report.experiment->comparisons) {
      Case c{report.identity,   comparison.expression, Case::Outcome::passed, "", "",
             comparison.message};
      if (!comparison_passed(comparison)) {
        c.outcome = Case::Outcome::failure;
        c.type = comparison.outcome == to_string(ComparisonOutcome::Inconclusive)
                     ? api::name(api::Reason::Inconclusive)
                     : api::name(api::Reason::ComparisonFailed);
        const std::string limit = comparison_limit(comparison.expression);
        c.message = comparison.expression + ": " + comparison.outcome + ", observed margin " +
                    comparison_margin_text(comparison) + ", limit " + (limit.empty() ? "-" : limit);
        if (comparison.rounds_needed) {
          c.message +=
              "; about " + std::to_string(*comparison.rounds_needed) + " rounds would decide";
        }
      }
      cases.push_back(c);
    }
  }
  if (report.baseline) {
    const BaselineReport& b = *report.baseline;
    const std::string against = b.load_test_name.empty() ? "the baseline" : b.load_test_name;
    bool any_failed = false;
    for (const BaselineCheck& check : b.checks) {
      Case c{report.identity, "baseline " + check.metric, Case::Outcome::passed, "", "", ""};
      const std::string limit =
          check.max_regression_percent
              ? "max regression " + report::compact_number(*check.max_regression_percent) + "%"
              : "no limit";
      c.detail = "change " + check.delta + " against " + against + ", " + limit;
      if (!check.passed) {
        any_failed = true;
        c.outcome = Case::Outcome::failure;
        c.type = "BaselineRegressed";
        c.message = check.metric + ": observed change " + check.delta + ", limit " + limit;
      }
      cases.push_back(c);
    }
    // A baseline that failed without a delta to blame (the baseline run was
    // not found) still fails the suite.
    if (!b.passed && !any_failed) {
      cases.push_back(Case{report.identity, "baseline", Case::Outcome::failure, "BaselineFailed",
                           b.message.empty() ? "baseline failed" : b.message, b.message});
    }
  }

  // GitLab keeps only the first case of a name: a repeated one (the spec may
  // list an expression twice) is numbered in order, the same every run.
  std::map<std::string, int> seen;
  for (Case& c : cases) {
    if (const int n = ++seen[c.name]; n > 1) c.name += " (" + std::to_string(n) + ")";
  }

  size_t failures = 0, errors = 0;
  for (const Case& c : cases) {
    if (c.outcome == Case::Outcome::failure) ++failures;
    if (c.outcome == Case::Outcome::error) ++errors;
  }
  const std::string time = report::fixed(report.run.duration_seconds, 3);
  const std::string counts = "tests=\"" + std::to_string(cases.size()) + "\" failures=\"" +
                             std::to_string(failures) + "\" errors=\"" + std::to_string(errors) +
                             "\" time=\"" + time + "\"";
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<testsuites name=\"kubeload\" " << counts << ">\n";
  out << "  <testsuite name=\"" << xml_escape(report.identity) << "\" " << counts;
  if (!report.started.empty()) out << " timestamp=\"" << xml_escape(report.started) << "\"";
  out << ">\n";
  out << "    <properties>\n";
  std::string shared_with;
  for (const std::string& run_name : report.shared_with) {
    shared_with += (shared_with.empty() ? "" : ",") + run_name;
  }
  const std::pair<std::string, std::string> properties[] = {
      {std::string(kTestLabel), report.identity},
      {std::string(kRunProperty), report.run_name},
      {"namespace", report.namespace_},
      {"target", report.target},
      {"phase", report.phase},
      {"verdict", report.verdict},
      {"reason", report.reason},
      {"message", report.message},
      {"baseline", report.baseline ? report.baseline->load_test_name : ""},
      {"sharedWith", shared_with}};
  for (const auto& [name, value] : properties) {
    if (value.empty()) continue;
    out << "      <property name=\"" << name << "\" value=\"" << xml_escape(value) << "\"/>\n";
  }
  out << "    </properties>\n";
  for (const Case& c : cases) {
    // The run's case (the first) carries the run's duration.
    out << "    <testcase classname=\"" << xml_escape(c.classname) << "\" name=\""
        << xml_escape(c.name) << "\" time=\"" << (&c == &cases.front() ? time : "0") << "\">\n";
    if (c.outcome != Case::Outcome::passed) {
      const char* element = c.outcome == Case::Outcome::failure ? "failure" : "error";
      out << "      <" << element << " type=\"" << xml_escape(c.type) << "\" message=\""
          << xml_escape(c.message) << "\">" << xml_escape(c.detail) << "</" << element << ">\n";
    } else {
      out << "      <system-out>" << xml_escape(c.detail) << "</system-out>\n";
    }
    out << "    </testcase>\n";
  }
  out << "  </testsuite>\n";
  out << "</testsuites>\n";
}

}  // namespace kubeload::loadgen
