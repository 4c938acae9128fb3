#pragma once
// Reports are pure functions of a finished run: the merged RunResult plus the
// few facts about the run that are not numbers (target, concurrency, ...).
// Each writer reads only these; none does I/O beyond the stream it is given.

#include <ostream>

#include "kubeload/result.hpp"
#include "reports/run_info.hpp"

namespace kubeload::loadgen {

// Writes the report of the whole run in the given format (a gate format
// without thresholds: verdict None).
void write_report(std::ostream& out, ReportFormat format, const RunInfo& info,
                  const RunResult& run);

}  // namespace kubeload::loadgen
