#include "spec_rules.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <optional>
#include <set>
#include <variant>

#include "kubeload/comparison.hpp"
#include "kubeload/duration.hpp"
#include "kubeload/names.hpp"
#include "kubeload/text.hpp"
#include "kubeload/url.hpp"

namespace kubeload::spec_parser {
namespace {

using std::chrono::nanoseconds;

// Long paths are cut in messages (kubeload/text.hpp's quote cuts values).
constexpr size_t kMaxPathBytes = 300;

// The scheme of a URL already found valid (kubeload/url.hpp's grammar).
bool is_https(std::string_view url) {
  const auto parsed = parse_http_url(url);
  const auto* parts = std::get_if<HttpUrl>(&parsed);
  return parts != nullptr && parts->scheme == "https";
}

// The load model, the run's length and connections per worker.
void load_rules(LoadTestSpec& spec, const DecodedFields& seen, FieldErrors& errors) {
  LoadSpec& load = spec.load;
  const uint32_t workers = spec.workers;
  const bool staged = !load.stages.empty();
  const auto stage_gives = [&](size_t i, std::string_view field) {
    return seen.has(seen.stage_paths[i] + "." + std::string(field));
  };
  // With stages, the first stage that gives a rate or connections sets the
  // model for all; without, rate does.
  std::optional<size_t> model_stage;
  for (size_t i = 0; i < load.stages.size() && !model_stage; ++i) {
    if (stage_gives(i, "rate") != stage_gives(i, "connections")) model_stage = i;
  }
  const bool open =
      staged ? model_stage && stage_gives(*model_stage, "rate") : seen.has("spec.load.rate");

  if (staged) {
    // The stages set the load: a rate or connections beside them would be
    // ignored (the command line refuses -r and -c with --stages alike).
    if (seen.has("spec.load.rate")) {
      errors.add("spec.load.rate",
                 "not valid with stages, got " + seen.text("spec.load.rate") +
                     " (each stage sets its own rate, e.g. {duration: 10s, rate: " +
                     seen.text("spec.load.rate") + "})");
    }
    if (seen.has("spec.load.connections")) {
      errors.add("spec.load.connections",
                 "not valid with stages, got " + seen.text("spec.load.connections") +
                     " (each stage sets its own connections, e.g. {duration: 10s, connections: " +
                     seen.text("spec.load.connections") + "})");
    }
  } else if (open && seen.has("spec.load.connections")) {
    errors.add("spec.load.connections",
               "not valid with rate (open model); use maxConnections to cap connections");
  }
  if (!open && seen.has("spec.load.maxConnections")) {
    errors.add("spec.load.maxConnections", "only valid with rate (open model)");
  }
  if (staged && seen.has("spec.load.duration")) {
    errors.add("spec.load.duration", "not valid with stages (the stages define the duration)");
  }
  if (!staged && !seen.has("spec.load.duration") && !seen.has("spec.load.requests")) {
    errors.add("spec.load", "one of duration or requests is required");
  }
  if (seen.has("spec.load.warmup") && seen.has("spec.load.warmupRequests")) {
    errors.add("spec.load", "warmup and warmupRequests are mutually exclusive");
  }

  // The planned length, summed with a check at every step: each part is at most
  // kMaxRunLength, so the running total never overflows before it is compared.
  const std::string too_long = "the run would last longer than " + format_duration(kMaxRunLength) +
                               " (warmup, duration and stages)";
  nanoseconds planned = load.warmup.value_or(nanoseconds(0));
  const auto add_planned = [&](nanoseconds part, const std::string& path) {
    if (planned > kMaxRunLength) return;  // already reported
    planned += part;
    if (planned > kMaxRunLength) errors.add(path, too_long);
  };
  if (load.duration) add_planned(*load.duration, "spec.load.duration");
  for (size_t i = 0; i < load.stages.size(); ++i) {
    add_planned(load.stages[i].duration, seen.stage_paths[i] + ".duration");
  }
  if (open && load.rate && load.requests && !load.duration && !staged) {
    const double seconds = static_cast<double>(*load.requests) / *load.rate;
    if (seconds > std::chrono::duration<double>(kMaxRunLength).count()) {
      errors.add("spec.load.requests", "at spec.load.rate " + shortest(*load.rate) + "/s, " +
                                           std::to_string(*load.requests) +
                                           " requests take longer than " +
                                           format_duration(kMaxRunLength));
    }
  }

  const std::string each_worker = ": each worker needs at least one connection";
  const std::string model_reason =
      model_stage ? " (" + seen.stage_paths[*model_stage] +
                        (open ? " gives a rate)" : " gives connections)") +
                        "; every stage gives a rate, or every stage connections"
                  : "";
  for (size_t i = 0; i < load.stages.size(); ++i) {
    const std::string& path = seen.stage_paths[i];
    const StageSpec& stage = load.stages[i];
    if (!model_stage) {
      errors.add(path,
                 stage_gives(i, "rate")
                     ? "exactly one of connections (closed model) or rate (open model), got both"
                     : "connections (closed model) or rate (open model) is required");
    } else if (open) {
      if (stage_gives(i, "connections")) {
        errors.add(path + ".connections", "not valid in the open model" + model_reason);
      } else if (!stage_gives(i, "rate")) {
        errors.add(path + ".rate", "required in the open model");
      }
    } else {
      if (stage_gives(i, "rate")) {
        errors.add(path + ".rate", "not valid in the closed model" + model_reason);
      } else if (!stage_gives(i, "connections")) {
        errors.add(path + ".connections", "required in the closed model");
      } else if (stage.connections && *stage.connections < workers) {
        errors.add(path + ".connections", "must be >= spec.workers (" + std::to_string(workers) +
                                              "), got " + std::to_string(*stage.connections) +
                                              each_worker);
      }
    }
  }

  if (!open && !staged) {
    if (!seen.has("spec.load.connections")) {
      load.connections = kDefaultConnections;
      if (kDefaultConnections < workers) {
        errors.add("spec.load.connections", "must be >= spec.workers (" + std::to_string(workers) +
                                                "), got " + std::to_string(kDefaultConnections) +
                                                " (the default)" + each_worker);
      }
    } else if (load.connections && *load.connections < workers) {
      errors.add("spec.load.connections", "must be >= spec.workers (" + std::to_string(workers) +
                                              "), got " + std::to_string(*load.connections) +
                                              each_worker);
    }
  }
  if (open && load.max_connections && *load.max_connections < workers) {
    errors.add("spec.load.maxConnections", "must be >= spec.workers (" + std::to_string(workers) +
                                               "), got " + std::to_string(*load.max_connections) +
                                               each_worker);
  }
}

}  // namespace

void FieldErrors::add(const std::string& path, const std::string& message) {
  std::string shown_path = printable(utf8_head(path, kMaxPathBytes));
  if (path.size() > kMaxPathBytes) shown_path += "...";
  errors_.push_back({std::move(shown_path), printable(message)});
}

// How requests travel must suit the target (spec.target's, or each variant's).
void target_rules(const LoadTestSpec& spec, const std::optional<std::string>& url,
                  const std::optional<ServiceRef>& service, const DecodedFields& seen,
                  FieldErrors& errors) {
  if (!url && !service) return;
  const bool https_target = (url && is_https(*url)) || (service && service->scheme == "https");
  if (spec.protocol == Protocol::http2 && !https_target) {
    errors.add("spec.target.protocol",
               "http2 needs an https target (ALPN h2); use h2c for cleartext HTTP/2");
  }
  if (spec.protocol == Protocol::h2c && https_target) {
    errors.add("spec.target.protocol", "h2c is cleartext HTTP/2; use http2 for an https target");
  }
  if (seen.has("spec.target.tls") && !https_target) {
    errors.add("spec.target.tls",
               "only for https targets (an https:// url or service scheme https)");
  }
  // A Secret's value is a credential: it goes only where nobody on the way
  // can read it and only to the server the certificate names, unless the
  // author says otherwise in so many words.
  if (!spec.allow_insecure_secret_headers) {
    const char* problem =
        !https_target ? "a Secret's value would be sent over plain http: use an https target"
        : spec.tls.insecure_skip_verify
            ? "a Secret's value would be sent to a server whose certificate is not verified "
              "(spec.target.tls.insecureSkipVerify): verify it (spec.target.tls.caFrom)"
            : nullptr;
    for (size_t i = 0; problem != nullptr && i < spec.requests.size(); ++i) {
      if (spec.requests[i].headers_from.empty()) continue;
      errors.add(seen.request_paths[i] + ".headersFrom",
                 std::string(problem) + ", or set spec.target.allowInsecureSecretHeaders: true");
    }
  }
}

// spec.variants and spec.experiment: an experiment compares two or more
// variants over rounds; its comparisons name them.
void experiment_rules(const LoadTestSpec& spec, const DecodedFields& seen, FieldErrors& errors) {
  if (spec.variants.empty()) {
    if (seen.has("spec.experiment")) {
      errors.add("spec.experiment", "is for spec.variants (the setups it compares)");
    }
    return;
  }
  if (spec.variants.size() < 2) {
    errors.add("spec.variants",
               "at least two variants to compare, got " + std::to_string(spec.variants.size()));
  }
  if (spec.baseline) {
    errors.add("spec.baseline",
               "not with spec.variants: an experiment compares its variants with each other "
               "(spec.experiment.comparisons)");
  }
  for (size_t i = 0; i < spec.thresholds.size(); ++i) {
    if (spec.thresholds[i].request.empty()) continue;
    errors.add(seen.threshold_paths[i],
               "a threshold on one request is not for spec.variants: the rounds' request rows "
               "keep no histograms to merge, got " +
                   quote(spec.thresholds[i].expression));
  }
  for (size_t i = 0; i < spec.experiment.comparisons.size(); ++i) {
    const std::string& path = seen.comparison_paths[i];
    auto parsed = parse_comparison(spec.experiment.comparisons[i]);
    if (const auto* problem = std::get_if<std::string>(&parsed)) {
      errors.add(path, *problem);
      continue;
    }
    const Comparison& comparison = std::get<Comparison>(parsed);
    for (const std::string& name : {comparison.left, comparison.right}) {
      const bool known = std::any_of(spec.variants.begin(), spec.variants.end(),
                                     [&](const VariantSpec& v) { return v.name == name; });
      if (!known) {
        errors.add(path, "unknown variant " + quote(name) + " in " + quote(comparison.expression));
      }
    }
    if (comparison.left == comparison.right) {
      errors.add(path, "compares variant " + quote(comparison.left) + " with itself in " +
                           quote(comparison.expression));
    }
  }
}

// spec.search: the steps set the load (a rate or connections each), last
// spec.load.duration each, and are judged by spec.thresholds.
void search_rules(const LoadTestSpec& spec, const DecodedFields& seen, FieldErrors& errors) {
  if (!spec.search) return;
  const SearchSpec& search = *spec.search;
  if (seen.malformed("spec.search")) return;
  if (seen.has("spec.search.rate") == seen.has("spec.search.connections")) {
    errors.add("spec.search", "exactly one of rate (open model) or connections (closed model)");
    return;
  }
  const std::string over = search.over == SearchOver::rate ? "rate" : "connections";
  const std::string at = "spec.search." + over;
  if (seen.malformed(at)) return;
  if (!seen.has(at + ".start"))
    errors.add(at + ".start", "required (the first step's " + over + ")");
  if (search.max && seen.has(at + ".start") && *search.max < search.start) {
    errors.add(at + ".max", "must be >= start (" + seen.text(at + ".start") + "), got " +
                                seen.text(at + ".max"));
  }
  // A start the decoder refused stays 0: its own error says why.
  if (search.over == SearchOver::connections && search.start > 0 && search.start < spec.workers) {
    errors.add(at + ".start", "must be >= spec.workers (" + std::to_string(spec.workers) +
                                  "), got " + seen.text(at + ".start") +
                                  ": each worker needs at least one connection");
  }
  if (!spec.variants.empty()) {
    errors.add("spec.search", "not with spec.variants: a search runs one target");
  }
  if (spec.baseline) {
    errors.add("spec.baseline", "not with spec.search: each step is judged by spec.thresholds");
  }
  if (spec.thresholds.empty()) {
    errors.add("spec.thresholds",
               "required with spec.search: they decide whether a step passes (e.g. \"p99 < "
               "100ms\")");
  }
  for (const char* field : {"rate", "connections", "stages", "maxConnections", "requests"}) {
    const std::string path = std::string("spec.load.") + field;
    if (seen.has(path)) {
      errors.add(path, "not with spec.search: each step sets its own " + over +
                           " and lasts spec.load.duration");
    }
  }
  if (!seen.malformed("spec.load") && !seen.has("spec.load.duration")) {
    errors.add("spec.load.duration", "required with spec.search (each step's length)");
  }
}

void apply_cross_field_rules(LoadTestSpec& spec, const DecodedFields& seen, FieldErrors& errors) {
  // A target or load that is not even a map was reported as such; its
  // missing fields would only repeat that.
  if (!spec.variants.empty()) {
    for (const char* field : {"url", "service", "podSelector"}) {
      const std::string path = std::string("spec.target.") + field;
      if (seen.has(path))
        errors.add(path,
                   "is each variant's own with spec.variants: set it in spec.variants[].target");
    }
  } else if (!seen.malformed("spec.target") &&
             seen.has("spec.target.url") == seen.has("spec.target.service")) {
    errors.add("spec.target", "exactly one of url or service is required");
  }
  if (spec.variants.empty()) {
    target_rules(spec, spec.url, spec.service, seen, errors);
  } else {
    for (const VariantSpec& variant : spec.variants) {
      target_rules(spec, variant.url, variant.service, seen, errors);
    }
  }
  experiment_rules(spec, seen, errors);
  search_rules(spec, seen, errors);
  if (spec.load.max_streams > 1 && spec.protocol == Protocol::http1) {
    errors.add("spec.load.maxStreams", "only with spec.target.protocol http2 or h2c, got " +
                                           std::to_string(spec.load.max_streams) + " with http1");
  }

  // An explicit empty list means the same as no list, as in Kubernetes.
  if (spec.requests.empty()) {
    RequestSpec implicit;
    implicit.name = "default";
    spec.requests.push_back(std::move(implicit));
  }
  std::set<std::string> request_names;
  for (size_t i = 0; i < spec.requests.size(); ++i) {
    const std::string& name = spec.requests[i].name;
    if (!name.empty() && !request_names.insert(name).second) {
      errors.add(seen.request_paths[i] + ".name", "duplicate name " + quote(name));
    }
  }

  if (!seen.malformed("spec.load")) load_rules(spec, seen, errors);

  for (size_t i = 0; i < spec.thresholds.size(); ++i) {
    if (std::string problem = threshold_row_problem(spec.thresholds[i], spec); !problem.empty()) {
      errors.add(seen.threshold_paths[i], std::move(problem));
    }
  }

  if (spec.baseline && spec.baseline->last_passed &&
      spec.labels.count(std::string(kTestLabel)) == 0) {
    errors.add("spec.baseline.lastPassed", "needs the label " + std::string(kTestLabel) +
                                               " in metadata.labels (it names the test)");
  }
}

}  // namespace kubeload::spec_parser
