#include "loadgen/plan.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "kubeload/url.hpp"

namespace kubeload::loadgen {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool header_is(const std::string& name, std::string_view wanted) {
  return lower(name) == wanted;
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

RequestTemplate make_request(const Target& target, std::string name, std::string method,
                             std::string path,
                             const std::vector<std::pair<std::string, std::string>>& headers,
                             const std::string& body, bool keep_alive) {
  RequestTemplate r;
  r.name = std::move(name);
  r.method = std::move(method);
  r.head = r.method == "HEAD";
  bool has_host = false, has_user_agent = false, has_accept = false;
  for (const auto& [header, value] : headers) {
    has_host = has_host || header_is(header, "host");
    has_user_agent = has_user_agent || header_is(header, "user-agent");
    has_accept = has_accept || header_is(header, "accept");
  }
  std::string& w = r.wire;
  w += r.method + " " + (path.empty() ? target.path : path) + " HTTP/1.1\r\n";
  if (!has_host) w += "Host: " + target.host_header() + "\r\n";
  if (!has_user_agent) w += "User-Agent: kubeload-loadgen/0.1\r\n";
  if (!has_accept) w += "Accept: */*\r\n";
  if (!keep_alive) w += "Connection: close\r\n";
  for (const auto& [header, value] : headers) {
    if (header_is(header, "content-length") || header_is(header, "connection")) continue;
    w += header + ": " + value + "\r\n";
  }
  if (!body.empty() || r.method == "POST" || r.method == "PUT" || r.method == "PATCH") {
    w += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  w += "\r\n";
  w += body;
  return r;
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
  if (open_model || phases.empty()) return wanted;
  uint64_t fewest = UINT64_MAX;
  for (const Phase& p : phases) fewest = std::min(fewest, p.connections);
  return static_cast<uint32_t>(std::clamp<uint64_t>(fewest, 1, wanted));
}

uint64_t share_of(uint64_t total, uint32_t index, uint32_t parts) noexcept {
  if (parts == 0) return 0;
  return total / parts + (index < total % parts ? 1 : 0);
}

double rate_share(double total, uint32_t parts) noexcept {
  return parts == 0 ? 0.0 : total / parts;
}

RunPlan split_plan(const RunPlan& plan, uint32_t index, uint32_t parts) {
  RunPlan part = plan;
  part.threads = 1;
  if (plan.total_request_budget) {
    part.total_request_budget = share_of(*plan.total_request_budget, index, parts);
  }
  if (plan.open_model)
    part.max_connections = std::max<uint64_t>(1, share_of(plan.max_connections, index, parts));
  for (Phase& phase : part.phases) {
    phase.connections = share_of(phase.connections, index, parts);
    phase.rate = rate_share(phase.rate, parts);
    if (phase.request_budget) phase.request_budget = share_of(*phase.request_budget, index, parts);
  }
  return part;
}

RunPlan plan_from_spec(const LoadTestSpec& spec, const Target& target, uint32_t threads) {
  RunPlan plan;
  plan.target = target;
  plan.keep_alive = spec.load.keep_alive;
  plan.timeout = spec.load.timeout;
  plan.open_model = spec.load.rate.has_value() ||
                    std::any_of(spec.load.stages.begin(), spec.load.stages.end(),
                                [](const StageSpec& s) { return s.rate.has_value(); });
  plan.max_connections = spec.load.max_connections.value_or(1000);
  plan.total_request_budget = spec.load.requests;
  plan.threads = std::max<uint32_t>(1, threads);

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

  const uint64_t default_connections = spec.load.connections.value_or(10);
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
