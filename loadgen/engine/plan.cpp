#include "loadgen/engine/plan.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "kubeload/text.hpp"
#include "kubeload/url.hpp"

namespace kubeload::loadgen {
namespace {

bool header_is(const std::string& name, std::string_view wanted) {
  return lowercase(name) == wanted;
}

}  // namespace

std::string Target::host_header() const {
  const bool default_port = (scheme == "http" && port == 80) || (scheme == "https" && port == 443);
  const bool ipv6 = host.find(':') != std::string::npos;
  std::string h = ipv6 ? "[" + host + "]" : host;
  return default_port ? h : h + ":" + std::to_string(port);
}

std::optional<Target> parse_target(std::string_view url, std::string& error) {
  auto parsed = parse_http_url(url);
  if (const auto* problem = std::get_if<std::string>(&parsed)) {
    error = "target URL: " + *problem;
    return std::nullopt;
  }
  HttpUrl& parts = std::get<HttpUrl>(parsed);
  Target t;
  t.url = std::string(url);
  t.scheme = std::move(parts.scheme);
  t.host = std::move(parts.host);
  t.port = parts.port;
  t.path = std::move(parts.target);
  return t;
}

bool RequestTemplate::is_success_status(int status) const noexcept {
  if (status < 0 || status >= static_cast<int>(expected_status.size())) return false;
  if (expected_status.none()) return status >= 200 && status < 400;
  return expected_status.test(static_cast<size_t>(status));
}

std::string standard_header_lines(const Target& target,
                                  const std::vector<std::pair<std::string, std::string>>& headers,
                                  bool keep_alive) {
  bool has_host = false, has_user_agent = false, has_accept = false;
  for (const auto& [header, value] : headers) {
    has_host = has_host || header_is(header, "host");
    has_user_agent = has_user_agent || header_is(header, "user-agent");
    has_accept = has_accept || header_is(header, "accept");
  }
  std::string lines;
  if (!has_host) lines += "Host: " + target.host_header() + "\r\n";
  if (!has_user_agent) lines += "User-Agent: kubeload-loadgen/0.1\r\n";
  if (!has_accept) lines += "Accept: */*\r\n";
  if (!keep_alive) lines += "Connection: close\r\n";
  return lines;
}

bool is_framing_header(std::string_view name) noexcept {
  const std::string lower = lowercase(name);
  return lower == "content-length" || lower == "connection";
}

RequestTemplate make_request(const Target& target, std::string name, std::string method,
                             std::string path,
                             const std::vector<std::pair<std::string, std::string>>& headers,
                             const std::string& body, bool keep_alive) {
  RequestTemplate r;
  r.name = std::move(name);
  r.method = std::move(method);
  r.head = r.method == "HEAD";
  bool has_user_agent = false, has_accept = false;
  for (const auto& [header, value] : headers) {
    has_user_agent = has_user_agent || header_is(header, "user-agent");
    has_accept = has_accept || header_is(header, "accept");
  }
  std::string& w = r.wire;
  w += r.method + " " + (path.empty() ? target.path : path) + " HTTP/1.1\r\n";
  w += standard_header_lines(target, headers, keep_alive);
  for (const auto& [header, value] : headers) {
    if (is_framing_header(header)) continue;
    w += header + ": " + value + "\r\n";
  }
  if (!body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH") {
    w += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  w += "\r\n";
  w += body;

  auto& h2 = r.h2_fields;
  h2.emplace_back(":method", r.method);
  h2.emplace_back(":scheme", target.scheme);
  std::string authority = target.host_header();
  for (const auto& [header, value] : headers) {
    if (header_is(header, "host")) authority = value;
  }
  h2.emplace_back(":authority", std::move(authority));
  h2.emplace_back(":path", path.empty() ? target.path : path);
  if (!has_user_agent) h2.emplace_back("user-agent", "kubeload-loadgen/0.1");
  if (!has_accept) h2.emplace_back("accept", "*/*");
  for (const auto& [header, value] : headers) {
    if (header_is(header, "host") || header_is(header, "content-length") ||
        header_is(header, "connection") || header_is(header, "keep-alive") ||
        header_is(header, "proxy-connection") || header_is(header, "transfer-encoding") ||
        header_is(header, "upgrade")) {
      continue;
    }
    std::string name = lowercase(header);
    h2.emplace_back(std::move(name), value);
  }
  if (!body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH") {
    h2.emplace_back("content-length", std::to_string(body.size()));
  }
  r.body = body;
  return r;
}

bool is_idempotent_method(std::string_view method) noexcept {
  for (std::string_view idempotent : {"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"}) {
    if (method == idempotent) return true;
  }
  return false;
}

int RunPlan::stage_count() const {
  int count = 0;
  for (const Phase& p : phases) count = std::max(count, p.warmup ? 0 : p.stage_index + 1);
  return count;
}

uint64_t RunPlan::max_phase_connections() const {
  if (open_model) return max_connections;
  uint64_t most = 0;
  for (const Phase& p : phases) most = std::max(most, p.connections);
  return most;
}

uint32_t RunPlan::usable_threads() const {
  const uint32_t wanted = std::max<uint32_t>(1, threads);
  if (open_model) return static_cast<uint32_t>(std::clamp<uint64_t>(max_connections, 1, wanted));
  if (phases.empty()) return wanted;
  return static_cast<uint32_t>(std::clamp<uint64_t>(max_phase_connections(), 1, wanted));
}

double RunPlan::rate_of_part(const Phase& phase) const noexcept {
  return phase.rate / static_cast<double>(std::max<uint64_t>(1, turns.stride));
}

uint64_t share_of(uint64_t total, uint32_t index, uint32_t parts) noexcept {
  if (parts == 0) return 0;
  return total / parts + (index < total % parts ? 1 : 0);
}

uint64_t proportional_share(uint64_t total, const std::vector<uint64_t>& weights,
                            uint32_t index) noexcept {
  using Wide = unsigned __int128;
  const auto parts = static_cast<uint32_t>(weights.size());
  if (index >= parts) return 0;
  Wide weight_sum = 0;
  for (uint64_t w : weights) weight_sum += w;
  if (weight_sum == 0) return share_of(total, index, parts);
  // Floors first, then one more for each of the largest remainders.
  std::vector<uint32_t> order(parts);
  std::vector<Wide> remainder(parts);
  uint64_t handed_out = 0;
  uint64_t mine = 0;
  for (uint32_t i = 0; i < parts; ++i) {
    const Wide exact = static_cast<Wide>(total) * weights[i];
    const auto floor = static_cast<uint64_t>(exact / weight_sum);
    remainder[i] = exact % weight_sum;
    handed_out += floor;
    if (i == index) mine = floor;
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return remainder[a] > remainder[b]; });
  const uint64_t left = total - handed_out;  // fewer than `parts`
  for (uint64_t i = 0; i < left; ++i) {
    if (order[i] == index) ++mine;
  }
  return mine;
}

namespace {

enum class BudgetSplit { by_connections, shared };

RunPlan split(const RunPlan& plan, uint32_t index, uint32_t parts, BudgetSplit budgets) {
  RunPlan part = plan;
  if (parts == 0) return part;
  part.part = {plan.part.offset + plan.part.stride * index, plan.part.stride * parts};
  if (plan.open_model) {
    // Budgets and rates describe the whole arrival sequence; a part only
    // takes its turns in it.
    part.turns = {plan.turns.offset + plan.turns.stride * index, plan.turns.stride * parts};
    part.max_connections = std::max<uint64_t>(1, share_of(plan.max_connections, index, parts));
    return part;
  }
  for (Phase& phase : part.phases) phase.connections = share_of(phase.connections, index, parts);
  if (budgets == BudgetSplit::shared) return part;
  auto weights_of = [&](auto&& connections_of) {
    std::vector<uint64_t> weights(parts, 0);
    for (uint32_t i = 0; i < parts; ++i) weights[i] = connections_of(i);
    return weights;
  };
  for (size_t p = 0; p < plan.phases.size(); ++p) {
    const Phase& whole = plan.phases[p];
    if (!whole.request_budget) continue;
    part.phases[p].request_budget = proportional_share(
        *whole.request_budget,
        weights_of([&](uint32_t i) { return share_of(whole.connections, i, parts); }), index);
  }
  if (plan.total_request_budget) {
    part.total_request_budget =
        proportional_share(*plan.total_request_budget, weights_of([&](uint32_t i) {
          uint64_t sum = 0;
          for (const Phase& phase : plan.phases) {
            if (!phase.warmup) sum += share_of(phase.connections, i, parts);
          }
          return sum;
        }),
                           index);
  }
  return part;
}

}  // namespace

RunPlan split_plan(const RunPlan& plan, uint32_t index, uint32_t parts) {
  RunPlan part = split(plan, index, parts, BudgetSplit::by_connections);
  part.worker_index = index;
  return part;
}

RunPlan split_plan_for_thread(const RunPlan& plan, uint32_t index, uint32_t parts) {
  return split(plan, index, parts, BudgetSplit::shared);
}

uint64_t budget_block(uint64_t budget, uint32_t threads) noexcept {
  constexpr uint64_t kLargestBlock = 32;
  constexpr uint64_t kBlocksPerThread = 64;
  return std::clamp<uint64_t>(budget / (kBlocksPerThread * std::max<uint32_t>(1, threads)), 1,
                              kLargestBlock);
}

std::chrono::nanoseconds arrival_offset(uint64_t k, double rate) noexcept {
  // Rounded, not truncated: 41 / 10 s is 4.1 s, not 4.0999999999 s.
  return std::chrono::round<std::chrono::nanoseconds>(
      std::chrono::duration<double>(static_cast<double>(k) / rate));
}

uint64_t arrivals_within(std::chrono::nanoseconds length, double rate) noexcept {
  if (!(rate > 0) || length.count() <= 0) return 0;
  // The estimate, then exactly the arrivals whose offset (as the workers
  // compute it) falls before `length`.
  auto n = static_cast<uint64_t>(std::ceil(std::chrono::duration<double>(length).count() * rate));
  while (n > 0 && arrival_offset(n - 1, rate) >= length) --n;
  while (arrival_offset(n, rate) < length) ++n;
  return n;
}

std::vector<std::string> step_rows(const LoadTestSpec& spec) {
  std::vector<std::string> rows;
  for (const ScenarioSpec& s : spec.scenarios) {
    for (const StepSpec& step : s.steps) {
      if (std::find(rows.begin(), rows.end(), step.name) == rows.end()) rows.push_back(step.name);
    }
  }
  return rows;
}

RunPlan plan_from_spec(const LoadTestSpec& spec, const Target& target, uint32_t threads) {
  RunPlan plan;
  plan.target = target;
  plan.keep_alive = spec.load.keep_alive;
  plan.timeout = spec.load.timeout;
  plan.open_model = spec.load.open_model();
  plan.max_connections = spec.load.max_connections.value_or(1000);
  plan.total_request_budget = spec.load.requests;
  plan.threads = std::max<uint32_t>(1, threads);
  plan.tls.verify = !spec.tls.insecure_skip_verify;
  plan.protocol = spec.protocol;
  plan.max_streams = std::max<uint32_t>(1, spec.load.max_streams);

  if (!spec.scenarios.empty()) {
    // The steps' result rows; what they send is the scenarios' (attached by
    // compile_scenarios' caller), and the budget counts iterations.
    plan.total_request_budget = spec.load.iterations;
    for (std::string& name : step_rows(spec)) {
      RequestTemplate row;
      row.name = std::move(name);
      plan.requests.push_back(std::move(row));
    }
  }
  for (const RequestSpec& r : spec.requests) {
    RequestTemplate t =
        make_request(target, r.name, r.method, r.path, r.headers, r.body, spec.load.keep_alive);
    t.weight = std::max<uint32_t>(1, r.weight);
    for (int code : r.expect.status) {
      if (code >= 0 && code < 600) t.expected_status.set(static_cast<size_t>(code));
    }
    t.expected_length = r.expect.body_length;
    plan.requests.push_back(std::move(t));
  }

  const uint64_t default_connections = spec.load.connections.value_or(kDefaultConnections);
  const double default_rate = spec.load.rate.value_or(0);
  std::vector<Phase> stages;
  if (spec.load.stages.empty()) {
    Phase p;
    p.duration = spec.load.duration.value_or(std::chrono::nanoseconds{0});
    p.connections = plan.open_model ? 0 : default_connections;
    p.rate = default_rate;
    stages.push_back(p);
  } else {
    for (size_t i = 0; i < spec.load.stages.size(); ++i) {
      const StageSpec& s = spec.load.stages[i];
      Phase p;
      p.stage_index = static_cast<int>(i);
      p.duration = s.duration;
      p.connections = plan.open_model ? 0 : s.connections.value_or(default_connections);
      p.rate = s.rate.value_or(default_rate);
      stages.push_back(p);
    }
  }
  if (spec.load.warmup || spec.load.warmup_requests) {
    Phase warmup = stages.front();
    warmup.warmup = true;
    warmup.stage_index = -1;
    warmup.duration = spec.load.warmup.value_or(std::chrono::nanoseconds{0});
    warmup.request_budget = spec.load.warmup_requests;
    plan.phases.push_back(warmup);
  }
  plan.phases.insert(plan.phases.end(), stages.begin(), stages.end());
  plan.threads = plan.usable_threads();
  return plan;
}

}  // namespace kubeload::loadgen
