#pragma once
// The worker protocol: every document the operator and a worker exchange
// (docs/architecture.md, "The worker protocol"), each with exactly one
// encoding and one decoding. The worker writes them, the operator reads
// them; both read fields, never keys. Decoding throws std::invalid_argument
// naming the bad field (the messages of kubeload/result.hpp's decoder).
//
//   POST /start?at=<unix ms>   -> StartAnswer
//   GET /result                -> while running a ProgressDocument, after the
//                                 run the final result: ResultHead's fields
//                                 and the RunResult's exchange encoding
//                                 (ResultDocumentWriter). Read as a
//                                 ResultDocument either way.
//   POST /finish               -> FinishAnswer
//   the termination message    -> TerminationSummary (a few headline numbers)

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "kubeload/generator_cpu.hpp"
#include "kubeload/result.hpp"

namespace kubeload::api {

// ---- POST /start

// The worker's answer to POST /start (202): it took the start barrier (or
// already had one; the call is idempotent).
struct StartAnswer {
  bool started = true;
  uint32_t worker = 0;      // the worker's index
  int64_t start_at_ms = 0;  // the barrier it took (unix ms); 0 for "at once"
  bool operator==(const StartAnswer&) const = default;
};
nlohmann::json to_json(const StartAnswer& answer);
StartAnswer start_answer_from_json(const nlohmann::json& in);

// ---- GET /result

// The worker's own fields of every /result document, beside the RunResult
// encoding.
struct ResultHead {
  uint32_t worker = 0;       // the worker's index
  std::string loadtest_uid;  // the LoadTest's metadata.uid the worker runs for
  // The wall-clock start of the measured run (unix ms); unset before it
  // started (written as 0; 0 or less reads as unset).
  std::optional<int64_t> started_at_ms;
  std::string error;  // the worker's own report of a run that broke off; "" for none
  // The worker's wall clock when it answered (unix ms), in the documents of
  // a run not finished yet: the workers start at a wall-clock barrier, so the
  // operator checks that their clocks agree with its own. Unset in a final
  // document (the same on every read) and from workers before it was written.
  std::optional<int64_t> clock_ms;
  // What the worker used of its CPU over the measured run (its cgroup's
  // counters against its quota, or its own CPU time): in a final document
  // only; unset from workers before it was written, or when it could not be
  // read.
  std::optional<GeneratorCpu> cpu = std::nullopt;
  bool operator==(const ResultHead&) const = default;
};
// The head as a JSON object of its top-level fields: ResultDocumentWriter's
// `head` for the final document, and part of to_json(ProgressDocument).
nlohmann::json to_json(const ResultHead& head);
// Reads the head's fields of a /result document (the rest is not looked at):
// a reader checks whose run a document is before reading its result.
ResultHead result_head_from_json(const nlohmann::json& document);

// A /result document as the operator reads it: final (run.finished, with
// histograms) or partial (counters only, run.finished false).
struct ResultDocument {
  ResultHead head;
  RunResult run;
};
// The whole final document at once: what ResultDocumentWriter(run,
// to_json(head)) writes, parsed (its histograms uncompressed).
nlohmann::json to_json(const ResultDocument& document);
ResultDocument result_document_from_json(const nlohmann::json& in);

// The /result document while the run is going: the counters of the counted
// stages so far (no histograms, no rows; those arrive with the final
// result) and the stage it is in. Read by the operator as a ResultDocument
// (run.finished false).
struct ProgressDocument {
  ResultHead head;
  uint64_t warmup_requests = 0;
  Result result;   // counters only: its histograms are not written
  int stage = -1;  // the stage being run; -1 during the warm-up
};
nlohmann::json to_json(const ProgressDocument& progress);
ProgressDocument progress_document_from_json(const nlohmann::json& in);

// A worker's CPU use as the protocol and the kept results write it:
// {"seconds", "windowSeconds", "cores", "utilization", "limitCores" when
// there is a limit}.
nlohmann::json generator_cpu_json(const GeneratorCpu& cpu);
// Reads it back at `path` ("cpu", "workers.3.cpu"): every number must be
// finite and not negative, and "cores" above 0; throws std::invalid_argument
// naming the field otherwise.
GeneratorCpu generator_cpu_from_json(const nlohmann::json& in, const std::string& path);

// ---- POST /finish

// The worker's answer to POST /finish (200): the operator has the final
// result, the worker may exit.
struct FinishAnswer {
  bool finished = true;
  bool operator==(const FinishAnswer&) const = default;
};
nlohmann::json to_json(const FinishAnswer& answer);
FinishAnswer finish_answer_from_json(const nlohmann::json& in);

// ---- the termination message

// What a worker writes to its termination log when its run ends: a few
// headline numbers (a termination message is limited to 4 KiB), shown in the
// pod's status.
struct TerminationSummary {
  uint64_t requests = 0;
  uint64_t failures = 0;
  double rps = 0;
  double duration_seconds = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
  uint64_t warmup_requests = 0;
  uint64_t bytes_received = 0;
  std::string error;  // "" for none

  // The numbers of `run`, and why it broke off.
  static TerminationSummary of(const RunResult& run, const std::string& error);
  bool operator==(const TerminationSummary&) const = default;
};
nlohmann::json to_json(const TerminationSummary& summary);
TerminationSummary termination_summary_from_json(const nlohmann::json& in);

}  // namespace kubeload::api
