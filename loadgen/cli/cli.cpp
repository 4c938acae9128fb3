#include "loadgen/cli/cli.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kubeload/duration.hpp"
#include "kubeload/text.hpp"
#include "loadgen/engine/plan.hpp"

namespace kubeload::loadgen {
namespace {

class Args {
 public:
  explicit Args(const std::vector<std::string>& args) : args_(args) {}
  bool done() const { return i_ >= args_.size(); }
  const std::string& next() { return args_[i_++]; }
  // The value of option `name`: "--name=value", "-cVALUE" or the next argument.
  std::string value(const std::string& name, const std::string& inline_value, bool has_inline) {
    if (has_inline) return inline_value;
    if (done()) throw UsageError(name + ": missing value");
    return next();
  }

 private:
  const std::vector<std::string>& args_;
  size_t i_ = 0;
};

uint64_t positive_integer(const std::string& option, const std::string& text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value == 0) {
    throw UsageError(option + ": must be a positive integer, got \"" + text + "\"");
  }
  return value;
}

double positive_number(const std::string& option, const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || !(value > 0) || value > kMaxRate) {
    throw UsageError(option + ": must be a number > 0, got \"" + text + "\"");
  }
  return value;
}

std::chrono::nanoseconds positive_duration(const std::string& option, const std::string& text) {
  const auto d = parse_duration(text);
  if (!d || d->count() <= 0) {
    throw UsageError(option + ": must be a duration like 30s, 2m or 500ms, got \"" + text + "\"");
  }
  if (*d > kMaxRunLength) {
    throw UsageError(option + ": must be at most " + format_duration(kMaxRunLength) + ", got \"" +
                     text + "\"");
  }
  return *d;
}

std::vector<int> status_list(const std::string& option, const std::string& text) {
  std::vector<int> codes;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (item.size() == 3 && item[0] >= '1' && item[0] <= '5' &&
        (item[1] == 'x' || item[1] == 'X') && (item[2] == 'x' || item[2] == 'X')) {
      const int base = (item[0] - '0') * 100;
      for (int c = base; c < base + 100; ++c) codes.push_back(c);
      continue;
    }
    int code = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), code);
    if (ec != std::errc{} || end != item.data() + item.size() || code < 100 || code > 599) {
      throw UsageError(option + ": \"" + item + "\" is not a status code (100-599 or 2xx)");
    }
    codes.push_back(code);
  }
  if (codes.empty()) throw UsageError(option + ": empty status list");
  return codes;
}

// "10s:10,20s:50" (closed model: DURATION:CONNECTIONS) or "10s:100/s,20s:500/s"
// (open model: DURATION:RATE/s); the unit says which, so no other option has to.
std::vector<StageSpec> stage_list(const std::string& option, const std::string& text) {
  static constexpr std::string_view kRateUnit = "/s";
  std::vector<StageSpec> stages;
  std::optional<std::string> first_item;
  bool open_model = false;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto colon = item.find(':');
    if (colon == std::string::npos) {
      throw UsageError(option + ": stage \"" + item +
                       "\" must be DURATION:CONNECTIONS or DURATION:RATE/s");
    }
    StageSpec stage;
    stage.duration = positive_duration(option, item.substr(0, colon));
    std::string amount = item.substr(colon + 1);
    const bool rate = amount.ends_with(kRateUnit);
    if (!first_item) {
      first_item = item;
      open_model = rate;
    } else if (rate != open_model) {
      throw UsageError(option + ": stage \"" + item + "\" and stage \"" + *first_item +
                       "\" mix the models: give every stage as DURATION:CONNECTIONS (closed) "
                       "or every stage as DURATION:RATE/s (open)");
    }
    if (rate) {
      amount.resize(amount.size() - kRateUnit.size());
      stage.rate = positive_number(option, amount);
    } else {
      stage.connections = positive_integer(option, amount);
    }
    stages.push_back(stage);
  }
  if (stages.empty()) throw UsageError(option + ": no stages in \"" + text + "\"");
  return stages;
}

std::string read_body(const std::string& option, const std::string& text) {
  if (text.empty() || text.front() != '@') return text;
  const std::string path = text.substr(1);
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UsageError(option + ": cannot read \"" + path + "\"");
  std::ostringstream content;
  content << file.rdbuf();
  return content.str();
}

std::pair<std::string, std::string> header(const std::string& option, const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos || colon == 0) {
    throw UsageError(option + ": \"" + text + "\" must be \"Name: value\"");
  }
  std::string name = text.substr(0, colon);
  std::string value = text.substr(colon + 1);
  const auto first = value.find_first_not_of(" \t");
  value = first == std::string::npos ? "" : value.substr(first);
  for (char c : name) {
    if (c <= ' ' || c == ':' || c == 127) {
      throw UsageError(option + ": invalid header name \"" + name + "\"");
    }
  }
  if (value.find_first_of("\r\n") != std::string::npos) {
    throw UsageError(option + ": header value of \"" + name + "\" contains a line break");
  }
  return {name, value};
}

uint32_t worker_number(const std::string& option, const std::string& text, bool allow_zero) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value > 100000 ||
      (!allow_zero && value == 0)) {
    throw UsageError(option + ": invalid number \"" + text + "\"");
  }
  return static_cast<uint32_t>(value);
}

std::string read_file(const std::string& option, const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw UsageError(option + ": cannot read \"" + path + "\"");
  std::ostringstream content;
  content << file.rdbuf();
  return content.str();
}

// loadgen worker --spec FILE|--spec-env VAR [--index N] [--workers N] ...
CliOptions parse_worker_options(const std::vector<std::string>& arguments) {
  CliOptions options;
  options.mode = CliOptions::Mode::worker;
  if (const char* index = std::getenv("JOB_COMPLETION_INDEX")) {
    options.worker_index = worker_number("JOB_COMPLETION_INDEX", index, true);
  }
  Args args(arguments);
  args.next();  // "worker"
  while (!args.done()) {
    const std::string arg = args.next();
    std::string name = arg, inline_value;
    bool has_inline = false;
    if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      inline_value = arg.substr(eq + 1);
      has_inline = true;
    }
    auto value = [&] { return args.value(name, inline_value, has_inline); };
    if (name == "--spec") {
      options.spec_json = read_file(name, value());
    } else if (name == "--spec-env") {
      const std::string variable = value();
      const char* text = std::getenv(variable.c_str());
      if (text == nullptr)
        throw UsageError(name + ": environment variable " + variable + " is not set");
      options.spec_json = text;
    } else if (name == "--index") {
      options.worker_index = worker_number(name, value(), true);
    } else if (name == "--workers") {
      options.worker_count = worker_number(name, value(), false);
    } else if (name == "--listen") {
      options.listen = value();
    } else if (name == "--target") {
      options.target_override = value();
    } else if (name == "-t" || name == "--threads") {
      options.threads = worker_number(name, value(), false);
    } else if (name == "--cacert") {
      options.ca_file = value();
    } else if (name == "--termination-log") {
      options.termination_log = value();
    } else if (name == "--guard-targets") {
      if (!options.target_policy) options.target_policy.emplace();
    } else if (name == "--deny-cidr" || name == "--allow-cidr") {
      const std::string text = value();
      const auto cidr = Cidr::parse(text);
      if (!cidr) throw UsageError(name + ": not an address or CIDR: \"" + text + "\"");
      if (!options.target_policy) options.target_policy.emplace();
      (name == "--deny-cidr" ? options.target_policy->deny : options.target_policy->allow)
          .push_back(*cidr);
    } else if (name == "--cluster-cidr") {
      const std::string text = value();
      const auto cidr = Cidr::parse(text);
      if (!cidr) throw UsageError(name + ": not an address or CIDR: \"" + text + "\"");
      if (!options.target_policy) options.target_policy.emplace();
      options.target_policy->cluster_ranges.push_back(*cidr);
    } else if (name == "--decided-destination") {
      const std::string text = value();
      const auto destination = parse_decided_destination(text);
      if (!destination) {
        throw UsageError(name + ": not ADDRESS=[ENDPOINT,...]: \"" + text + "\"");
      }
      if (!options.target_policy) options.target_policy.emplace();
      options.target_policy->decided.push_back(*destination);
    } else if (name == "--deny-host") {
      const std::string text = value();
      if (!is_host_name(text)) {
        throw UsageError(name + ": not a host name: \"" + text + "\"");
      }
      if (!options.target_policy) options.target_policy.emplace();
      options.target_policy->deny_hosts.push_back(text);
    } else if (name == "--linger") {
      options.linger =
          std::chrono::duration_cast<std::chrono::seconds>(positive_duration(name, value()));
    } else {
      throw UsageError("loadgen worker: unknown option \"" + arg + "\"");
    }
  }
  if (options.spec_json.empty())
    throw UsageError("loadgen worker: --spec FILE or --spec-env VAR is required");
  if (options.worker_index >= options.worker_count) {
    throw UsageError("--index: " + std::to_string(options.worker_index) +
                     " is not below --workers " + std::to_string(options.worker_count));
  }
  return options;
}

}  // namespace

void check_threads_usable(const LoadSpec& load, std::optional<uint32_t> threads,
                          LoadSource source) {
  // Each thread needs a connection of its own. The default thread count is
  // capped at the connections; an explicit one that they could never use is
  // an error rather than quietly fewer threads.
  if (!threads) return;
  const bool manifest = source == LoadSource::manifest;
  if (load.open_model()) {
    if (load.max_connections && *load.max_connections < *threads) {
      throw UsageError(std::string(manifest ? "spec.load.maxConnections " : "--max-connections ") +
                       std::to_string(*load.max_connections) + ": below --threads " +
                       std::to_string(*threads) + " (each thread needs a connection of its own)");
    }
    return;
  }
  uint64_t most_connections = load.connections.value_or(kDefaultConnections);
  std::string whose = load.connections ? (manifest ? "spec.load.connections" : "-c")
                                       : (manifest ? "the default connections" : "the default -c");
  if (!load.stages.empty()) {
    most_connections = 0;
    for (const StageSpec& stage : load.stages)
      most_connections = std::max(most_connections, stage.connections.value_or(0));
    whose = manifest ? "the largest of spec.load.stages" : "the largest stage";
  }
  if (*threads > most_connections) {
    throw UsageError("-t " + std::to_string(*threads) + ": above the " +
                     std::to_string(most_connections) + " connections of " + whose +
                     " (each thread needs a connection of its own)");
  }
}

const char* usage_text() {
  return R"(usage:
  loadgen [OPTIONS] URL          load one URL, like ab or wrk
  loadgen run FILE.yaml          run a LoadTest manifest on this machine
          [--target URL]         ... against URL instead of spec.target
  loadgen worker --spec FILE --index I --workers N [--listen ADDR] [--target URL]
                 [--cacert FILE]
                                 the pod mode: share I of N, driven over HTTP by the operator
          [--guard-targets] [--deny-cidr C]... [--allow-cidr C]... [--deny-host H]...
                                 refuse targets resolving into denied ranges (link-local,
                                 loopback and unspecified by default) or outside the allowed
                                 ones, and targets named by a denied host name; control-plane
                                 ports (kubelet, etcd, ...) are refused on every address
          [--cluster-cidr C]... [--decided-destination IP=[ENDPOINT,...]]...
                                 an address in a cluster range is allowed only when it is a
                                 decided destination, whose endpoints are decided as well

options:
  -c, --connections N     closed model: concurrent connections (default 10)
  -n, --requests N        stop after N requests (shared by all connections and threads)
  -d, --duration D        stop after D (30s, 2m); with neither -n nor -d: 10s
  -r, --rate R            open model: R requests/s at constant arrival, one arrival
                          sequence for all threads; a request that finds no free
                          connection within --timeout of its intended time is an
                          error of kind "dropped"
      --max-connections N open model: connection cap (default 1000); not below -t
  -t, --threads N         event-loop threads (default: the whole CPUs of the cgroup
                          CPU quota, else the cores, at most the connections); an
                          explicit N above -c (or the largest stage; with run, the
                          manifest's connections) is an error
      --warmup D          warm up for D first (not counted)
      --warmup-requests N warm up with N requests first (not counted)
      --stages SPEC       closed model 10s:10,10s:20 (DURATION:CONNECTIONS), or open
                          model 10s:100/s,10s:200/s (DURATION:RATE/s); not with -d, -c
                          or -r (the stages set them); -n, the warm-up and the other
                          options apply as without stages
  -k, --keepalive         keep connections alive (the default)
      --no-keepalive      one connection per request
  -m, --method M          request method (default GET)
  -H, --header "N: V"     add a request header (repeatable)
      --body TEXT|@FILE   request body
      --timeout D         per request (default 30s); a run ended by time stops at its
                          planned end and drains what is in flight, reported apart
      --retry-non-idempotent  also resend POST/PATCH when a kept-alive connection
                          closed before any response (GET, HEAD, OPTIONS, TRACE, PUT
                          and DELETE are resent once by default; counted as retries)
      --cacert FILE       https: verify the server against the CAs in FILE (PEM)
                          instead of the system's (certificates are verified by default)
      --insecure          https: do not verify the server's certificate
      --no-tls-resume     https: a full handshake on every connection (by default a
                          new connection resumes the previous session)
      --h2                HTTP/2 over TLS (ALPN h2; https:// URLs); a server that does
                          not negotiate h2 stops the run, naming what it negotiated
      --allow-http1       with --h2: load a server that negotiates http/1.1 over HTTP/1.1
      --h2c               cleartext HTTP/2 with prior knowledge (http:// URLs)
      --max-streams N     HTTP/2: concurrent streams per connection (h2load's -m;
                          default 1); -c connections carry -c x N requests at once
      --expect-status L   statuses that succeed, e.g. 200,204 or 2xx (default 2xx,3xx)
      --expect-length N   count a body of another length as a failure
      --format F          text | ab | jmeter | json | junit | markdown | html
                          (default text; junit, markdown and html report the gate too)
      --engine E          the loop for HTTP/1.1 (http:// and https://) and h2c:
                          auto (io_uring where the kernel and the seccomp
                          profile allow it, else epoll, h2c Asio; the default),
                          io_uring (an error where it is not allowed) or epoll
                          (h2c: Asio; kept-alive TLS 1.2 with kTLS where the
                          kernel has it); HTTP/2 over TLS runs on Asio. The
                          report names the engine used
      --metrics-addr A    serve live Prometheus metrics on A (HOST:PORT)
      --hdr-log FILE      write an HdrHistogram interval log (one interval per stage)
  -q, --quiet             no progress on stderr
  -h, --help              this text
      --version           the version

exit status: 0 ran, 1 thresholds failed (run), 2 usage or input error (an https
certificate that does not verify too: the message names the host and the fix)

saturation: loadgen measures its own CPU over the counted run (its cgroup's under
a CPU quota, else its threads' against the CPUs it may use); above 90% it warns on
stderr after the report, even with -q ("loadgen: warning: loadgen used 96% of the
2 CPUs it may use ..."): the numbers then describe loadgen, not the target
)";
}

CliOptions parse_command_line(const std::vector<std::string>& arguments) {
  if (!arguments.empty() && arguments.front() == "worker") return parse_worker_options(arguments);
  CliOptions options;
  Args args(arguments);
  std::optional<std::string> url;
  std::optional<uint64_t> connections;
  std::optional<double> rate;
  std::optional<std::string> stages_text;
  std::string duration_text, connections_text, rate_text;  // as given, for usage errors
  std::string load_option;  // the last option that shapes the load (not for `run`)
  RequestSpec request;
  request.name = "default";
  LoadSpec& load = options.spec.load;

  while (!args.done()) {
    std::string arg = args.next();
    if (arg == "--") {
      while (!args.done()) {
        if (url) throw UsageError("unexpected argument \"" + args.next() + "\"");
        url = args.next();
      }
      break;
    }
    if (arg.empty() || arg[0] != '-' || arg == "-") {
      if (options.mode == CliOptions::Mode::quick && !url && arg == "run" && !args.done()) {
        options.mode = CliOptions::Mode::run;
        options.manifest_path = args.next();
        continue;
      }
      if (url || options.mode == CliOptions::Mode::run) {
        throw UsageError("unexpected argument \"" + arg + "\"");
      }
      url = arg;
      continue;
    }
    // Split "--name=value" and "-cVALUE".
    std::string name = arg, inline_value;
    bool has_inline = false;
    if (arg.rfind("--", 0) == 0) {
      if (const auto eq = arg.find('='); eq != std::string::npos) {
        name = arg.substr(0, eq);
        inline_value = arg.substr(eq + 1);
        has_inline = true;
      }
    } else if (arg.size() > 2) {
      name = arg.substr(0, 2);
      inline_value = arg.substr(2);
      has_inline = true;
    }
    auto value = [&] { return args.value(name, inline_value, has_inline); };
    static constexpr std::string_view kRunOptions[] = {
        "-t", "--threads", "--format", "--metrics-addr", "--hdr-log", "-q", "--quiet", "--target",
        "-h", "--help", "--version",
        // How the target is reached, not the load: also for `run`.
        "--cacert", "--insecure", "--no-tls-resume", "--retry-non-idempotent", "--allow-http1",
        // How the load is carried: also for `run`.
        "--engine"};
    if (std::find(std::begin(kRunOptions), std::end(kRunOptions), name) == std::end(kRunOptions)) {
      load_option = name;
    }
    auto flag = [&] {
      if (has_inline) throw UsageError(name + ": takes no value, got \"" + inline_value + "\"");
    };

    if (name == "-c" || name == "--connections") {
      connections_text = value();
      connections = positive_integer(name, connections_text);
    } else if (name == "-n" || name == "--requests") {
      load.requests = positive_integer(name, value());
    } else if (name == "-d" || name == "--duration") {
      duration_text = value();
      load.duration = positive_duration(name, duration_text);
    } else if (name == "-r" || name == "--rate") {
      rate_text = value();
      rate = positive_number(name, rate_text);
    } else if (name == "--max-connections") {
      load.max_connections = positive_integer(name, value());
    } else if (name == "-t" || name == "--threads") {
      const uint64_t threads = positive_integer(name, value());
      if (threads > 1024)
        throw UsageError(name + ": at most 1024 threads, got " + std::to_string(threads));
      options.threads = static_cast<uint32_t>(threads);
    } else if (name == "--warmup") {
      load.warmup = positive_duration(name, value());
    } else if (name == "--warmup-requests") {
      load.warmup_requests = positive_integer(name, value());
    } else if (name == "--stages") {
      stages_text = value();
    } else if (name == "-k" || name == "--keepalive") {
      flag();
      load.keep_alive = true;
    } else if (name == "--no-keepalive") {
      flag();
      load.keep_alive = false;
    } else if (name == "-m" || name == "--method") {
      request.method = value();
      for (char c : request.method) {
        if (!is_alpha(c)) {
          throw UsageError(name + ": invalid method \"" + request.method + "\"");
        }
      }
    } else if (name == "-H" || name == "--header") {
      request.headers.push_back(header(name, value()));
    } else if (name == "--body") {
      request.body = read_body(name, value());
    } else if (name == "--timeout") {
      load.timeout = positive_duration(name, value());
    } else if (name == "--expect-status") {
      request.expect.status = status_list(name, value());
    } else if (name == "--expect-length") {
      const std::string text = value();
      uint64_t length = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), length);
      if (ec != std::errc{} || end != text.data() + text.size()) {
        throw UsageError(name + ": must be a byte count, got \"" + text + "\"");
      }
      request.expect.body_length = length;
    } else if (name == "--format") {
      const std::string text = value();
      const auto format = parse_report_format(text);
      if (!format)
        throw UsageError(name +
                         ": must be text, ab, jmeter, json, junit, markdown or html, got \"" +
                         text + "\"");
      options.format = *format;
    } else if (name == "--metrics-addr") {
      options.metrics_address = value();
      if (options.metrics_address.find(':') == std::string::npos) {
        throw UsageError(name + ": must be HOST:PORT, got \"" + options.metrics_address + "\"");
      }
    } else if (name == "--hdr-log") {
      options.hdr_log_path = value();
    } else if (name == "--target") {
      options.target_override = value();
    } else if (name == "--cacert") {
      options.ca_file = value();
      if (options.ca_file.empty()) throw UsageError(name + ": needs a file name");
    } else if (name == "--insecure") {
      flag();
      options.insecure = true;
    } else if (name == "--no-tls-resume") {
      flag();
      options.tls_resume = false;
    } else if (name == "--retry-non-idempotent") {
      flag();
      options.retry_non_idempotent = true;
    } else if (name == "--h2" || name == "--h2c") {
      flag();
      const Protocol protocol = name == "--h2" ? Protocol::http2 : Protocol::h2c;
      if (options.spec.protocol != Protocol::http1 && options.spec.protocol != protocol) {
        throw UsageError("--h2 and --h2c: give one of them (h2 is over TLS, h2c cleartext)");
      }
      options.spec.protocol = protocol;
    } else if (name == "--max-streams") {
      const std::string text = value();
      const uint64_t streams = positive_integer(name, text);
      if (streams > 1000) throw UsageError(name + ": at most 1000 streams, got " + text);
      load.max_streams = static_cast<uint32_t>(streams);
    } else if (name == "--allow-http1") {
      flag();
      options.allow_http1 = true;
    } else if (name == "--engine") {
      const std::string text = value();
      const auto engine = parse_engine_request(text);
      if (!engine) throw UsageError(name + ": auto, io_uring or epoll, got \"" + text + "\"");
      options.engine = *engine;
    } else if (name == "-q" || name == "--quiet") {
      flag();
      options.quiet = true;
    } else if (name == "-h" || name == "--help") {
      options.mode = CliOptions::Mode::help;
      return options;
    } else if (name == "--version") {
      options.mode = CliOptions::Mode::version;
      return options;
    } else {
      throw UsageError("unknown option \"" + arg + "\" (see loadgen --help)");
    }
  }

  if (options.insecure && !options.ca_file.empty()) {
    throw UsageError("--insecure and --cacert " + options.ca_file +
                     ": give one of them (a CA is used to verify)");
  }
  if (options.mode == CliOptions::Mode::run) {
    if (!load_option.empty()) {
      throw UsageError(load_option + ": not with loadgen run (the manifest sets the load)");
    }
    return options;
  }
  if (!options.target_override.empty()) throw UsageError("--target: only with loadgen run");
  if (!url) throw UsageError("no URL given (see loadgen --help)");
  const bool https = url->rfind("https://", 0) == 0;
  if (options.spec.protocol == Protocol::http2 && !https) {
    throw UsageError("--h2: HTTP/2 over TLS needs an https:// URL, got " + *url +
                     " (--h2c for cleartext HTTP/2)");
  }
  if (options.spec.protocol == Protocol::h2c && https) {
    throw UsageError("--h2c: cleartext HTTP/2 needs an http:// URL, got " + *url +
                     " (--h2 for HTTP/2 over TLS)");
  }
  if (load.max_streams > 1 && options.spec.protocol == Protocol::http1) {
    throw UsageError("--max-streams " + std::to_string(load.max_streams) +
                     ": only with --h2 or --h2c (HTTP/1.1 has one request per connection)");
  }
  if (options.allow_http1 && options.spec.protocol != Protocol::http2) {
    throw UsageError("--allow-http1: only with --h2 (a fallback from h2 to http/1.1 over TLS)");
  }
  if (load.warmup && load.warmup_requests) {
    throw UsageError("--warmup and --warmup-requests: give one of them");
  }
  if (connections && rate) {
    throw UsageError("-c and -r: the closed model (-c) and the open model (-r) exclude each other");
  }
  if (stages_text) {
    // Each stage sets its own duration and load; a -d, -c or -r beside them
    // would be silently ignored.
    if (load.duration) {
      throw UsageError("-d " + duration_text +
                       ": not with --stages (each stage DURATION:... sets its own duration)");
    }
    if (connections) {
      throw UsageError("-c " + connections_text +
                       ": not with --stages (each stage DURATION:CONNECTIONS sets its own)");
    }
    if (rate) {
      throw UsageError("-r " + rate_text +
                       ": not with --stages (each stage DURATION:RATE/s sets its own rate, "
                       "e.g. --stages 10s:" +
                       rate_text + "/s)");
    }
    load.stages = stage_list("--stages", *stages_text);
  }
  if (!load.requests && !load.duration && load.stages.empty())
    load.duration = std::chrono::seconds(10);
  load.connections = connections;
  load.rate = rate;
  if (load.max_connections && !load.open_model()) {
    throw UsageError("--max-connections " + std::to_string(*load.max_connections) +
                     ": only in the open model (-r, or --stages DURATION:RATE/s)");
  }
  check_threads_usable(load, options.threads, LoadSource::options);
  options.spec.name = "local";
  options.spec.url = *url;
  options.spec.requests.push_back(std::move(request));
  return options;
}

}  // namespace kubeload::loadgen
