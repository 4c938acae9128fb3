#include "reports/run_info.hpp"

namespace kubeload::loadgen {

std::optional<ReportFormat> parse_report_format(std::string_view name) {
  if (name == "text") return ReportFormat::text;
  if (name == "ab") return ReportFormat::ab;
  if (name == "jmeter") return ReportFormat::jmeter;
  if (name == "json") return ReportFormat::json;
  if (name == "junit") return ReportFormat::junit;
  if (name == "markdown") return ReportFormat::markdown;
  if (name == "html") return ReportFormat::html;
  return std::nullopt;
}

}  // namespace kubeload::loadgen
