#include "kubeload/spec.hpp"
#include "kubeload/spec_yaml.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <exception>
#include <functional>
#include <set>
#include <sstream>
#include <system_error>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>

#include "kubeload/duration.hpp"
#include "kubeload/names.hpp"
#include "kubeload/text.hpp"
#include "kubeload/url.hpp"

namespace kubeload {
namespace {

using std::chrono::nanoseconds;

constexpr std::string_view kApiVersion = "kubeload.dev/v1alpha1";
constexpr std::string_view kKind = "LoadTest";
constexpr const char* kNamespaceRule =
    ": must be a lowercase RFC 1123 label (a-z, 0-9 and '-', at most 63 characters)";

// ---- characters (the name rules are kubeload/names.hpp's) ------------------

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_upper(char c) {
  return c >= 'A' && c <= 'Z';
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return is_upper(c) ? static_cast<char>(c - 'A' + 'a') : c; });
  return out;
}

// Long paths are cut in messages (kubeload/text.hpp's quote cuts values).
constexpr size_t kMaxPathBytes = 300;

// Why a URL cannot be a target, or nothing when it can (kubeload/url.hpp).
std::optional<std::string> url_problem(std::string_view url) {
  const auto parsed = parse_http_url(url);
  if (const auto* problem = std::get_if<std::string>(&parsed)) return *problem;
  return std::nullopt;
}

std::string node_kind(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "map";
    case YAML::NodeType::Sequence:
      return "list";
    case YAML::NodeType::Null:
      return "null";
    default:
      return quote(node.Scalar());
  }
}

// Quoted scalars ('10', "10", and every JSON string) are strings even when
// they look like numbers, as in Kubernetes' own decoding.
bool is_quoted(const YAML::Node& node) {
  return node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str";
}

// Counts the nodes of the document as a tree, visiting aliased nodes once per
// reference, and stops as soon as `limit` is passed. Iterative, so deep
// nesting cannot overflow the stack.
bool tree_fits(const YAML::Node& root, size_t limit) {
  // push_back rather than an initializer list: GCC 12 at -O3 reports a false
  // -Wfree-nonheap-object on the latter.
  std::vector<YAML::Node> pending;
  pending.push_back(root);
  size_t counted = 1;  // counting on push keeps `pending` within the limit too
  const auto push = [&](const YAML::Node& node) {
    pending.push_back(node);
    return ++counted <= limit;
  };
  while (!pending.empty()) {
    const YAML::Node node = pending.back();
    pending.pop_back();
    if (node.IsSequence()) {
      for (const YAML::Node& child : node) {
        if (!push(child)) return false;
      }
    } else if (node.IsMap()) {
      for (const auto& entry : node) {
        if (!push(entry.first) || !push(entry.second)) return false;
      }
    }
  }
  return counted <= limit;
}

// yaml-cpp spends about half a kilobyte and several microseconds per node
// while building a document, so a few megabytes of "[1,1,1,..." would cost
// gigabytes. Counting the parser's events first, and stopping at the limit,
// bounds both before any node is built.
class NodeCounter final : public YAML::EventHandler {
 public:
  static bool fits(const std::string& text, size_t limit) {
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    NodeCounter counter(limit);
    try {
      while (parser.HandleNextDocument(counter)) {
      }
    } catch (const LimitReached&) {
      return false;
    }
    return true;
  }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { count(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { count(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    count();
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    count();
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    count();
  }
  void OnMapEnd() override {}

 private:
  struct LimitReached {};
  explicit NodeCounter(size_t limit) : limit_(limit) {}
  void count() {
    if (++nodes_ > limit_) throw LimitReached{};
  }

  size_t limit_;
  size_t nodes_ = 0;
};

// What the decoder has seen, beyond the values themselves: cross-field rules
// need to know that a field was written even when its value was invalid.
struct Presence {
  bool api_version = false, kind = false, spec = false, name = false;
  bool url = false, service = false, requests = false, service_port = false;
  bool connections = false, rate = false, max_connections = false, duration = false;
  bool load_requests = false, warmup = false, warmup_requests = false, baseline_name = false;
  bool max_regression = false, target_malformed = false, load_malformed = false;
  bool tls = false;
  std::string connections_text, rate_text;  // as written, for the messages that name them
  std::vector<bool> stage_connections, stage_rate, stage_duration;
  std::vector<std::string> stage_paths;
};

using FieldHandler =
    std::function<bool(std::string_view key, const YAML::Node& value, const std::string& path)>;

// Walks one manifest into a LoadTestSpec, collecting every problem on the way.
class Decoder {
 public:
  ParsedLoadTest decode(const YAML::Node& root) {
    if (!root.IsDefined() || root.IsNull()) {
      error("", "empty document, expected a LoadTest manifest");
      return finish();
    }
    if (!tree_fits(root, kMaxManifestNodes)) {
      error("", "document too large: more than " + std::to_string(kMaxManifestNodes) +
                    " nodes with aliases expanded");
      return finish();
    }
    if (!root.IsMap()) {
      error("", "expected a LoadTest manifest (a map), got " + node_kind(root));
      return finish();
    }
    std::string api_version, kind;
    bool spec_is_map = false;
    fields(root, "", [&](std::string_view key, const YAML::Node& value, const std::string& path) {
      if (key == "apiVersion") {
        seen_.api_version = true;
        if (auto text = string(value, path)) api_version = *text;
      } else if (key == "kind") {
        seen_.kind = true;
        if (auto text = string(value, path)) kind = *text;
      } else if (key == "metadata") {
        metadata(value, path);
      } else if (key == "spec") {
        seen_.spec = true;
        spec_is_map = spec(value, path);
      } else if (key != "status") {  // status is the operator's; the API server returns it
        return false;
      }
      return true;
    });
    if (!seen_.api_version) {
      error("apiVersion", "required");
    } else if (api_version != kApiVersion) {
      error("apiVersion", "must be " + quote(kApiVersion) + ", got " + quote(api_version));
    }
    if (!seen_.kind) {
      error("kind", "required");
    } else if (kind != kKind) {
      error("kind", "must be " + quote(kKind) + ", got " + quote(kind));
    }
    if (!seen_.name) error("metadata.name", "required");
    if (!seen_.spec) error("spec", "required");
    if (spec_is_map) cross_field_rules();
    return finish();
  }

  // Paths hold field names as written, and messages hold values and yaml-cpp's
  // text, so both are made printable.
  void error(const std::string& path, const std::string& message) {
    std::string shown_path = printable(utf8_head(path, kMaxPathBytes));
    if (path.size() > kMaxPathBytes) shown_path += "...";
    result_.errors.push_back({std::move(shown_path), printable(message)});
  }

  ParsedLoadTest finish() { return std::move(result_); }

 private:
  LoadTestSpec& out() { return result_.spec; }

  static std::string join(const std::string& path, std::string_view key) {
    return path.empty() ? std::string(key) : path + "." + std::string(key);
  }
  static std::string index(const std::string& path, size_t i) {
    return path + "[" + std::to_string(i) + "]";
  }

  // ---- shapes and scalars --------------------------------------------------

  // Calls `handle` for each field of a map. Null values count as absent, as
  // in Kubernetes. Duplicates and fields `handle` does not know are errors.
  bool fields(const YAML::Node& node, const std::string& path, const FieldHandler& handle) {
    if (!node.IsMap()) {
      error(path, "must be a map, got " + node_kind(node));
      return false;
    }
    std::set<std::string, std::less<>> keys;
    for (const auto& entry : node) {
      if (!entry.first.IsScalar()) {
        error(path, "field names must be strings, got " + node_kind(entry.first));
        continue;
      }
      const std::string& key = entry.first.Scalar();
      const std::string field_path = join(path, key);
      if (!keys.insert(key).second) {
        error(field_path, "duplicate field");
        continue;
      }
      if (entry.second.IsNull()) continue;
      if (!handle(key, entry.second, field_path)) error(field_path, "unknown field");
    }
    return true;
  }

  template <typename Each>
  void list(const YAML::Node& node, const std::string& path, size_t max_items, Each each) {
    if (!node.IsSequence()) {
      error(path, "must be a list, got " + node_kind(node));
      return;
    }
    if (node.size() > max_items) {
      error(path,
            "at most " + std::to_string(max_items) + " items, got " + std::to_string(node.size()));
      return;
    }
    size_t i = 0;
    for (const YAML::Node& item : node) {
      each(item, index(path, i));
      ++i;
    }
  }

  std::optional<std::string> string(const YAML::Node& node, const std::string& path) {
    if (!node.IsScalar()) {
      error(path, "must be a string, got " + node_kind(node));
      return std::nullopt;
    }
    return node.Scalar();
  }

  // A string of at most max_bytes bytes.
  std::optional<std::string> bounded_string(const YAML::Node& node, const std::string& path,
                                            size_t max_bytes) {
    auto text = string(node, path);
    if (text && text->size() > max_bytes) {
      error(path,
            "at most " + std::to_string(max_bytes) + " bytes, got " + std::to_string(text->size()));
      return std::nullopt;
    }
    return text;
  }

  // A plain (unquoted) decimal integer.
  std::optional<int64_t> integer(const YAML::Node& node, const std::string& path) {
    const std::string& text = node.Scalar();
    int64_t value = 0;
    if (node.IsScalar() && !is_quoted(node)) {
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec == std::errc() && end == text.data() + text.size() && !text.empty()) return value;
      if (ec == std::errc::result_out_of_range) {
        error(path, "out of range, got " + text);
        return std::nullopt;
      }
    }
    error(path, "must be an integer, got " + describe(node));
    return std::nullopt;
  }

  // A plain (unquoted) finite decimal number.
  std::optional<double> number(const YAML::Node& node, const std::string& path) {
    const std::string& text = node.Scalar();
    if (node.IsScalar() && !is_quoted(node) && !text.empty() &&
        (is_digit(text.front()) || text.front() == '-' || text.front() == '.')) {
      double value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec == std::errc() && end == text.data() + text.size() && std::isfinite(value)) {
        return value;
      }
    }
    error(path, "must be a number, got " + describe(node));
    return std::nullopt;
  }

  std::optional<bool> boolean(const YAML::Node& node, const std::string& path) {
    if (node.IsScalar() && !is_quoted(node)) {
      const std::string text = lowercase(node.Scalar());
      if (text == "true") return true;
      if (text == "false") return false;
    }
    error(path, "must be true or false, got " + describe(node));
    return std::nullopt;
  }

  // An integer in [min, max]; nullopt (with the error reported) otherwise.
  std::optional<uint64_t> count(const YAML::Node& node, const std::string& path, int64_t min,
                                std::optional<int64_t> max = std::nullopt) {
    const std::optional<int64_t> value = integer(node, path);
    if (!value) return std::nullopt;
    if (*value < min || (max && *value > *max)) {
      if (max) {
        error(path, "must be between " + std::to_string(min) + " and " + std::to_string(*max) +
                        ", got " + node.Scalar());
      } else {
        error(path, "must be >= " + std::to_string(min) + ", got " + node.Scalar());
      }
      return std::nullopt;
    }
    return static_cast<uint64_t>(*value);
  }

  std::optional<double> positive_number(const YAML::Node& node, const std::string& path) {
    const std::optional<double> value = number(node, path);
    if (!value) return std::nullopt;
    if (*value <= 0) {
      error(path, "must be > 0, got " + node.Scalar());
      return std::nullopt;
    }
    return value;
  }

  std::optional<nanoseconds> duration(const YAML::Node& node, const std::string& path,
                                      bool zero_allowed) {
    if (!node.IsScalar()) {
      error(path, "must be a duration like \"30s\", got " + node_kind(node));
      return std::nullopt;
    }
    const std::string& text = node.Scalar();
    const std::optional<nanoseconds> value = parse_duration(text);
    if (!value) {
      std::string message = "invalid duration " + quote(text);
      if (!text.empty() && std::all_of(text.begin(), text.end(), is_digit)) {
        message += " (a unit is required, e.g. \"" + text + "s\")";
      } else if (text.starts_with('-')) {
        message += " (must not be negative)";
      }
      error(path, message);
      return std::nullopt;
    }
    if (!zero_allowed && value->count() == 0) {
      error(path, "must be > 0, got " + quote(text));
      return std::nullopt;
    }
    if (*value > kMaxRunLength) {
      error(path, "must be at most " + format_duration(kMaxRunLength) + ", got " + quote(text));
      return std::nullopt;
    }
    return value;
  }

  // Requests per second, bounded so that intervals (1 / rate) and request counts
  // (rate * duration) stay inside 64-bit arithmetic.
  std::optional<double> rate(const YAML::Node& node, const std::string& path) {
    const std::optional<double> value = positive_number(node, path);
    if (!value) return std::nullopt;
    const double min_rate = 1.0 / std::chrono::duration<double>(kMaxRunLength).count();
    if (*value > kMaxRate || *value < min_rate) {
      error(path, "must be between one request per " + format_duration(kMaxRunLength) + " and " +
                      std::to_string(static_cast<uint64_t>(kMaxRate)) +
                      " requests per second, got " + node.Scalar());
      return std::nullopt;
    }
    return value;
  }

  static std::string describe(const YAML::Node& node) {
    if (node.IsScalar() && is_quoted(node)) return "string " + quote(node.Scalar());
    if (node.IsScalar()) return node.Scalar();
    return node_kind(node);
  }

  // ---- sections ------------------------------------------------------------

  void metadata(const YAML::Node& node, const std::string& path) {
    // Only these three are ours; the API server adds uid, resourceVersion,
    // managedFields and more, which the operator passes back in.
    fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
      if (key == "name") {
        seen_.name = true;
        const auto name = string(value, at);
        if (name && !is_dns1123_subdomain(*name)) {
          error(at, "invalid name " + quote(*name) +
                        ": must be a lowercase RFC 1123 subdomain (a-z, 0-9, '-' and '.', "
                        "starting and ending with a letter or digit, at most 253 characters)");
        } else if (name) {
          out().name = *name;
        }
      } else if (key == "namespace") {
        const auto name = string(value, at);
        if (name && !is_dns1123_label(*name)) {
          error(at, "invalid namespace " + quote(*name) + kNamespaceRule);
        } else if (name) {
          out().namespace_ = *name;
        }
      } else if (key == "labels") {
        labels(value, at);
      }
      return true;
    });
  }

  void labels(const YAML::Node& node, const std::string& path) {
    fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
      if (!is_qualified_name(key)) {
        error(path, "invalid label key " + quote(key));
        return true;
      }
      const auto text = string(value, at);
      if (!text) return true;
      if (!is_label_value(*text)) {
        error(at, "invalid label value " + quote(*text) +
                      ": at most 63 letters, digits, '-', '_' and '.', starting and ending with "
                      "a letter or digit");
        return true;
      }
      out().labels[std::string(key)] = *text;
      return true;
    });
  }

  bool spec(const YAML::Node& node, const std::string& path) {
    return fields(
        node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
          if (key == "target") {
            seen_.target_malformed = !value.IsMap();
            target(value, at);
          } else if (key == "requests") {
            seen_.requests = true;
            list(value, at, kMaxRequests,
                 [&](const YAML::Node& item, const std::string& item_path) {
                   request(item, item_path);
                 });
          } else if (key == "load") {
            seen_.load_malformed = !value.IsMap();
            load(value, at);
          } else if (key == "workers") {
            if (auto workers = count(value, at, 1, kMaxWorkers)) {
              out().workers = static_cast<uint32_t>(*workers);
            }
          } else if (key == "ttlSecondsAfterFinished") {
            if (auto ttl = count(value, at, 0)) {
              out().ttl_after_finished = std::chrono::seconds(static_cast<int64_t>(*ttl));
            }
          } else if (key == "workerTemplate") {
            worker_template(value, at);
          } else if (key == "thresholds") {
            list(value, at, kMaxThresholds,
                 [&](const YAML::Node& item, const std::string& item_path) {
                   threshold(item, item_path);
                 });
          } else if (key == "baseline") {
            baseline(value, at);
          } else if (key == "cleanup") {
            cleanup(value, at);
          } else if (key == "timeouts") {
            fields(value, at, [&](std::string_view k, const YAML::Node& v, const std::string& p) {
              if (k == "start") {
                if (auto start = duration(v, p, false)) out().start_timeout = *start;
              } else if (k == "run") {
                if (auto run = duration(v, p, false)) out().run_timeout = *run;
              } else {
                return false;
              }
              return true;
            });
          } else {
            return false;
          }
          return true;
        });
  }

  void target(const YAML::Node& node, const std::string& path) {
    fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
      if (key == "url") {
        seen_.url = true;
        const auto url = string(value, at);
        if (!url) return true;
        if (auto problem = url_problem(*url)) {
          error(at, *problem);
        } else {
          out().url = *url;
        }
      } else if (key == "service") {
        seen_.service = true;
        service(value, at);
      } else if (key == "tls") {
        seen_.tls = true;
        tls(value, at);
      } else if (key == "protocol") {
        if (const auto name = string(value, at)) {
          if (const auto protocol = parse_protocol(*name)) {
            out().protocol = *protocol;
          } else {
            error(at, "must be one of http1, http2, h2c, got " + quote(*name));
          }
        }
      } else if (key == "allowInsecureSecretHeaders") {
        if (auto allow = boolean(value, at)) out().allow_insecure_secret_headers = *allow;
      } else if (key == "podSelector") {
        out().pod_selector = label_selector(value, at);
      } else {
        return false;
      }
      return true;
    });
  }

  // A metav1.LabelSelector that selects something: an empty one would select
  // every pod of the namespace.
  std::optional<LabelSelector> label_selector(const YAML::Node& node, const std::string& path) {
    LabelSelector selector;
    const size_t errors_before = result_.errors.size();
    const bool is_map = fields(
        node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
          if (key == "matchLabels") {
            if (value.IsMap() && value.size() > kMaxSelectorTerms) {
              error(at, "at most " + std::to_string(kMaxSelectorTerms) + " labels, got " +
                            std::to_string(value.size()));
              return true;
            }
            fields(value, at,
                   [&](std::string_view label, const YAML::Node& v, const std::string& p) {
                     if (!is_qualified_name(label)) {
                       error(at, "invalid label key " + quote(label));
                     } else if (const auto text = string(v, p); text && !is_label_value(*text)) {
                       error(p, "invalid label value " + quote(*text));
                     } else if (text) {
                       selector.match_labels[std::string(label)] = *text;
                     }
                     return true;
                   });
          } else if (key == "matchExpressions") {
            list(value, at, kMaxSelectorTerms, [&](const YAML::Node& item, const std::string& p) {
              if (auto requirement = label_requirement(item, p)) {
                selector.match_expressions.push_back(std::move(*requirement));
              }
            });
          } else {
            return false;
          }
          return true;
        });
    if (!is_map || result_.errors.size() != errors_before) return std::nullopt;
    if (selector.empty()) {
      error(path, "selects every pod of the namespace: give matchLabels or matchExpressions");
      return std::nullopt;
    }
    return selector;
  }

  std::optional<LabelRequirement> label_requirement(const YAML::Node& node,
                                                    const std::string& path) {
    LabelRequirement requirement;
    std::optional<std::string> op;
    bool has_values = false;
    const size_t errors_before = result_.errors.size();
    fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
      if (key == "key") {
        if (const auto text = string(value, at); text && !is_qualified_name(*text)) {
          error(at, "invalid label key " + quote(*text));
        } else if (text) {
          requirement.key = *text;
        }
      } else if (key == "operator") {
        op = string(value, at);
      } else if (key == "values") {
        has_values = true;
        list(value, at, kMaxSelectorTerms, [&](const YAML::Node& item, const std::string& p) {
          if (const auto text = string(item, p); text && !is_label_value(*text)) {
            error(p, "invalid label value " + quote(*text));
          } else if (text) {
            requirement.values.push_back(*text);
          }
        });
      } else {
        return false;
      }
      return true;
    });
    if (result_.errors.size() != errors_before) return std::nullopt;
    if (requirement.key.empty()) error(join(path, "key"), "required");
    if (!op) {
      error(join(path, "operator"), "required: In, NotIn, Exists or DoesNotExist");
    } else if (*op == "In" || *op == "NotIn") {
      requirement.op =
          *op == "In" ? LabelRequirement::Operator::In : LabelRequirement::Operator::NotIn;
      if (requirement.values.empty()) error(join(path, "values"), "required for " + *op);
    } else if (*op == "Exists" || *op == "DoesNotExist") {
      requirement.op = *op == "Exists" ? LabelRequirement::Operator::Exists
                                       : LabelRequirement::Operator::DoesNotExist;
      if (has_values) error(join(path, "values"), "must be empty for " + *op);
    } else {
      error(join(path, "operator"),
            "must be one of In, NotIn, Exists, DoesNotExist, got " + quote(*op));
    }
    if (result_.errors.size() != errors_before) return std::nullopt;
    return requirement;
  }

  void tls(const YAML::Node& node, const std::string& path) {
    TlsSpec& tls = out().tls;
    fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
      if (key == "insecureSkipVerify") {
        if (auto skip = boolean(value, at)) tls.insecure_skip_verify = *skip;
      } else if (key == "caFrom") {
        ca_from(value, at);
      } else {
        return false;
      }
      return true;
    });
    if (tls.insecure_skip_verify && tls.ca_from) {
      error(path, "insecureSkipVerify and caFrom exclude each other: a CA is used to verify");
    }
  }

  // caFrom: exactly one of secretKeyRef or configMapKeyRef, each {name, key}.
  void ca_from(const YAML::Node& node, const std::string& path) {
    std::optional<ObjectKeyRef> found;
    int refs = 0;
    const bool is_map = fields(
        node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
          ObjectKeyRef ref;
          if (key == "secretKeyRef") {
            ref.kind = ObjectKeyRef::Kind::secret;
          } else if (key == "configMapKeyRef") {
            ref.kind = ObjectKeyRef::Kind::config_map;
          } else {
            return false;
          }
          ++refs;
          bool name_seen = false, key_seen = false;
          const bool ref_is_map =
              fields(value, at, [&](std::string_view k, const YAML::Node& v, const std::string& p) {
                if (k == "name") {
                  name_seen = true;
                  const auto name = string(v, p);
                  if (name && !is_dns1123_subdomain(*name)) {
                    error(p, "invalid name " + quote(*name));
                  } else if (name) {
                    ref.name = *name;
                  }
                } else if (k == "key") {
                  key_seen = true;
                  const auto object_key = string(v, p);
                  if (object_key && !is_secret_key(*object_key)) {
                    error(p, "invalid key " + quote(*object_key));
                  } else if (object_key) {
                    ref.key = *object_key;
                  }
                } else {
                  return false;
                }
                return true;
              });
          if (ref_is_map) {
            if (!name_seen) error(join(at, "name"), "required");
            if (!key_seen) error(join(at, "key"), "required");
            if (name_seen && key_seen && !ref.name.empty() && !ref.key.empty()) found = ref;
          }
          return true;
        });
    if (!is_map) return;
    if (refs != 1) {
      error(path, "exactly one of secretKeyRef or configMapKeyRef is required");
      return;
    }
    out().tls.ca_from = found;
  }

  void service(const YAML::Node& node, const std::string& path) {
    ServiceRef ref;
    bool name_seen = false;
    fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
      if (key == "name") {
        name_seen = true;
        const auto name = string(value, at);
        if (name && !is_dns1035_label(*name)) {
          error(at, "invalid service name " + quote(*name) +
                        ": must be a lowercase RFC 1035 label (a-z, 0-9 and '-', starting with "
                        "a letter, at most 63 characters)");
        } else if (name) {
          ref.name = *name;
        }
      } else if (key == "namespace") {
        const auto name = string(value, at);
        if (name && !is_dns1123_label(*name)) {
          error(at, "invalid namespace " + quote(*name) + kNamespaceRule);
        } else if (name) {
          ref.namespace_ = *name;
        }
      } else if (key == "port") {
        seen_.service_port = true;
        if (auto port = count(value, at, 1, 65535)) ref.port = static_cast<uint16_t>(*port);
      } else if (key == "scheme") {
        const auto scheme = string(value, at);
        if (scheme && *scheme != "http" && *scheme != "https") {
          error(at, "must be one of http, https, got " + quote(*scheme));
        } else if (scheme) {
          ref.scheme = *scheme;
        }
      } else {
        return false;
      }
      return true;
    });
    if (!node.IsMap()) return;
    if (!name_seen) error(join(path, "name"), "required");
    if (!seen_.service_port) ref.port = ref.scheme == "https" ? 443 : 80;
    out().service = ref;
  }

  void request(const YAML::Node& node, const std::string& path) {
    RequestSpec spec;
    std::vector<std::string> header_from_paths;  // where each entry of spec.headers_from was
    bool name_seen = false;
    const bool is_map = fields(
        node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
          if (key == "name") {
            name_seen = true;
            const auto name = string(value, at);
            if (name && !is_request_name(*name)) {
              error(at, "invalid name " + quote(*name) +
                            ": must match [a-z0-9]([-a-z0-9_]*[a-z0-9])? (names become metric "
                            "labels)");
            } else if (name) {
              spec.name = *name;
            }
          } else if (key == "method") {
            const auto method = string(value, at);
            if (method && !is_http_method(*method)) {
              error(at, "invalid method " + quote(*method) +
                            ": must be an upper-case HTTP token such as GET or POST");
            } else if (method) {
              spec.method = *method;
            }
          } else if (key == "path") {
            const auto target_path = string(value, at);
            if (!target_path) return true;
            if (!target_path->starts_with('/')) {
              error(at, "must start with '/', got " + quote(*target_path));
            } else if (has_space_or_control(*target_path)) {
              error(at,
                    "must not contain spaces or control characters, got " + quote(*target_path));
            } else {
              spec.path = *target_path;
            }
          } else if (key == "headers") {
            headers(value, at, spec);
          } else if (key == "headersFrom") {
            list(value, at, kMaxHeadersFrom,
                 [&](const YAML::Node& item, const std::string& item_path) {
                   if (header_from(item, item_path, spec)) header_from_paths.push_back(item_path);
                 });
          } else if (key == "body") {
            if (auto body = bounded_string(value, at, kMaxBodyBytes)) spec.body = *body;
          } else if (key == "weight") {
            if (auto weight = count(value, at, 1, kMaxWeight)) {
              spec.weight = static_cast<uint32_t>(*weight);
            }
          } else if (key == "expect") {
            expect(value, at, spec.expect);
          } else {
            return false;
          }
          return true;
        });
    if (!is_map) return;
    if (!name_seen) error(join(path, "name"), "required");
    // A header given twice would be sent twice.
    std::set<std::string> names;
    for (const auto& [name, value] : spec.headers) names.insert(lowercase(name));
    for (size_t i = 0; i < spec.headers_from.size(); ++i) {
      const std::string& name = spec.headers_from[i].name;
      if (name.empty()) continue;  // reported as required
      if (!names.insert(lowercase(name)).second) {
        error(header_from_paths[i] + ".name", "header " + quote(name) + " is set twice");
      }
    }
    out().requests.push_back(std::move(spec));
    request_paths_.push_back(path);
  }

  void headers(const YAML::Node& node, const std::string& path, RequestSpec& spec) {
    if (node.IsMap() && node.size() > kMaxHeaders) {
      error(path, "at most " + std::to_string(kMaxHeaders) + " headers, got " +
                      std::to_string(node.size()));
      return;
    }
    std::set<std::string> names;
    fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
      const auto text = bounded_string(value, at, kMaxHeaderValueBytes);
      if (!is_http_token(key)) {
        error(path, "invalid header name " + quote(key));
      } else if (!names.insert(lowercase(key)).second) {
        error(path, "duplicate header " + quote(key));
      } else if (const std::string lower = lowercase(key);
                 lower == "content-length" || lower == "transfer-encoding") {
        // loadgen frames the body itself; a second framing header would
        // make every request malformed.
        error(path, "header " + quote(key) + " is set by loadgen from the body");
      } else if (text && header_value_breaks_line(*text)) {
        error(at, "must not contain CR, LF or NUL");
      } else if (text) {
        spec.headers.emplace_back(std::string(key), *text);
      }
      return true;
    });
  }

  // Adds the entry to spec.headers_from, or returns false when it is no map.
  bool header_from(const YAML::Node& node, const std::string& path, RequestSpec& spec) {
    HeaderFrom header;
    bool name_seen = false, ref_seen = false, ref_is_map = false;
    bool ref_name_seen = false, ref_key_seen = false;
    const bool is_map = fields(
        node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
          if (key == "name") {
            name_seen = true;
            const auto name = string(value, at);
            if (name && !is_http_token(*name)) {
              error(at, "invalid header name " + quote(*name));
            } else if (name) {
              header.name = *name;
            }
          } else if (key == "secretKeyRef") {
            ref_seen = true;
            ref_is_map = fields(value, at,
                                [&](std::string_view k, const YAML::Node& v, const std::string& p) {
                                  if (k == "name") {
                                    ref_name_seen = true;
                                    const auto name = string(v, p);
                                    if (name && !is_dns1123_subdomain(*name)) {
                                      error(p, "invalid secret name " + quote(*name));
                                    } else if (name) {
                                      header.secret_key_ref.name = *name;
                                    }
                                  } else if (k == "key") {
                                    ref_key_seen = true;
                                    const auto secret_key = string(v, p);
                                    if (secret_key && !is_secret_key(*secret_key)) {
                                      error(p, "invalid secret key " + quote(*secret_key));
                                    } else if (secret_key) {
                                      header.secret_key_ref.key = *secret_key;
                                    }
                                  } else {
                                    return false;
                                  }
                                  return true;
                                });
          } else {
            return false;
          }
          return true;
        });
    if (!is_map) return false;
    if (!name_seen) error(join(path, "name"), "required");
    if (!ref_seen) {
      error(join(path, "secretKeyRef"), "required");
    } else if (ref_is_map) {
      if (!ref_name_seen) error(join(path, "secretKeyRef.name"), "required");
      if (!ref_key_seen) error(join(path, "secretKeyRef.key"), "required");
    }
    spec.headers_from.push_back(std::move(header));
    return true;
  }

  void expect(const YAML::Node& node, const std::string& path, Expectation& expectation) {
    fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
      if (key == "status") {
        list(value, at, kMaxExpectedStatuses,
             [&](const YAML::Node& item, const std::string& item_path) {
               if (auto code = count(item, item_path, 100, 599)) {
                 expectation.status.push_back(static_cast<int>(*code));
               }
             });
      } else if (key == "bodyLength") {
        if (auto length = count(value, at, 0)) expectation.body_length = *length;
      } else {
        return false;
      }
      return true;
    });
  }

  void load(const YAML::Node& node, const std::string& path) {
    LoadSpec& load = out().load;
    fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
      if (key == "connections") {
        seen_.connections = true;
        seen_.connections_text = describe(value);
        load.connections = count(value, at, 1);
      } else if (key == "rate") {
        seen_.rate = true;
        seen_.rate_text = describe(value);
        load.rate = rate(value, at);
      } else if (key == "maxConnections") {
        seen_.max_connections = true;
        load.max_connections = count(value, at, 1);
      } else if (key == "duration") {
        seen_.duration = true;
        load.duration = duration(value, at, false);
      } else if (key == "requests") {
        seen_.load_requests = true;
        load.requests = count(value, at, 1);
      } else if (key == "warmup") {
        seen_.warmup = true;
        load.warmup = duration(value, at, true);
      } else if (key == "warmupRequests") {
        seen_.warmup_requests = true;
        load.warmup_requests = count(value, at, 0);
      } else if (key == "stages") {
        list(value, at, kMaxStages,
             [&](const YAML::Node& item, const std::string& item_path) { stage(item, item_path); });
      } else if (key == "timeout") {
        if (auto timeout = duration(value, at, false)) load.timeout = *timeout;
      } else if (key == "keepAlive") {
        if (auto keep_alive = boolean(value, at)) load.keep_alive = *keep_alive;
      } else if (key == "maxStreams") {
        if (auto streams = count(value, at, 1, kMaxStreams)) {
          load.max_streams = static_cast<uint32_t>(*streams);
        }
      } else {
        return false;
      }
      return true;
    });
  }

  void stage(const YAML::Node& node, const std::string& path) {
    StageSpec stage;
    bool duration_seen = false, connections_seen = false, rate_seen = false;
    const bool is_map = fields(
        node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
          if (key == "duration") {
            duration_seen = true;
            if (auto length = duration(value, at, false)) stage.duration = *length;
          } else if (key == "connections") {
            connections_seen = true;
            stage.connections = count(value, at, 1);
          } else if (key == "rate") {
            rate_seen = true;
            stage.rate = rate(value, at);
          } else {
            return false;
          }
          return true;
        });
    if (!is_map) return;
    if (!duration_seen) error(join(path, "duration"), "required");
    seen_.stage_duration.push_back(duration_seen);
    seen_.stage_connections.push_back(connections_seen);
    seen_.stage_rate.push_back(rate_seen);
    seen_.stage_paths.push_back(path);
    out().load.stages.push_back(stage);
  }

  void worker_template(const YAML::Node& node, const std::string& path) {
    WorkerTemplate& pod = out().worker_template;
    fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
      if (key == "image") {
        if (auto image = bounded_string(value, at, kMaxImageBytes)) pod.image = *image;
      } else if (key == "resources" || key == "affinity") {
        if (!value.IsMap()) error(at, "must be a map, got " + node_kind(value));
      } else if (key == "nodeSelector") {
        fields(value, at, [&](std::string_view, const YAML::Node& v, const std::string& p) {
          string(v, p);
          return true;
        });
      } else if (key == "tolerations") {
        if (!value.IsSequence()) error(at, "must be a list, got " + node_kind(value));
      } else {
        return false;
      }
      return true;
    });
  }

  void threshold(const YAML::Node& node, const std::string& path) {
    const auto text = string(node, path);
    if (!text) return;
    auto parsed = parse_threshold(*text);
    if (auto* message = std::get_if<std::string>(&parsed)) {
      error(path, *message);
      return;
    }
    out().thresholds.push_back(std::get<Threshold>(std::move(parsed)));
    threshold_paths_.push_back(path);
  }

  void baseline(const YAML::Node& node, const std::string& path) {
    BaselineSpec baseline;
    const bool is_map = fields(
        node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
          if (key == "loadTestName") {
            seen_.baseline_name = true;
            const auto name = string(value, at);
            if (name && !is_dns1123_subdomain(*name)) {
              error(at,
                    "invalid name " + quote(*name) + ": must be a lowercase RFC 1123 subdomain");
            } else if (name) {
              baseline.load_test_name = *name;
            }
          } else if (key == "lastPassed") {
            if (auto last_passed = boolean(value, at)) baseline.last_passed = *last_passed;
          } else if (key == "maxRegression") {
            seen_.max_regression = true;
            max_regression(value, at, baseline);
          } else {
            return false;
          }
          return true;
        });
    if (!is_map) return;
    if (seen_.baseline_name == baseline.last_passed) {
      error(path, "exactly one of loadTestName or lastPassed: true is required");
    }
    if (!seen_.max_regression) error(join(path, "maxRegression"), "required");
    out().baseline = std::move(baseline);
  }

  void max_regression(const YAML::Node& node, const std::string& path, BaselineSpec& baseline) {
    static constexpr std::array<std::string_view, 9> kMetrics{
        "p50", "p90", "p95", "p99", "p999", "mean", "max", "rps", "errorRate"};
    const bool is_map = fields(
        node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
          if (std::find(kMetrics.begin(), kMetrics.end(), key) == kMetrics.end()) {
            error(at, "unknown metric " + quote(key) +
                          " (one of p50, p90, p95, p99, p999, mean, max, rps, errorRate)");
            return true;
          }
          const std::string& text = value.Scalar();
          double percent = -1;
          if (value.IsScalar() && text.size() >= 2 && text.back() == '%' &&
              is_digit(text.front())) {
            const auto [end, ec] =
                std::from_chars(text.data(), text.data() + text.size() - 1, percent);
            if (ec != std::errc() || end != text.data() + text.size() - 1 ||
                !std::isfinite(percent)) {
              percent = -1;
            }
          }
          if (percent < 0) {
            error(at, "must be a percentage like \"10%\", got " + describe(value));
          } else {
            baseline.max_regression_percent[std::string(key)] = percent;
          }
          return true;
        });
    if (is_map && node.size() == 0) error(path, "at least one metric is required");
  }

  void cleanup(const YAML::Node& node, const std::string& path) {
    fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
      if (key != "policy") return false;
      const auto policy = string(value, at);
      if (!policy) return true;
      if (*policy == "Always") {
        out().cleanup = CleanupPolicy::Always;
      } else if (*policy == "OnSuccess") {
        out().cleanup = CleanupPolicy::OnSuccess;
      } else if (*policy == "Never") {
        out().cleanup = CleanupPolicy::Never;
      } else {
        error(at, "must be one of Always, OnSuccess, Never, got " + quote(*policy));
      }
      return true;
    });
  }

  // ---- rules across fields, once everything is read -------------------------

  void cross_field_rules() {
    LoadTestSpec& spec = out();
    // A target or load that is not even a map was reported as such; its
    // missing fields would only repeat that.
    if (!seen_.target_malformed && seen_.url == seen_.service) {
      error("spec.target", "exactly one of url or service is required");
    }
    const bool https_target = (spec.url && spec.url->size() > 8 &&
                               std::equal(spec.url->begin(), spec.url->begin() + 8, "https://",
                                          [](char a, char b) { return std::tolower(a) == b; })) ||
                              (spec.service && spec.service->scheme == "https");
    if ((spec.url || spec.service) && spec.protocol == Protocol::http2 && !https_target) {
      error("spec.target.protocol",
            "http2 needs an https target (ALPN h2); use h2c for cleartext HTTP/2");
    }
    if ((spec.url || spec.service) && spec.protocol == Protocol::h2c && https_target) {
      error("spec.target.protocol", "h2c is cleartext HTTP/2; use http2 for an https target");
    }
    if (spec.load.max_streams > 1 && spec.protocol == Protocol::http1) {
      error("spec.load.maxStreams", "only with spec.target.protocol http2 or h2c, got " +
                                        std::to_string(spec.load.max_streams) + " with http1");
    }
    if (seen_.tls && (spec.url || spec.service) && !https_target) {
      error("spec.target.tls", "only for https targets (an https:// url or service scheme https)");
    }
    // A Secret's value is a credential: it goes only where nobody on the way
    // can read it and only to the server the certificate names, unless the
    // author says otherwise in so many words.
    if ((spec.url || spec.service) && !spec.allow_insecure_secret_headers) {
      const char* problem =
          !https_target ? "a Secret's value would be sent over plain http: use an https target"
          : spec.tls.insecure_skip_verify
              ? "a Secret's value would be sent to a server whose certificate is not verified "
                "(spec.target.tls.insecureSkipVerify): verify it (spec.target.tls.caFrom)"
              : nullptr;
      for (size_t i = 0; problem != nullptr && i < spec.requests.size(); ++i) {
        if (spec.requests[i].headers_from.empty()) continue;
        error(request_paths_[i] + ".headersFrom",
              std::string(problem) + ", or set spec.target.allowInsecureSecretHeaders: true");
      }
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
        error(request_paths_[i] + ".name", "duplicate name " + quote(name));
      }
    }

    if (!seen_.load_malformed) load_rules();

    for (size_t i = 0; i < spec.thresholds.size(); ++i) {
      const Threshold& threshold = spec.thresholds[i];
      if (!threshold.request.empty() && request_names.count(threshold.request) == 0) {
        error(threshold_paths_[i],
              "unknown request " + quote(threshold.request) + " in " + quote(threshold.expression));
      }
    }

    if (spec.baseline && spec.baseline->last_passed &&
        spec.labels.count(std::string(kTestLabel)) == 0) {
      error("spec.baseline.lastPassed", "needs the label " + std::string(kTestLabel) +
                                            " in metadata.labels (it names the test)");
    }
  }

  void load_rules() {
    LoadSpec& load = out().load;
    const uint32_t workers = out().workers;
    const bool staged = !seen_.stage_duration.empty();
    // With stages, the first stage that gives a rate or connections sets the
    // model for all; without, rate does.
    std::optional<size_t> model_stage;
    for (size_t i = 0; i < seen_.stage_duration.size() && !model_stage; ++i) {
      if (seen_.stage_rate[i] != seen_.stage_connections[i]) model_stage = i;
    }
    const bool open = staged ? model_stage && seen_.stage_rate[*model_stage] : seen_.rate;

    if (staged) {
      // The stages set the load: a rate or connections beside them would be
      // ignored (the command line refuses -r and -c with --stages alike).
      if (seen_.rate) {
        error("spec.load.rate", "not valid with stages, got " + seen_.rate_text +
                                    " (each stage sets its own rate, e.g. {duration: 10s, rate: " +
                                    seen_.rate_text + "})");
      }
      if (seen_.connections) {
        error("spec.load.connections",
              "not valid with stages, got " + seen_.connections_text +
                  " (each stage sets its own connections, e.g. {duration: 10s, connections: " +
                  seen_.connections_text + "})");
      }
    } else if (open && seen_.connections) {
      error("spec.load.connections",
            "not valid with rate (open model); use maxConnections to cap connections");
    }
    if (!open && seen_.max_connections) {
      error("spec.load.maxConnections", "only valid with rate (open model)");
    }
    if (staged && seen_.duration) {
      error("spec.load.duration", "not valid with stages (the stages define the duration)");
    }
    if (!staged && !seen_.duration && !seen_.load_requests) {
      error("spec.load", "one of duration or requests is required");
    }
    if (seen_.warmup && seen_.warmup_requests) {
      error("spec.load", "warmup and warmupRequests are mutually exclusive");
    }

    // The planned length, summed with a check at every step: each part is at most
    // kMaxRunLength, so the running total never overflows before it is compared.
    const std::string too_long = "the run would last longer than " +
                                 format_duration(kMaxRunLength) + " (warmup, duration and stages)";
    nanoseconds planned = load.warmup.value_or(nanoseconds(0));
    const auto add_planned = [&](nanoseconds part, const std::string& path) {
      if (planned > kMaxRunLength) return;  // already reported
      planned += part;
      if (planned > kMaxRunLength) error(path, too_long);
    };
    if (load.duration) add_planned(*load.duration, "spec.load.duration");
    for (size_t i = 0; i < load.stages.size(); ++i) {
      add_planned(load.stages[i].duration, seen_.stage_paths[i] + ".duration");
    }
    if (open && load.rate && load.requests && !load.duration && !staged) {
      const double seconds = static_cast<double>(*load.requests) / *load.rate;
      if (seconds > std::chrono::duration<double>(kMaxRunLength).count()) {
        std::array<char, 32> rate_text{};
        const auto written =
            std::to_chars(rate_text.data(), rate_text.data() + rate_text.size(), *load.rate).ptr;
        error("spec.load.requests", "at spec.load.rate " + std::string(rate_text.data(), written) +
                                        "/s, " + std::to_string(*load.requests) +
                                        " requests take longer than " +
                                        format_duration(kMaxRunLength));
      }
    }

    const std::string each_worker = ": each worker needs at least one connection";
    const std::string model_reason =
        model_stage ? " (" + seen_.stage_paths[*model_stage] +
                          (open ? " gives a rate)" : " gives connections)") +
                          "; every stage gives a rate, or every stage connections"
                    : "";
    for (size_t i = 0; i < load.stages.size(); ++i) {
      const std::string& path = seen_.stage_paths[i];
      const StageSpec& stage = load.stages[i];
      if (!model_stage) {
        error(path, seen_.stage_rate[i]
                        ? "exactly one of connections (closed model) or rate (open model), got both"
                        : "connections (closed model) or rate (open model) is required");
      } else if (open) {
        if (seen_.stage_connections[i]) {
          error(path + ".connections", "not valid in the open model" + model_reason);
        } else if (!seen_.stage_rate[i]) {
          error(path + ".rate", "required in the open model");
        }
      } else {
        if (seen_.stage_rate[i]) {
          error(path + ".rate", "not valid in the closed model" + model_reason);
        } else if (!seen_.stage_connections[i]) {
          error(path + ".connections", "required in the closed model");
        } else if (stage.connections && *stage.connections < workers) {
          error(path + ".connections", "must be >= spec.workers (" + std::to_string(workers) +
                                           "), got " + std::to_string(*stage.connections) +
                                           each_worker);
        }
      }
    }

    if (!open && !staged) {
      if (!seen_.connections) {
        load.connections = kDefaultConnections;
        if (kDefaultConnections < workers) {
          error("spec.load.connections", "must be >= spec.workers (" + std::to_string(workers) +
                                             "), got " + std::to_string(kDefaultConnections) +
                                             " (the default)" + each_worker);
        }
      } else if (load.connections && *load.connections < workers) {
        error("spec.load.connections", "must be >= spec.workers (" + std::to_string(workers) +
                                           "), got " + std::to_string(*load.connections) +
                                           each_worker);
      }
    }
    if (open && load.max_connections && *load.max_connections < workers) {
      error("spec.load.maxConnections", "must be >= spec.workers (" + std::to_string(workers) +
                                            "), got " + std::to_string(*load.max_connections) +
                                            each_worker);
    }
  }

  ParsedLoadTest result_;
  Presence seen_;
  std::vector<std::string> threshold_paths_;  // where each parsed threshold was written
  std::vector<std::string> request_paths_;    // where each entry of spec.requests was
};

}  // namespace

bool header_value_breaks_line(std::string_view value) noexcept {
  return value.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

ParsedLoadTest parse_loadtest(const YAML::Node& manifest) {
  // yaml-cpp reports misuse by throwing; whatever slips past the checks above
  // must still come back as an error, never as an exception.
  try {
    return Decoder().decode(manifest);
  } catch (const std::exception& e) {
    ParsedLoadTest failed;
    failed.errors.push_back({"", "cannot read the manifest: " + printable(e.what())});
    return failed;
  }
}

ParsedLoadTest parse_loadtest(std::string_view yaml_or_json) {
  ParsedLoadTest failed;
  if (yaml_or_json.size() > kMaxManifestBytes) {
    failed.errors.push_back({"", "manifest too large: " + std::to_string(yaml_or_json.size()) +
                                     " bytes, at most " + std::to_string(kMaxManifestBytes)});
    return failed;
  }
  // Kubernetes objects are UTF-8, and every string of a spec ends up in JSON
  // (reports, status) where anything else cannot be written.
  size_t line = 1, column = 1;
  for (size_t i = 0; i < yaml_or_json.size();) {
    const size_t length = utf8_sequence_length(yaml_or_json.substr(i));
    if (length == 0) {
      failed.errors.push_back({"", "line " + std::to_string(line) + ", column " +
                                       std::to_string(column) + ": not valid UTF-8 (byte " +
                                       printable(yaml_or_json.substr(i, 1)) + ")"});
      return failed;
    }
    if (yaml_or_json[i] == '\n') {
      ++line;
      column = 0;
    }
    ++column;
    i += length;
  }

  std::vector<YAML::Node> documents;
  try {
    const std::string text(yaml_or_json);
    if (!NodeCounter::fits(text, kMaxManifestNodes)) {
      failed.errors.push_back(
          {"", "document too large: more than " + std::to_string(kMaxManifestNodes) + " nodes"});
      return failed;
    }
    documents = YAML::LoadAll(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for this is "bad file".
    failed.errors.push_back({"", "line " + std::to_string(e.mark.line + 1) + ", column " +
                                     std::to_string(e.mark.column + 1) + ": nested too deeply"});
    return failed;
  } catch (const YAML::ParserException& e) {
    failed.errors.push_back({"", "line " + std::to_string(e.mark.line + 1) + ", column " +
                                     std::to_string(e.mark.column + 1) + ": " + printable(e.msg)});
    return failed;
  } catch (const std::exception& e) {
    failed.errors.push_back({"", "cannot parse the manifest: " + printable(e.what())});
    return failed;
  }
  // "---" at the end of a file yields an empty document; only real ones count.
  std::erase_if(documents, [](const YAML::Node& document) { return document.IsNull(); });
  if (documents.size() > 1) {
    failed.errors.push_back(
        {"", "expected one LoadTest document, found " + std::to_string(documents.size())});
    return failed;
  }
  return parse_loadtest(documents.empty() ? YAML::Node() : documents.front());
}

std::string to_string(const LabelSelector& selector) {
  std::vector<std::string> terms;
  for (const auto& [key, value] : selector.match_labels) terms.push_back(key + "=" + value);
  for (const LabelRequirement& requirement : selector.match_expressions) {
    std::string values;
    for (const std::string& value : requirement.values) {
      values += (values.empty() ? "" : ",") + value;
    }
    switch (requirement.op) {
      case LabelRequirement::Operator::In:
        terms.push_back(requirement.key + " in (" + values + ")");
        break;
      case LabelRequirement::Operator::NotIn:
        terms.push_back(requirement.key + " notin (" + values + ")");
        break;
      case LabelRequirement::Operator::Exists:
        terms.push_back(requirement.key);
        break;
      case LabelRequirement::Operator::DoesNotExist:
        terms.push_back("!" + requirement.key);
        break;
    }
  }
  std::string out;
  for (const std::string& term : terms) out += (out.empty() ? "" : ",") + term;
  return out;
}

const char* to_string(Protocol protocol) noexcept {
  switch (protocol) {
    case Protocol::http2:
      return "http2";
    case Protocol::h2c:
      return "h2c";
    case Protocol::http1:
      break;
  }
  return "http1";
}

std::optional<Protocol> parse_protocol(std::string_view name) noexcept {
  for (Protocol p : {Protocol::http1, Protocol::http2, Protocol::h2c}) {
    if (name == to_string(p)) return p;
  }
  return std::nullopt;
}

}  // namespace kubeload
