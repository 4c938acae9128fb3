// The operator's result collection at scale (issue 12), measured: one pass
// over N workers' GET /result documents through the operator's own code
// (WorkerClient, collected_result_from_json, WorkerResults::fold) and the
// status's result document built from the merge. Prints one JSON line.
//
//   operator_merge_bench --addresses FILE [--hold-all]   fetch from workers
//   operator_merge_bench --document FILE --workers N [--hold-all]
//
// --addresses: one IP:PORT per line (fake or real workers on loopback).
// --document: one recorded /result document, read as N workers' documents
// (each parsed anew as WorkerClient parses a fetched one: fetchSeconds is
// the parse alone), for a measurement without any server.
// --hold-all: keep every worker's result and merge them at the end, as the
// operator did before the running merge, for comparison.
// --calls N: fetch as the controller's ask_workers does, N calls in flight
// (for_each_bounded), each answer digested and taken into the pass as it
// arrives (digest_answer, take_answer); without it, one call at a time, each
// folded as it arrives. --shape STAGES,REQUESTS: the spec the documents
// were recorded with, whose api::result_limits the calls are read within
// (default 1,1).

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kubeload/api/result_limits.hpp"
#include "kubeload/result.hpp"
#include "operator/bounded_parallel.hpp"
#include "operator/byte_budget.hpp"
#include "operator/config.hpp"
#include "operator/reconcile_plan.hpp"
#include "operator/worker_client.hpp"
#include "operator/worker_result_parser.hpp"
#include "operator/worker_results.hpp"

namespace {

using kubeload::RunResult;
using kubeload::controller::CollectedResult;
using kubeload::controller::WorkerAddress;
using kubeload::controller::WorkerClient;
using kubeload::controller::WorkerResults;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kUsage =
    "usage: operator_merge_bench --addresses FILE [--hold-all] [--calls N] [--shape S,R]\n"
    "       operator_merge_bench --document FILE --workers N [--hold-all]\n";

// From /proc/self/status: VmRSS now, VmHWM the peak (KiB).
int64_t proc_status_kib(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1));
  }
  throw std::runtime_error("no " + key + " in /proc/self/status");
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<WorkerAddress> read_addresses(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::vector<WorkerAddress> addresses;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto colon = line.rfind(':');
    if (colon == std::string::npos) throw std::runtime_error("not IP:PORT: \"" + line + "\"");
    addresses.push_back(
        // scripts/fake-worker serves without a run token.
        {line.substr(0, colon), static_cast<uint16_t>(std::stoul(line.substr(colon + 1))), ""});
  }
  return addresses;
}

size_t histogram_bytes(const RunResult& run) {
  size_t bytes = 0;
  const auto add = [&](const kubeload::Result& r) {
    bytes +=
        r.latency.allocated_bytes() + r.connect.allocated_bytes() + r.waiting.allocated_bytes();
  };
  add(run.result);
  for (const auto& stage : run.stages) add(stage.result);
  for (const auto& named : run.request_results) add(named.result);
  return bytes;
}

int run(const std::vector<std::string>& args) {
  std::string addresses_file, document_file;
  uint32_t workers = 0;
  bool hold_all = false;
  uint32_t calls = 0;
  kubeload::LoadTestSpec shape;
  shape.load.stages.resize(1);
  shape.requests.resize(1);
  for (size_t i = 0; i < args.size(); ++i) {
    const auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw std::invalid_argument(args[i] + " needs a value");
      return args[++i];
    };
    if (args[i] == "--addresses") {
      addresses_file = value();
    } else if (args[i] == "--document") {
      document_file = value();
    } else if (args[i] == "--workers") {
      workers = static_cast<uint32_t>(std::stoul(value()));
    } else if (args[i] == "--calls") {
      calls = static_cast<uint32_t>(std::stoul(value()));
    } else if (args[i] == "--shape") {
      const std::string text = value();
      const auto comma = text.find(',');
      if (comma == std::string::npos) throw std::invalid_argument("--shape: STAGES,REQUESTS");
      shape.load.stages.resize(std::stoul(text.substr(0, comma)));
      shape.requests.resize(std::stoul(text.substr(comma + 1)));
    } else if (args[i] == "--hold-all") {
      hold_all = true;
    } else {
      throw std::invalid_argument("unknown argument \"" + args[i] + "\"");
    }
  }
  std::vector<WorkerAddress> addresses;
  std::string document_text;
  if (!addresses_file.empty()) {
    addresses = read_addresses(addresses_file);
    workers = static_cast<uint32_t>(addresses.size());
  } else if (!document_file.empty() && workers > 0) {
    std::ifstream in(document_file);
    if (!in) throw std::runtime_error("cannot read " + document_file);
    std::ostringstream text;
    text << in.rdbuf();
    document_text = text.str();
  } else {
    throw std::invalid_argument(std::string(kUsage));
  }

  const int64_t rss_before_kib = proc_status_kib("VmRSS");
  const WorkerClient client(std::chrono::seconds(10));
  const kubeload::controller::WorkerResultParser parser;
  // Within the limits of the documents' spec, as the operator reads them.
  const kubeload::api::ResultLimits limits = kubeload::api::result_limits(shape);
  WorkerResults results(workers);
  std::vector<CollectedResult> held;
  double fetch_seconds = 0, parse_seconds = 0, merge_seconds = 0;
  uint32_t failed = 0;
  const Clock::time_point pass_start = Clock::now();
  const bool controller_pass = calls > 0 && !addresses.empty();
  if (controller_pass) {
    // The recorded documents name no run: the pass's uid is empty too.
    kubeload::controller::PassAnswers pass;
    pass.finals = WorkerResults(workers);
    std::mutex taking;
    const Clock::time_point start = Clock::now();
    // Within the operator's default budget, as its pass reads them.
    kubeload::controller::ByteBudget budget(
        kubeload::controller::OperatorConfig{}.worker_result_budget_bytes);
    kubeload::controller::for_each_bounded(workers, calls, [&](std::size_t i) {
      std::string error;
      auto lease = budget.reserve(kubeload::controller::kResultCallBytes);
      std::optional<nlohmann::json> document =
          client.result(addresses[i], limits, error, nullptr, {}, &lease);
      auto digested = kubeload::controller::digest_answer(pass.uid, document, std::move(error));
      document.reset();
      std::lock_guard lock(taking);
      kubeload::controller::take_answer(pass, static_cast<uint32_t>(i), std::move(digested));
    });
    fetch_seconds = seconds_since(start);
    for (const auto& [index, answer] : pass.by_worker) failed += answer.folded ? 0 : 1;
    results = std::move(pass.finals);
  }
  for (uint32_t i = 0; i < workers && !controller_pass; ++i) {
    Clock::time_point start = Clock::now();
    std::optional<nlohmann::json> document;
    if (addresses.empty()) {
      kubeload::api::BoundedParse parsed = parser.parse(document_text, limits);
      if (!parsed.document) throw std::runtime_error("--document: " + parsed.problem);
      document = std::move(parsed.document);
      (*document)["worker"] = i;
    } else {
      std::string error;
      document = client.result(addresses[i], limits, error);
      if (!document) {
        std::cerr << error << "\n";
        ++failed;
        continue;
      }
    }
    fetch_seconds += seconds_since(start);
    start = Clock::now();
    CollectedResult collected = kubeload::controller::collected_result_from_json(*document);
    document.reset();
    parse_seconds += seconds_since(start);
    start = Clock::now();
    if (hold_all) {
      held.push_back(std::move(collected));
    } else if (!results.fold(i, std::move(collected))) {
      ++failed;
    }
    merge_seconds += seconds_since(start);
  }
  Clock::time_point start = Clock::now();
  std::optional<RunResult> held_merge;
  for (const CollectedResult& one : held) {
    if (!held_merge) {
      held_merge = one.run;
    } else {
      held_merge->merge(one.run);
    }
  }
  merge_seconds += seconds_since(start);
  const RunResult& merged = hold_all ? *held_merge : *results.merged();
  start = Clock::now();
  const std::string status_result = kubeload::to_json(merged, false).dump();
  nlohmann::json with_histograms;
  kubeload::to_json(with_histograms, merged.result, true);
  const double status_seconds = seconds_since(start);
  const double pass_seconds = seconds_since(pass_start);

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const nlohmann::json report = {
      {"workers", workers},
      {"mode", hold_all ? "hold-all" : "running-merge"},
      {"callsInFlight", calls},
      {"source", addresses.empty() ? "document" : "http"},
      {"stages", merged.stages.size()},
      {"requestResults", merged.request_results.size()},
      {"requests", merged.result.requests},
      {"failed", failed},
      {"rssBeforeKiB", rss_before_kib},
      {"peakRssKiB", proc_status_kib("VmHWM")},
      {"maxRssKiB", usage.ru_maxrss},
      {"mergedHistogramBytes", histogram_bytes(merged)},
      {"fetchSeconds", fetch_seconds},
      {"parseSeconds", parse_seconds},
      {"mergeSeconds", merge_seconds},
      {"statusSeconds", status_seconds},
      {"passSeconds", pass_seconds},
      {"statusResultBytes", status_result.size() + with_histograms.dump().size()}};
  std::cout << report.dump() << "\n";
  return failed == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::exception& e) {
    std::cerr << "operator_merge_bench: " << e.what() << "\n";
    return 2;
  }
}
