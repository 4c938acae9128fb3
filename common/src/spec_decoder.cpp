#include "spec_decoder.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <set>
#include <system_error>
#include <utility>
#include <variant>

#include "common/scenario/check.hpp"
#include "common/scenario/extractor.hpp"
#include "common/scenario/json_pointer.hpp"
#include "common/scenario/regex.hpp"
#include "common/scenario/template.hpp"
#include "kubeload/duration.hpp"
#include "kubeload/names.hpp"
#include "kubeload/text.hpp"
#include "kubeload/url.hpp"
#include "spec_rules.hpp"

namespace kubeload::spec_parser {
namespace {

using std::chrono::nanoseconds;

using api::kApiVersion;
constexpr std::string_view kKind = "LoadTest";
constexpr const char* kNamespaceRule =
    ": must be a lowercase RFC 1123 label (a-z, 0-9 and '-', at most 63 characters)";

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

std::string describe(const YAML::Node& node) {
  if (node.IsScalar() && is_quoted(node)) return "string " + quote(node.Scalar());
  if (node.IsScalar()) return node.Scalar();
  return node_kind(node);
}

std::string join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// ---- the field table --------------------------------------------------------
//
// Each section of the manifest is a table: a field's name and how its value
// is read into the section. The kinds of field (a count in a range, a
// duration, a rate, a name under a naming rule, one of a few words, ...) each
// validate and assign in one place, below; a section adds only its own
// rules after its fields are read.

class Decoder;

using FieldHandler =
    std::function<bool(std::string_view key, const YAML::Node& value, const std::string& path)>;

template <typename Section>
using FieldReader =
    std::function<void(Decoder&, Section&, const YAML::Node& value, const std::string& path)>;

template <typename Section>
struct FieldRule {
  std::string_view name;
  FieldReader<Section> read;
};

template <typename Section>
using FieldTable = std::vector<FieldRule<Section>>;

// A string field's rule: which strings are valid, and the message for one that
// is not (`problem`, the quoted value, then `rule`).
struct StringRule {
  bool (*valid)(std::string_view) = nullptr;  // nullptr: any string
  std::string_view problem;
  std::string_view rule;
};

enum class ZeroDuration { refused, allowed };
enum class OtherFields { refused, ignored };

// Walks one manifest into a LoadTestSpec, collecting every problem on the way.
class Decoder {
 public:
  Decoder() = default;
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  ParsedLoadTest decode(const YAML::Node& root);

  void error(const std::string& path, const std::string& message) { errors_.add(path, message); }

  // ---- shapes and scalars ----------------------------------------------------

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
      seen_.written.insert_or_assign(
          field_path, DecodedFields::Written{describe(entry.second), entry.second.IsMap()});
      if (!handle(key, entry.second, field_path)) error(field_path, "unknown field");
    }
    return true;
  }

  // Reads the fields of a map by `table` into `section`; false when it is no map.
  template <typename Section>
  bool section(const YAML::Node& node, const std::string& path, Section& into,
               const FieldTable<Section>& table, OtherFields others = OtherFields::refused) {
    return fields(node, path,
                  [&](std::string_view key, const YAML::Node& value, const std::string& at) {
                    const auto rule = std::find_if(table.begin(), table.end(),
                                                   [&](const auto& r) { return r.name == key; });
                    if (rule == table.end()) return others == OtherFields::ignored;
                    rule->read(*this, into, value, at);
                    return true;
                  });
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

  // A string that follows `rule`.
  std::optional<std::string> string(const YAML::Node& node, const std::string& path,
                                    const StringRule& rule) {
    auto text = string(node, path);
    if (text && rule.valid != nullptr && !rule.valid(*text)) {
      error(path, std::string(rule.problem) + quote(*text) + std::string(rule.rule));
      return std::nullopt;
    }
    return text;
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
                                      ZeroDuration zero) {
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
    if (zero == ZeroDuration::refused && value->count() == 0) {
      error(path, "must be > 0, got " + quote(text));
      return std::nullopt;
    }
    if (*value > kMaxRunLength) {
      error(path, "must be at most " + format_duration(kMaxRunLength) + ", got " + quote(text));
      return std::nullopt;
    }
    return value;
  }

  // A think time or a pacing: a duration of at most kMaxThinkTime.
  std::optional<nanoseconds> think_duration(const YAML::Node& node, const std::string& path,
                                            ZeroDuration zero) {
    const std::optional<nanoseconds> value = duration(node, path, zero);
    if (value && *value > kMaxThinkTime) {
      error(path,
            "must be at most " + format_duration(kMaxThinkTime) + ", got " + quote(node.Scalar()));
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

  // A step's value of spec.search: requests/s (as spec.load.rate) or
  // connections (an integer, at least one).
  std::optional<double> search_value(const YAML::Node& node, const std::string& path,
                                     SearchOver over) {
    if (over == SearchOver::rate) return rate(node, path);
    if (const auto value = count(node, path, 1, kMaxSearchConnections)) {
      return static_cast<double>(*value);
    }
    return std::nullopt;
  }

  // spec.search.*.precision: "10%" (of the highest passing value) or a
  // number in the value's unit.
  void search_precision(const YAML::Node& node, const std::string& path, SearchSpec& search) {
    if (node.IsScalar() && (is_quoted(node) || node.Scalar().ends_with('%'))) {
      const std::string& text = node.Scalar();
      double percent = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), percent);
      if (text.ends_with('%') && ec == std::errc() && end == text.data() + text.size() - 1 &&
          std::isfinite(percent) && percent > 0 && percent < 100) {
        search.precision = percent;
        search.precision_percent = true;
      } else {
        error(path,
              "must be a percent in (0%, 100%) like \"10%\", or a number, got " + quote(text));
      }
      return;
    }
    if (const auto value = positive_number(node, path)) {
      search.precision = *value;
      search.precision_percent = false;
    }
  }

  // ---- sections with rules of their own --------------------------------------

  void labels(const YAML::Node& node, const std::string& path,
              std::map<std::string, std::string>& labels);
  std::optional<LabelSelector> label_selector(const YAML::Node& node, const std::string& path);
  std::optional<LabelRequirement> label_requirement(const YAML::Node& node,
                                                    const std::string& path);
  void service(const YAML::Node& node, const std::string& path, LoadTestSpec& spec);
  void tls(const YAML::Node& node, const std::string& path, TlsSpec& tls);
  void ca_from(const YAML::Node& node, const std::string& path, TlsSpec& tls);
  void request(const YAML::Node& node, const std::string& path, LoadTestSpec& spec);
  void headers(const YAML::Node& node, const std::string& path,
               std::vector<std::pair<std::string, std::string>>& headers);
  void header_from(const YAML::Node& node, const std::string& path, RequestSpec& request);
  void stage(const YAML::Node& node, const std::string& path, LoadSpec& load);
  void threshold(const YAML::Node& node, const std::string& path, LoadTestSpec& spec);
  void baseline(const YAML::Node& node, const std::string& path, LoadTestSpec& spec);
  void variant(const YAML::Node& node, const std::string& path, LoadTestSpec& spec);
  void comparison(const YAML::Node& node, const std::string& path, ExperimentSpec& experiment);
  void max_regression(const YAML::Node& node, const std::string& path, BaselineSpec& baseline);
  void scenario(const YAML::Node& node, const std::string& path, LoadTestSpec& spec);
  void step(const YAML::Node& node, const std::string& path, ScenarioSpec& scenario);
  void extraction(const YAML::Node& node, const std::string& path, StepSpec& step);
  void check(const YAML::Node& node, const std::string& path, StepSpec& step);
  void think_time(const YAML::Node& node, const std::string& path, ThinkTime& think_time);
  void data_source(const YAML::Node& node, const std::string& path, LoadTestSpec& spec);
  void mark_scenario_run() { seen_.scenario_run = true; }

 private:
  ParsedLoadTest result_;
  FieldErrors errors_{result_.errors};
  DecodedFields seen_;
  // Where each entry of the current request's headersFrom was.
  std::vector<std::string> header_from_paths_;
  // Where each step of the current scenario, and each extraction of the
  // current step, was (DecodedFields::scenario_paths).
  std::vector<DecodedFields::StepPaths> step_paths_;
  std::vector<std::string> extract_paths_;
};

// ---- the kinds of field: one validate-then-assign each -----------------------

template <typename T>
void assign(T& member, uint64_t value) {
  member = static_cast<T>(value);
}
template <typename T>
void assign(std::optional<T>& member, uint64_t value) {
  member = static_cast<T>(value);
}

// An integer in [min, max].
template <typename Section, typename Member>
FieldReader<Section> count_field(Member Section::*member, int64_t min,
                                 std::optional<int64_t> max = std::nullopt) {
  return [member, min, max](Decoder& d, Section& s, const YAML::Node& v, const std::string& at) {
    if (const auto value = d.count(v, at, min, max)) assign(s.*member, *value);
  };
}

template <typename Section, typename Member>
FieldReader<Section> duration_field(Member Section::*member, ZeroDuration zero) {
  return [member, zero](Decoder& d, Section& s, const YAML::Node& v, const std::string& at) {
    if (const auto value = d.duration(v, at, zero)) s.*member = *value;
  };
}

// A think time or a pacing (at most kMaxThinkTime).
template <typename Section, typename Member>
FieldReader<Section> think_duration_field(Member Section::*member, ZeroDuration zero) {
  return [member, zero](Decoder& d, Section& s, const YAML::Node& v, const std::string& at) {
    if (const auto value = d.think_duration(v, at, zero)) s.*member = *value;
  };
}

template <typename Section>
FieldReader<Section> rate_field(std::optional<double> Section::*member) {
  return [member](Decoder& d, Section& s, const YAML::Node& v, const std::string& at) {
    if (const auto value = d.rate(v, at)) s.*member = *value;
  };
}

template <typename Section>
FieldReader<Section> boolean_field(bool Section::*member) {
  return [member](Decoder& d, Section& s, const YAML::Node& v, const std::string& at) {
    if (const auto value = d.boolean(v, at)) s.*member = *value;
  };
}

template <typename Section>
FieldReader<Section> string_field(std::string Section::*member, StringRule rule = {}) {
  return [member, rule](Decoder& d, Section& s, const YAML::Node& v, const std::string& at) {
    if (auto value = d.string(v, at, rule)) s.*member = std::move(*value);
  };
}

template <typename Section>
FieldReader<Section> bounded_string_field(std::string Section::*member, size_t max_bytes) {
  return [member, max_bytes](Decoder& d, Section& s, const YAML::Node& v, const std::string& at) {
    if (auto value = d.bounded_string(v, at, max_bytes)) s.*member = std::move(*value);
  };
}

// One of a few words, each standing for a value.
template <typename Section, typename Value>
FieldReader<Section> choice_field(Value Section::*member,
                                  std::vector<std::pair<std::string_view, Value>> choices) {
  return [member, choices](Decoder& d, Section& s, const YAML::Node& v, const std::string& at) {
    const auto text = d.string(v, at);
    if (!text) return;
    std::string names;
    for (const auto& [name, value] : choices) {
      if (*text == name) {
        s.*member = value;
        return;
      }
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
    d.error(at, "must be one of " + names + ", got " + quote(*text));
  };
}

// A map whose fields `table` reads into the member.
template <typename Section, typename Inner>
FieldReader<Section> section_field(Inner Section::*member, const FieldTable<Inner>& (*table)()) {
  return [member, table](Decoder& d, Section& s, const YAML::Node& v, const std::string& at) {
    d.section(v, at, s.*member, table());
  };
}

// Passed to the pods as written; only its shape is checked.
template <typename Section>
FieldReader<Section> opaque_map_field() {
  return [](Decoder& d, Section&, const YAML::Node& v, const std::string& at) {
    if (!v.IsMap()) d.error(at, "must be a map, got " + node_kind(v));
  };
}

// A toleration's or a requirement's key and operator ("" where it is not a string).
SchedulingTerm scheduling_term(const YAML::Node& node) {
  const auto scalar = [&](const char* name) {
    const YAML::Node value = node.IsMap() ? node[name] : YAML::Node();
    return value && value.IsScalar() ? value.Scalar() : std::string();
  };
  return {scalar("key"), scalar("operator")};
}

// Every map under `node` with a key and an operator: the requirements of an
// affinity, wherever they are nested (node, pod and pod anti-affinity alike).
void collect_requirements(const YAML::Node& node, std::vector<SchedulingTerm>& out) {
  if (node.IsMap()) {
    if (node["key"] && node["key"].IsScalar() && node["operator"]) {
      out.push_back(scheduling_term(node));
    }
    for (const auto& entry : node) collect_requirements(entry.second, out);
  } else if (node.IsSequence()) {
    for (const YAML::Node& item : node) collect_requirements(item, out);
  }
}

// ---- the tables ---------------------------------------------------------------

// The manifest around the spec.
struct Manifest {
  std::string api_version;
  std::string kind;
  LoadTestSpec spec;
};

const FieldTable<LoadTestSpec>& metadata_fields() {
  // Only these three are ours; the API server adds uid, resourceVersion,
  // managedFields and more, which the operator passes back in.
  static const FieldTable<LoadTestSpec> table = {
      {"name", string_field(&LoadTestSpec::name,
                            {is_dns1123_subdomain, "invalid name ",
                             ": must be a lowercase RFC 1123 subdomain (a-z, 0-9, '-' and '.', "
                             "starting and ending with a letter or digit, at most 253 "
                             "characters)"})},
      {"generateName",
       string_field(&LoadTestSpec::generate_name,
                    {is_generate_name, "invalid generateName ",
                     ": must be a lowercase RFC 1123 subdomain, which may end in '-', of at most "
                     "248 characters (the API server adds 5)"})},
      {"namespace", string_field(&LoadTestSpec::namespace_,
                                 {is_dns1123_label, "invalid namespace ", kNamespaceRule})},
      {"labels", [](Decoder& d, LoadTestSpec& s, const YAML::Node& v,
                    const std::string& at) { d.labels(v, at, s.labels); }},
  };
  return table;
}

const FieldTable<ServiceRef>& service_fields() {
  static const FieldTable<ServiceRef> table = {
      {"name", string_field(&ServiceRef::name,
                            {is_dns1035_label, "invalid service name ",
                             ": must be a lowercase RFC 1035 label (a-z, 0-9 and '-', starting "
                             "with a letter, at most 63 characters)"})},
      {"namespace", string_field(&ServiceRef::namespace_,
                                 {is_dns1123_label, "invalid namespace ", kNamespaceRule})},
      {"port", count_field(&ServiceRef::port, 1, 65535)},
      {"scheme", choice_field<ServiceRef, std::string>(&ServiceRef::scheme,
                                                       {{"http", "http"}, {"https", "https"}})},
  };
  return table;
}

const FieldTable<TlsSpec>& tls_fields() {
  static const FieldTable<TlsSpec> table = {
      {"insecureSkipVerify", boolean_field(&TlsSpec::insecure_skip_verify)},
      {"caFrom", [](Decoder& d, TlsSpec& s, const YAML::Node& v,
                    const std::string& at) { d.ca_from(v, at, s); }},
  };
  return table;
}

const FieldTable<ObjectKeyRef>& object_key_ref_fields() {
  static const FieldTable<ObjectKeyRef> table = {
      {"name", string_field(&ObjectKeyRef::name, {is_dns1123_subdomain, "invalid name ", ""})},
      {"key", string_field(&ObjectKeyRef::key, {is_secret_key, "invalid key ", ""})},
  };
  return table;
}

const FieldTable<LoadTestSpec>& target_fields() {
  static const FieldTable<LoadTestSpec> table = {
      {"url",
       [](Decoder& d, LoadTestSpec& s, const YAML::Node& v, const std::string& at) {
         const auto url = d.string(v, at);
         if (!url) return;
         auto parsed = parse_http_url(*url);
         if (const auto* problem = std::get_if<std::string>(&parsed)) {
           d.error(at, *problem);
         } else {
           s.url = *url;
         }
       }},
      {"service", [](Decoder& d, LoadTestSpec& s, const YAML::Node& v,
                     const std::string& at) { d.service(v, at, s); }},
      {"tls", [](Decoder& d, LoadTestSpec& s, const YAML::Node& v,
                 const std::string& at) { d.tls(v, at, s.tls); }},
      {"protocol", choice_field<LoadTestSpec, Protocol>(
                       &LoadTestSpec::protocol, {{to_string(Protocol::http1), Protocol::http1},
                                                 {to_string(Protocol::http2), Protocol::http2},
                                                 {to_string(Protocol::h2c), Protocol::h2c}})},
      {"allowInsecureSecretHeaders", boolean_field(&LoadTestSpec::allow_insecure_secret_headers)},
      {"podSelector", [](Decoder& d, LoadTestSpec& s, const YAML::Node& v,
                         const std::string& at) { s.pod_selector = d.label_selector(v, at); }},
  };
  return table;
}

const FieldTable<Expectation>& expect_fields() {
  static const FieldTable<Expectation> table = {
      {"status",
       [](Decoder& d, Expectation& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxExpectedStatuses,
                [&](const YAML::Node& item, const std::string& item_path) {
                  if (auto code = d.count(item, item_path, 100, 599)) {
                    s.status.push_back(static_cast<int>(*code));
                  }
                });
       }},
      {"bodyLength", count_field(&Expectation::body_length, 0)},
  };
  return table;
}

// A request's and a step's name (a result row) and method.
constexpr StringRule kRequestNameRule{
    is_request_name, "invalid name ",
    ": must match [a-z0-9]([-a-z0-9_]*[a-z0-9])? (names become metric labels)"};
constexpr StringRule kMethodRule{is_http_method, "invalid method ",
                                 ": must be an upper-case HTTP token such as GET or POST"};

const FieldTable<RequestSpec>& request_fields() {
  static const FieldTable<RequestSpec> table = {
      {"name", string_field(&RequestSpec::name, kRequestNameRule)},
      {"method", string_field(&RequestSpec::method, kMethodRule)},
      {"path",
       [](Decoder& d, RequestSpec& s, const YAML::Node& v, const std::string& at) {
         const auto target_path = d.string(v, at);
         if (!target_path) return;
         if (!target_path->starts_with('/')) {
           d.error(at, "must start with '/', got " + quote(*target_path));
         } else if (has_space_or_control(*target_path)) {
           d.error(at, "must not contain spaces or control characters, got " + quote(*target_path));
         } else {
           s.path = *target_path;
         }
       }},
      {"headers", [](Decoder& d, RequestSpec& s, const YAML::Node& v,
                     const std::string& at) { d.headers(v, at, s.headers); }},
      {"headersFrom",
       [](Decoder& d, RequestSpec& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxHeadersFrom, [&](const YAML::Node& item, const std::string& item_path) {
           d.header_from(item, item_path, s);
         });
       }},
      {"body", bounded_string_field(&RequestSpec::body, kMaxBodyBytes)},
      {"weight", count_field(&RequestSpec::weight, 1, kMaxWeight)},
      {"expect", section_field(&RequestSpec::expect, expect_fields)},
  };
  return table;
}

// ---- spec.scenarios and spec.data (docs/scenarios.md) -------------------------
//
// Each field is read and checked on its own here (a name's grammar, an
// extraction's pointer or pattern, a think time's range); what needs the
// whole spec (the templates against the scenario's variables and the data's
// columns, the scenarios against the rest of the spec) is spec_rules.cpp's.

const FieldTable<StepSpec>& step_fields() {
  static const FieldTable<StepSpec> table = {
      {"name", string_field(&StepSpec::name, kRequestNameRule)},
      {"method", string_field(&StepSpec::method, kMethodRule)},
      {"path",
       [](Decoder& d, StepSpec& s, const YAML::Node& v, const std::string& at) {
         // A template: its literal text is checked with the template
         // (spec_rules.cpp), where ${random(1, 5)} is known to be no space.
         const auto target_path = d.bounded_string(v, at, kMaxTargetPathBytes);
         if (!target_path) return;
         if (!target_path->starts_with('/')) {
           d.error(at, "must start with '/', got " + quote(*target_path));
         } else {
           s.path = *target_path;
         }
       }},
      {"headers", [](Decoder& d, StepSpec& s, const YAML::Node& v,
                     const std::string& at) { d.headers(v, at, s.headers); }},
      {"body", bounded_string_field(&StepSpec::body, kMaxBodyBytes)},
      {"expect", section_field(&StepSpec::expect, expect_fields)},
      {"extract",
       [](Decoder& d, StepSpec& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxExtractions, [&](const YAML::Node& item, const std::string& item_path) {
           d.extraction(item, item_path, s);
         });
       }},
      {"checks",
       [](Decoder& d, StepSpec& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxChecks, [&](const YAML::Node& item, const std::string& item_path) {
           d.check(item, item_path, s);
         });
       }},
      {"thinkTime", [](Decoder& d, StepSpec& s, const YAML::Node& v,
                       const std::string& at) { d.think_time(v, at, s.think_time); }},
  };
  return table;
}

const FieldTable<ScenarioSpec>& scenario_fields() {
  static const FieldTable<ScenarioSpec> table = {
      {"name", string_field(&ScenarioSpec::name,
                            {is_dns1123_label, "invalid scenario name ",
                             ": must be a lowercase RFC 1123 label (a-z, 0-9 and '-', at most 63 "
                             "characters)"})},
      {"weight", count_field(&ScenarioSpec::weight, 1, kMaxWeight)},
      {"cookies", boolean_field(&ScenarioSpec::cookies)},
      {"onExtractMiss",
       choice_field<ScenarioSpec, bool>(&ScenarioSpec::end_iteration_on_extract_miss,
                                        {{"endIteration", true}, {"continue", false}})},
      {"onFailure",
       choice_field<ScenarioSpec, bool>(&ScenarioSpec::end_iteration_on_failure,
                                        {{"continue", false}, {"endIteration", true}})},
      {"pacing", think_duration_field(&ScenarioSpec::pacing, ZeroDuration::refused)},
      {"steps",
       [](Decoder& d, ScenarioSpec& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxSteps, [&](const YAML::Node& item, const std::string& item_path) {
           d.step(item, item_path, s);
         });
       }},
  };
  return table;
}

// thinkTime.uniform: {min, max}.
const FieldTable<ThinkTime>& uniform_think_time_fields() {
  static const FieldTable<ThinkTime> table = {
      {"min", think_duration_field(&ThinkTime::min, ZeroDuration::allowed)},
      {"max", think_duration_field(&ThinkTime::max, ZeroDuration::refused)},
  };
  return table;
}

// thinkTime.exponential: {mean}.
const FieldTable<ThinkTime>& exponential_think_time_fields() {
  static const FieldTable<ThinkTime> table = {
      {"mean", think_duration_field(&ThinkTime::mean, ZeroDuration::refused)},
  };
  return table;
}

const FieldTable<DataSourceSpec>& data_source_fields() {
  static const FieldTable<DataSourceSpec> table = {
      {"name",
       [](Decoder& d, DataSourceSpec& s, const YAML::Node& v, const std::string& at) {
         const auto name = d.string(v, at);
         if (!name) return;
         if (const auto problem = scenario::check_name(*name)) {
           d.error(at, "invalid data source name: " + *problem);
         } else {
           s.name = *name;
         }
       }},
      {"file",
       [](Decoder& d, DataSourceSpec& s, const YAML::Node& v, const std::string& at) {
         const auto file = d.bounded_string(v, at, kMaxDataFileBytes);
         if (!file) return;
         if (file->empty() || file->find('\0') != std::string::npos) {
           d.error(at, "must be a file's path, got " + quote(*file));
         } else {
           s.file = *file;
         }
       }},
      {"configMapKeyRef",
       [](Decoder& d, DataSourceSpec& s, const YAML::Node& v, const std::string& at) {
         ObjectKeyRef ref;
         ref.kind = ObjectKeyRef::Kind::config_map;
         if (d.section(v, at, ref, object_key_ref_fields())) s.from = ref;
       }},
      {"secretKeyRef",
       [](Decoder& d, DataSourceSpec& s, const YAML::Node& v, const std::string& at) {
         ObjectKeyRef ref;
         ref.kind = ObjectKeyRef::Kind::secret;
         if (d.section(v, at, ref, object_key_ref_fields())) s.from = ref;
       }},
      {"format", choice_field<DataSourceSpec, DataSourceSpec::Format>(
                     &DataSourceSpec::format, {{"csv", DataSourceSpec::Format::csv},
                                               {"jsonl", DataSourceSpec::Format::jsonl}})},
      {"columns",
       [](Decoder& d, DataSourceSpec& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxDataColumns, [&](const YAML::Node& item, const std::string& item_path) {
           const auto column = d.string(item, item_path);
           if (!column) return;
           if (const auto problem = scenario::check_column_name(*column)) {
             d.error(item_path, "invalid column name: " + *problem);
           } else if (std::find(s.columns.begin(), s.columns.end(), *column) != s.columns.end()) {
             d.error(item_path, "column " + quote(*column) + " is named twice");
           } else {
             s.columns.push_back(*column);
           }
         });
       }},
      {"mode", choice_field<DataSourceSpec, DataSourceSpec::Mode>(
                   &DataSourceSpec::mode, {{"unique", DataSourceSpec::Mode::unique},
                                           {"sequential", DataSourceSpec::Mode::sequential},
                                           {"random", DataSourceSpec::Mode::random}})},
      {"onExhausted",
       choice_field<DataSourceSpec, DataSourceSpec::OnExhausted>(
           &DataSourceSpec::on_exhausted, {{"stop", DataSourceSpec::OnExhausted::stop},
                                           {"recycle", DataSourceSpec::OnExhausted::recycle}})},
  };
  return table;
}

const FieldTable<SecretKeyRef>& secret_key_ref_fields() {
  static const FieldTable<SecretKeyRef> table = {
      {"name",
       string_field(&SecretKeyRef::name, {is_dns1123_subdomain, "invalid secret name ", ""})},
      {"key", string_field(&SecretKeyRef::key, {is_secret_key, "invalid secret key ", ""})},
  };
  return table;
}

const FieldTable<HeaderFrom>& header_from_fields() {
  static const FieldTable<HeaderFrom> table = {
      {"name", string_field(&HeaderFrom::name, {is_http_token, "invalid header name ", ""})},
      {"secretKeyRef", section_field(&HeaderFrom::secret_key_ref, secret_key_ref_fields)},
  };
  return table;
}

const FieldTable<StageSpec>& stage_fields() {
  static const FieldTable<StageSpec> table = {
      {"duration", duration_field(&StageSpec::duration, ZeroDuration::refused)},
      {"connections", count_field(&StageSpec::connections, 1)},
      {"rate", rate_field(&StageSpec::rate)},
  };
  return table;
}

const FieldTable<LoadSpec>& load_fields() {
  static const FieldTable<LoadSpec> table = {
      {"connections", count_field(&LoadSpec::connections, 1)},
      {"rate", rate_field(&LoadSpec::rate)},
      {"maxConnections", count_field(&LoadSpec::max_connections, 1)},
      {"duration", duration_field(&LoadSpec::duration, ZeroDuration::refused)},
      {"requests", count_field(&LoadSpec::requests, 1)},
      {"iterations", count_field(&LoadSpec::iterations, 1)},
      {"warmup", duration_field(&LoadSpec::warmup, ZeroDuration::allowed)},
      {"warmupRequests", count_field(&LoadSpec::warmup_requests, 0)},
      {"stages",
       [](Decoder& d, LoadSpec& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxStages, [&](const YAML::Node& item, const std::string& item_path) {
           d.stage(item, item_path, s);
         });
       }},
      {"timeout", duration_field(&LoadSpec::timeout, ZeroDuration::refused)},
      {"keepAlive", boolean_field(&LoadSpec::keep_alive)},
      {"engine",
       choice_field<LoadSpec, EngineRequest>(
           &LoadSpec::engine, {{to_string(EngineRequest::automatic), EngineRequest::automatic},
                               {to_string(EngineRequest::io_uring), EngineRequest::io_uring},
                               {to_string(EngineRequest::epoll), EngineRequest::epoll}})},
      {"maxStreams", count_field(&LoadSpec::max_streams, 1, kMaxStreams)},
  };
  return table;
}

const FieldTable<WorkerTemplate>& worker_template_fields() {
  static const FieldTable<WorkerTemplate> table = {
      {"image", bounded_string_field(&WorkerTemplate::image, kMaxImageBytes)},
      {"resources", opaque_map_field<WorkerTemplate>()},
      {"affinity",
       [](Decoder& d, WorkerTemplate& s, const YAML::Node& v, const std::string& at) {
         if (!v.IsMap()) {
           d.error(at, "must be a map, got " + node_kind(v));
           return;
         }
         s.affinity_set = v.size() > 0;
         collect_requirements(v, s.affinity_requirements);
       }},
      {"nodeSelector",
       [](Decoder& d, WorkerTemplate& s, const YAML::Node& v, const std::string& at) {
         d.fields(v, at, [&](std::string_view key, const YAML::Node& value, const std::string& p) {
           if (const std::optional<std::string> text = d.string(value, p)) {
             s.node_selector[std::string(key)] = *text;
           }
           return true;
         });
       }},
      {"tolerations",
       [](Decoder& d, WorkerTemplate& s, const YAML::Node& v, const std::string& at) {
         if (!v.IsSequence()) {
           d.error(at, "must be a list, got " + node_kind(v));
           return;
         }
         for (const YAML::Node& toleration : v)
           s.tolerations.push_back(scheduling_term(toleration));
       }},
  };
  return table;
}

const FieldTable<BaselineSpec>& baseline_fields() {
  static const FieldTable<BaselineSpec> table = {
      {"loadTestName",
       string_field(&BaselineSpec::load_test_name, {is_dns1123_subdomain, "invalid name ",
                                                    ": must be a lowercase RFC 1123 subdomain"})},
      {"resultName",
       string_field(&BaselineSpec::result_name, {is_dns1123_subdomain, "invalid name ",
                                                 ": must be a lowercase RFC 1123 subdomain"})},
      {"lastPassed", boolean_field(&BaselineSpec::last_passed)},
      {"window", count_field(&BaselineSpec::window, 1, kMaxBaselineWindow)},
      {"required", boolean_field(&BaselineSpec::required)},
      {"maxRegression", [](Decoder& d, BaselineSpec& s, const YAML::Node& v,
                           const std::string& at) { d.max_regression(v, at, s); }},
  };
  return table;
}

const FieldTable<HistorySpec>& history_fields() {
  static const FieldTable<HistorySpec> table = {
      {"keep", count_field(&HistorySpec::keep, 1, kMaxHistoryKeep)},
      {"maxAge", duration_field(&HistorySpec::max_age, ZeroDuration::refused)},
  };
  return table;
}

const FieldTable<ExperimentSpec>& experiment_fields() {
  static const FieldTable<ExperimentSpec> table = {
      {"rounds", count_field(&ExperimentSpec::rounds, 2, kMaxRounds)},
      {"comparisons",
       [](Decoder& d, ExperimentSpec& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxComparisons, [&](const YAML::Node& item, const std::string& item_path) {
           d.comparison(item, item_path, s);
         });
       }},
  };
  return table;
}

// spec.search.rate and spec.search.connections: the same fields, the values
// in requests/s or connections (`over`, set before they are read).
const FieldTable<SearchSpec>& search_range_fields() {
  static const FieldTable<SearchSpec> table = {
      {"start",
       [](Decoder& d, SearchSpec& s, const YAML::Node& v, const std::string& at) {
         if (const auto value = d.search_value(v, at, s.over)) s.start = *value;
       }},
      {"max",
       [](Decoder& d, SearchSpec& s, const YAML::Node& v, const std::string& at) {
         if (const auto value = d.search_value(v, at, s.over)) s.max = *value;
       }},
      {"factor",
       [](Decoder& d, SearchSpec& s, const YAML::Node& v, const std::string& at) {
         const auto value = d.number(v, at);
         if (!value) return;
         if (*value <= 1 || *value > kMaxSearchFactor) {
           d.error(at, "must be above 1 and at most " +
                           std::to_string(static_cast<int>(kMaxSearchFactor)) + ", got " +
                           v.Scalar());
           return;
         }
         s.factor = *value;
       }},
      {"precision", [](Decoder& d, SearchSpec& s, const YAML::Node& v,
                       const std::string& at) { d.search_precision(v, at, s); }},
  };
  return table;
}

const FieldTable<SearchSpec>& search_fields() {
  static const FieldTable<SearchSpec> table = {
      {"rate",
       [](Decoder& d, SearchSpec& s, const YAML::Node& v, const std::string& at) {
         s.over = SearchOver::rate;
         d.section(v, at, s, search_range_fields());
       }},
      {"connections",
       [](Decoder& d, SearchSpec& s, const YAML::Node& v, const std::string& at) {
         s.over = SearchOver::connections;
         d.section(v, at, s, search_range_fields());
       }},
  };
  return table;
}

const FieldTable<LoadTestSpec>& timeouts_fields() {
  static const FieldTable<LoadTestSpec> table = {
      {"start", duration_field(&LoadTestSpec::start_timeout, ZeroDuration::refused)},
      {"run", duration_field(&LoadTestSpec::run_timeout, ZeroDuration::refused)},
  };
  return table;
}

const FieldTable<LoadTestSpec>& cleanup_fields() {
  static const FieldTable<LoadTestSpec> table = {
      {"policy", choice_field<LoadTestSpec, CleanupPolicy>(&LoadTestSpec::cleanup,
                                                           {{"Always", CleanupPolicy::Always},
                                                            {"OnSuccess", CleanupPolicy::OnSuccess},
                                                            {"Never", CleanupPolicy::Never}})},
  };
  return table;
}

const FieldTable<LoadTestSpec>& spec_fields() {
  static const FieldTable<LoadTestSpec> table = {
      {"target", [](Decoder& d, LoadTestSpec& s, const YAML::Node& v,
                    const std::string& at) { d.section(v, at, s, target_fields()); }},
      {"requests",
       [](Decoder& d, LoadTestSpec& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxRequests, [&](const YAML::Node& item, const std::string& item_path) {
           d.request(item, item_path, s);
         });
       }},
      {"scenarios",
       [](Decoder& d, LoadTestSpec& s, const YAML::Node& v, const std::string& at) {
         if (v.IsSequence() && v.size() > 0) d.mark_scenario_run();
         d.list(v, at, kMaxScenarios, [&](const YAML::Node& item, const std::string& item_path) {
           d.scenario(item, item_path, s);
         });
       }},
      {"data",
       [](Decoder& d, LoadTestSpec& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxDataSources, [&](const YAML::Node& item, const std::string& item_path) {
           d.data_source(item, item_path, s);
         });
       }},
      {"load", section_field(&LoadTestSpec::load, load_fields)},
      {"workers", count_field(&LoadTestSpec::workers, 1, kMaxWorkers)},
      {"ttlSecondsAfterFinished", count_field(&LoadTestSpec::ttl_after_finished, 0)},
      {"history", section_field(&LoadTestSpec::history, history_fields)},
      {"workerTemplate", section_field(&LoadTestSpec::worker_template, worker_template_fields)},
      {"thresholds",
       [](Decoder& d, LoadTestSpec& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxThresholds, [&](const YAML::Node& item, const std::string& item_path) {
           d.threshold(item, item_path, s);
         });
       }},
      {"baseline", [](Decoder& d, LoadTestSpec& s, const YAML::Node& v,
                      const std::string& at) { d.baseline(v, at, s); }},
      {"variants",
       [](Decoder& d, LoadTestSpec& s, const YAML::Node& v, const std::string& at) {
         d.list(v, at, kMaxVariants, [&](const YAML::Node& item, const std::string& item_path) {
           d.variant(item, item_path, s);
         });
       }},
      {"experiment", section_field(&LoadTestSpec::experiment, experiment_fields)},
      {"search",
       [](Decoder& d, LoadTestSpec& s, const YAML::Node& v, const std::string& at) {
         d.section(v, at, s.search.emplace(), search_fields());
       }},
      {"cleanup", [](Decoder& d, LoadTestSpec& s, const YAML::Node& v,
                     const std::string& at) { d.section(v, at, s, cleanup_fields()); }},
      {"timeouts", [](Decoder& d, LoadTestSpec& s, const YAML::Node& v,
                      const std::string& at) { d.section(v, at, s, timeouts_fields()); }},
  };
  return table;
}

const FieldTable<Manifest>& manifest_fields() {
  static const FieldTable<Manifest> table = {
      {"apiVersion", string_field(&Manifest::api_version)},
      {"kind", string_field(&Manifest::kind)},
      {"metadata",
       [](Decoder& d, Manifest& m, const YAML::Node& v, const std::string& at) {
         d.section(v, at, m.spec, metadata_fields(), OtherFields::ignored);
       }},
      {"spec", section_field(&Manifest::spec, spec_fields)},
      // The operator's; the API server returns it.
      {"status", [](Decoder&, Manifest&, const YAML::Node&, const std::string&) {}},
  };
  return table;
}

// ---- the sections with rules of their own ---------------------------------------

ParsedLoadTest Decoder::decode(const YAML::Node& root) {
  if (!root.IsDefined() || root.IsNull()) {
    error("", "empty document, expected a LoadTest manifest");
    return std::move(result_);
  }
  if (!root.IsMap()) {
    error("", "expected a LoadTest manifest (a map), got " + node_kind(root));
    return std::move(result_);
  }
  Manifest manifest;
  section(root, "", manifest, manifest_fields());
  if (!seen_.has("apiVersion")) {
    error("apiVersion", "required");
  } else if (manifest.api_version != kApiVersion) {
    error("apiVersion", "must be " + quote(kApiVersion) + ", got " + quote(manifest.api_version));
  }
  if (!seen_.has("kind")) {
    error("kind", "required");
  } else if (manifest.kind != kKind) {
    error("kind", "must be " + quote(kKind) + ", got " + quote(manifest.kind));
  }
  if (!seen_.has("metadata.name") && !seen_.has("metadata.generateName")) {
    error("metadata.name", "required (or metadata.generateName, for `kubectl create`)");
  }
  if (manifest.spec.name.empty() && !manifest.spec.generate_name.empty()) {
    manifest.spec.name = manifest.spec.generate_name;
    while (!manifest.spec.name.empty() && manifest.spec.name.back() == '-') {
      manifest.spec.name.pop_back();
    }
  }
  if (!seen_.has("spec")) error("spec", "required");
  if (seen_.has("spec") && !seen_.malformed("spec")) {
    apply_cross_field_rules(manifest.spec, seen_, errors_);
  }
  result_.spec = std::move(manifest.spec);
  return std::move(result_);
}

void Decoder::labels(const YAML::Node& node, const std::string& path,
                     std::map<std::string, std::string>& labels) {
  fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
    if (!is_qualified_name(key)) {
      error(path, "invalid label key " + quote(key));
      return true;
    }
    const auto text = string(value, at,
                             {is_label_value, "invalid label value ",
                              ": at most 63 letters, digits, '-', '_' and '.', starting and "
                              "ending with a letter or digit"});
    if (text) labels[std::string(key)] = *text;
    return true;
  });
}

// A metav1.LabelSelector that selects something: an empty one would select
// every pod of the namespace.
std::optional<LabelSelector> Decoder::label_selector(const YAML::Node& node,
                                                     const std::string& path) {
  LabelSelector selector;
  const size_t errors_before = errors_.count();
  const bool is_map =
      fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
        if (key == "matchLabels") {
          if (value.IsMap() && value.size() > kMaxSelectorTerms) {
            error(at, "at most " + std::to_string(kMaxSelectorTerms) + " labels, got " +
                          std::to_string(value.size()));
            return true;
          }
          fields(value, at, [&](std::string_view label, const YAML::Node& v, const std::string& p) {
            if (!is_qualified_name(label)) {
              error(at, "invalid label key " + quote(label));
            } else if (auto text = string(v, p, {is_label_value, "invalid label value ", ""})) {
              selector.match_labels[std::string(label)] = std::move(*text);
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
  if (!is_map || errors_.count() != errors_before) return std::nullopt;
  if (selector.empty()) {
    error(path, "selects every pod of the namespace: give matchLabels or matchExpressions");
    return std::nullopt;
  }
  return selector;
}

std::optional<LabelRequirement> Decoder::label_requirement(const YAML::Node& node,
                                                           const std::string& path) {
  LabelRequirement requirement;
  std::optional<std::string> op;
  bool has_values = false;
  const size_t errors_before = errors_.count();
  fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
    if (key == "key") {
      if (auto text = string(value, at, {is_qualified_name, "invalid label key ", ""})) {
        requirement.key = std::move(*text);
      }
    } else if (key == "operator") {
      op = string(value, at);
    } else if (key == "values") {
      has_values = true;
      list(value, at, kMaxSelectorTerms, [&](const YAML::Node& item, const std::string& p) {
        if (auto text = string(item, p, {is_label_value, "invalid label value ", ""})) {
          requirement.values.push_back(std::move(*text));
        }
      });
    } else {
      return false;
    }
    return true;
  });
  if (errors_.count() != errors_before) return std::nullopt;
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
  if (errors_.count() != errors_before) return std::nullopt;
  return requirement;
}

void Decoder::service(const YAML::Node& node, const std::string& path, LoadTestSpec& spec) {
  ServiceRef ref;
  section(node, path, ref, service_fields());
  if (!node.IsMap()) return;
  if (!seen_.has(join(path, "name"))) error(join(path, "name"), "required");
  if (!seen_.has(join(path, "port"))) ref.port = ref.scheme == "https" ? 443 : 80;
  spec.service = std::move(ref);
}

void Decoder::tls(const YAML::Node& node, const std::string& path, TlsSpec& tls) {
  section(node, path, tls, tls_fields());
  if (tls.insecure_skip_verify && tls.ca_from) {
    error(path, "insecureSkipVerify and caFrom exclude each other: a CA is used to verify");
  }
}

// caFrom: exactly one of secretKeyRef or configMapKeyRef, each {name, key}.
void Decoder::ca_from(const YAML::Node& node, const std::string& path, TlsSpec& tls) {
  std::optional<ObjectKeyRef> found;
  int refs = 0;
  const bool is_map =
      fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
        ObjectKeyRef ref;
        if (key == "secretKeyRef") {
          ref.kind = ObjectKeyRef::Kind::secret;
        } else if (key == "configMapKeyRef") {
          ref.kind = ObjectKeyRef::Kind::config_map;
        } else {
          return false;
        }
        ++refs;
        if (!section(value, at, ref, object_key_ref_fields())) return true;
        const bool name_seen = seen_.has(join(at, "name"));
        const bool key_seen = seen_.has(join(at, "key"));
        if (!name_seen) error(join(at, "name"), "required");
        if (!key_seen) error(join(at, "key"), "required");
        if (name_seen && key_seen && !ref.name.empty() && !ref.key.empty()) found = ref;
        return true;
      });
  if (!is_map) return;
  if (refs != 1) {
    error(path, "exactly one of secretKeyRef or configMapKeyRef is required");
    return;
  }
  tls.ca_from = found;
}

void Decoder::request(const YAML::Node& node, const std::string& path, LoadTestSpec& spec) {
  RequestSpec request;
  header_from_paths_.clear();
  if (!section(node, path, request, request_fields())) return;
  if (!seen_.has(join(path, "name"))) error(join(path, "name"), "required");
  // A header given twice would be sent twice.
  std::set<std::string> names;
  for (const auto& [name, value] : request.headers) names.insert(lowercase(name));
  for (size_t i = 0; i < request.headers_from.size(); ++i) {
    const std::string& name = request.headers_from[i].name;
    if (name.empty()) continue;  // reported as required
    if (!names.insert(lowercase(name)).second) {
      error(header_from_paths_[i] + ".name", "header " + quote(name) + " is set twice");
    }
  }
  spec.requests.push_back(std::move(request));
  seen_.request_paths.push_back(path);
}

void Decoder::headers(const YAML::Node& node, const std::string& path,
                      std::vector<std::pair<std::string, std::string>>& headers) {
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
      headers.emplace_back(std::string(key), *text);
    }
    return true;
  });
}

void Decoder::header_from(const YAML::Node& node, const std::string& path, RequestSpec& request) {
  HeaderFrom header;
  if (!section(node, path, header, header_from_fields())) return;
  const std::string ref_path = join(path, "secretKeyRef");
  if (!seen_.has(join(path, "name"))) error(join(path, "name"), "required");
  if (!seen_.has(ref_path)) {
    error(ref_path, "required");
  } else if (!seen_.malformed(ref_path)) {
    if (!seen_.has(join(ref_path, "name"))) error(join(ref_path, "name"), "required");
    if (!seen_.has(join(ref_path, "key"))) error(join(ref_path, "key"), "required");
  }
  request.headers_from.push_back(std::move(header));
  header_from_paths_.push_back(path);
}

void Decoder::stage(const YAML::Node& node, const std::string& path, LoadSpec& load) {
  StageSpec stage;
  if (!section(node, path, stage, stage_fields())) return;
  if (!seen_.has(join(path, "duration"))) error(join(path, "duration"), "required");
  seen_.stage_paths.push_back(path);
  load.stages.push_back(stage);
}

void Decoder::threshold(const YAML::Node& node, const std::string& path, LoadTestSpec& spec) {
  const auto text = string(node, path);
  if (!text) return;
  auto parsed = parse_threshold(*text);
  if (auto* message = std::get_if<std::string>(&parsed)) {
    error(path, *message);
    return;
  }
  spec.thresholds.push_back(std::get<Threshold>(std::move(parsed)));
  seen_.threshold_paths.push_back(path);
}

void Decoder::baseline(const YAML::Node& node, const std::string& path, LoadTestSpec& spec) {
  BaselineSpec baseline;
  if (!section(node, path, baseline, baseline_fields())) return;
  const int named = (seen_.has(join(path, "loadTestName")) ? 1 : 0) +
                    (seen_.has(join(path, "resultName")) ? 1 : 0) + (baseline.last_passed ? 1 : 0);
  if (named != 1) {
    error(path, "exactly one of loadTestName, resultName or lastPassed: true is required");
  }
  if (seen_.has(join(path, "window")) && !baseline.last_passed) {
    error(join(path, "window"), "is for lastPassed: true (a named baseline is one record)");
  }
  if (!seen_.has(join(path, "maxRegression"))) error(join(path, "maxRegression"), "required");
  spec.baseline = std::move(baseline);
}

// A variant's target is read as spec.target is, but only what tells the
// variants apart: how requests travel is the same for all of them.
void Decoder::variant(const YAML::Node& node, const std::string& path, LoadTestSpec& spec) {
  VariantSpec variant;
  LoadTestSpec target;
  RequestSpec extra;
  const bool is_map =
      fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
        if (key == "name") {
          if (const auto name = string(value, at)) {
            if (!is_dns1123_label(*name)) {
              error(at, "invalid variant name " + quote(*name) +
                            ": must be a lowercase RFC 1123 label (a-z, 0-9 and '-')");
            } else {
              variant.name = *name;
            }
          }
        } else if (key == "target") {
          section(value, at, target, target_fields());
          for (const char* shared : {"tls", "protocol", "allowInsecureSecretHeaders"}) {
            if (seen_.has(join(at, shared))) {
              error(join(at, shared), "is the same for every variant: set it in spec.target");
            }
          }
          if (!seen_.malformed(at) &&
              seen_.has(join(at, "url")) == seen_.has(join(at, "service"))) {
            error(at, "exactly one of url or service is required");
          }
        } else if (key == "headers") {
          headers(value, at, extra.headers);
        } else {
          return false;
        }
        return true;
      });
  if (!is_map) return;
  if (!seen_.has(join(path, "name"))) error(join(path, "name"), "required");
  if (!seen_.has(join(path, "target"))) error(join(path, "target"), "required");
  for (const VariantSpec& other : spec.variants) {
    if (!variant.name.empty() && other.name == variant.name) {
      error(join(path, "name"), "variant " + quote(variant.name) + " is named twice");
    }
  }
  variant.url = std::move(target.url);
  variant.service = std::move(target.service);
  variant.pod_selector = std::move(target.pod_selector);
  variant.headers = std::move(extra.headers);
  spec.variants.push_back(std::move(variant));
  seen_.variant_paths.push_back(path);
}

void Decoder::comparison(const YAML::Node& node, const std::string& path,
                         ExperimentSpec& experiment) {
  const auto text = string(node, path);
  if (!text) return;
  experiment.comparisons.push_back(*text);
  seen_.comparison_paths.push_back(path);
}

void Decoder::max_regression(const YAML::Node& node, const std::string& path,
                             BaselineSpec& baseline) {
  static constexpr std::array<std::string_view, 9> kMetrics{
      "p50", "p90", "p95", "p99", "p999", "mean", "max", "rps", "errorRate"};
  const bool is_map =
      fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
        if (std::find(kMetrics.begin(), kMetrics.end(), key) == kMetrics.end()) {
          error(at, "unknown metric " + quote(key) +
                        " (one of p50, p90, p95, p99, p999, mean, max, rps, errorRate)");
          return true;
        }
        const std::string& text = value.Scalar();
        double percent = -1;
        if (value.IsScalar() && text.size() >= 2 && text.back() == '%' && is_digit(text.front())) {
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

// ---- spec.scenarios and spec.data ----------------------------------------------

void Decoder::scenario(const YAML::Node& node, const std::string& path, LoadTestSpec& spec) {
  ScenarioSpec scenario;
  step_paths_.clear();
  if (!section(node, path, scenario, scenario_fields())) return;
  if (!seen_.has(join(path, "name"))) error(join(path, "name"), "required");
  if (!seen_.has(join(path, "steps"))) {
    error(join(path, "steps"), "required: the requests a virtual user makes, in order");
  } else if (node["steps"].IsSequence() && node["steps"].size() == 0) {
    error(join(path, "steps"), "at least one step is required");
  }
  for (const ScenarioSpec& other : spec.scenarios) {
    if (!scenario.name.empty() && other.name == scenario.name) {
      error(join(path, "name"), "scenario " + quote(scenario.name) + " is named twice");
    }
  }
  spec.scenarios.push_back(std::move(scenario));
  seen_.scenario_paths.push_back({path, std::move(step_paths_)});
  step_paths_.clear();
}

void Decoder::step(const YAML::Node& node, const std::string& path, ScenarioSpec& scenario) {
  StepSpec step;
  extract_paths_.clear();
  if (!section(node, path, step, step_fields())) return;
  if (!seen_.has(join(path, "name"))) error(join(path, "name"), "required");
  // Steps of several scenarios may share a name (and a result row); within
  // one scenario a name is one step.
  for (const StepSpec& other : scenario.steps) {
    if (!step.name.empty() && other.name == step.name) {
      error(join(path, "name"), "duplicate name " + quote(step.name) +
                                    " in this scenario (steps of other scenarios may share it)");
    }
  }
  scenario.steps.push_back(std::move(step));
  step_paths_.push_back({path, std::move(extract_paths_)});
  extract_paths_.clear();
}

scenario::ExtractFrom extract_from(ExtractSpec::From from) {
  switch (from) {
    case ExtractSpec::From::header:
      return scenario::ExtractFrom::header;
    case ExtractSpec::From::cookie:
      return scenario::ExtractFrom::cookie;
    case ExtractSpec::From::regex:
      return scenario::ExtractFrom::regex;
    case ExtractSpec::From::json:
      break;
  }
  return scenario::ExtractFrom::json;
}

// {name, json | header | cookie | regex, group}: checked by compiling it as
// the run will, so a bad pointer or pattern is refused before the run.
void Decoder::extraction(const YAML::Node& node, const std::string& path, StepSpec& step) {
  static constexpr std::array<std::pair<std::string_view, ExtractSpec::From>, 4> kSources{{
      {"json", ExtractSpec::From::json},
      {"header", ExtractSpec::From::header},
      {"cookie", ExtractSpec::From::cookie},
      {"regex", ExtractSpec::From::regex},
  }};
  ExtractSpec extract;
  std::string expression_path;
  int sources = 0;
  const size_t errors_before = errors_.count();
  const bool is_map =
      fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
        if (key == "name") {
          const auto name = string(value, at);
          if (!name) return true;
          if (const auto problem = scenario::check_name(*name)) {
            error(at, "invalid variable name: " + *problem);
          } else {
            extract.variable = *name;
          }
          return true;
        }
        if (key == "group") {
          if (const auto group = count(value, at, 0, scenario::max_regex_group)) {
            extract.group = static_cast<uint32_t>(*group);
          }
          return true;
        }
        const auto source = std::find_if(kSources.begin(), kSources.end(),
                                         [&](const auto& entry) { return entry.first == key; });
        if (source == kSources.end()) return false;
        ++sources;
        expression_path = at;
        extract.from = source->second;
        if (auto expression = bounded_string(value, at, kMaxExpressionBytes)) {
          extract.expression = std::move(*expression);
        }
        return true;
      });
  if (!is_map) return;
  if (!seen_.has(join(path, "name"))) error(join(path, "name"), "required");
  if (sources != 1) {
    error(path, "exactly one of json, header, cookie or regex is required");
  } else if (seen_.has(join(path, "group")) && extract.from != ExtractSpec::From::regex) {
    error(join(path, "group"), "only with regex (the group of the pattern to take)");
  }
  if (errors_.count() == errors_before) {
    // The pattern first, then the group it is asked for: each problem at its field.
    scenario::ExtractRule rule{extract_from(extract.from), extract.expression, std::nullopt};
    auto compiled = scenario::Extractor::compile("", rule);
    if (const auto* problem = std::get_if<std::string>(&compiled)) {
      error(expression_path, *problem);
    } else if (extract.group) {
      rule.group = extract.group;
      compiled = scenario::Extractor::compile("", rule);
      if (const auto* group_problem = std::get_if<std::string>(&compiled)) {
        error(join(path, "group"), *group_problem);
      }
    }
  }
  step.extract.push_back(std::move(extract));
  extract_paths_.push_back(path);
}

// {json, equals | matches} or {bodyContains}: compiled as the run will.
void Decoder::check(const YAML::Node& node, const std::string& path, StepSpec& step) {
  CheckSpec check;
  const size_t errors_before = errors_.count();
  const bool is_map =
      fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
        std::optional<std::string> text;
        if (key == "json") {
          text = bounded_string(value, at, kMaxExpressionBytes);
          if (text) check.json = std::move(*text);
        } else if (key == "equals" || key == "matches" || key == "bodyContains") {
          text = bounded_string(value, at, kMaxCheckTextBytes);
          if (text) check.expected = std::move(*text);
        } else {
          return false;
        }
        return true;
      });
  if (!is_map) return;
  const bool json = seen_.has(join(path, "json"));
  const bool equals = seen_.has(join(path, "equals"));
  const bool matches = seen_.has(join(path, "matches"));
  const bool body_contains = seen_.has(join(path, "bodyContains"));
  std::string text_path;
  if (body_contains) {
    check.kind = CheckSpec::Kind::body_contains;
    text_path = join(path, "bodyContains");
    if (json || equals || matches) {
      error(path, "bodyContains is a check of its own: not with json, equals or matches");
    }
  } else if (!json && !equals && !matches) {
    error(path, "one of json (with equals or matches) or bodyContains is required");
  } else if (!json) {
    error(join(path, "json"), "required with equals or matches (the JSON pointer of the value)");
  } else if (equals == matches) {
    error(path, "json needs exactly one of equals or matches");
  } else {
    check.kind = equals ? CheckSpec::Kind::json_equals : CheckSpec::Kind::json_matches;
    text_path = join(path, equals ? "equals" : "matches");
  }
  if (errors_.count() == errors_before) {
    // The pointer first, then the pattern or text: each problem at its field.
    std::optional<std::string> pointer_problem;
    if (!body_contains) {
      auto pointer = scenario::JsonPointer::parse(check.json);
      if (auto* problem = std::get_if<std::string>(&pointer)) pointer_problem = std::move(*problem);
    }
    if (pointer_problem) {
      error(join(path, "json"), *pointer_problem);
    } else {
      const scenario::CheckKind kind =
          check.kind == CheckSpec::Kind::body_contains ? scenario::CheckKind::body_contains
          : check.kind == CheckSpec::Kind::json_equals ? scenario::CheckKind::json_equals
                                                       : scenario::CheckKind::json_matches;
      const auto compiled = scenario::Check::compile("", {kind, check.json, check.expected});
      if (const auto* problem = std::get_if<std::string>(&compiled)) error(text_path, *problem);
    }
  }
  step.checks.push_back(std::move(check));
}

// {constant: D} | {uniform: {min, max}} | {exponential: {mean}}.
void Decoder::think_time(const YAML::Node& node, const std::string& path, ThinkTime& think_time) {
  int given = 0;
  const bool is_map =
      fields(node, path, [&](std::string_view key, const YAML::Node& value, const std::string& at) {
        if (key == "constant") {
          think_time.distribution = ThinkTime::Distribution::constant;
          if (const auto d = this->think_duration(value, at, ZeroDuration::refused)) {
            think_time.constant = *d;
          }
        } else if (key == "uniform") {
          think_time.distribution = ThinkTime::Distribution::uniform;
          if (section(value, at, think_time, uniform_think_time_fields())) {
            if (!seen_.has(join(at, "min"))) error(join(at, "min"), "required");
            if (!seen_.has(join(at, "max"))) error(join(at, "max"), "required");
            if (think_time.max.count() > 0 && think_time.max < think_time.min) {
              error(join(at, "max"), "must be >= min (" + seen_.text(join(at, "min")) + "), got " +
                                         seen_.text(join(at, "max")));
            }
          }
        } else if (key == "exponential") {
          think_time.distribution = ThinkTime::Distribution::exponential;
          if (section(value, at, think_time, exponential_think_time_fields()) &&
              !seen_.has(join(at, "mean"))) {
            error(join(at, "mean"), "required");
          }
        } else {
          return false;
        }
        ++given;
        return true;
      });
  if (is_map && given != 1) {
    error(path, "exactly one of constant, uniform or exponential is required");
  }
}

// The format a data file or key is read in when `format` is not given: by
// its name's extension.
DataSourceSpec::Format format_of(std::string_view file_name) {
  const std::string name = lowercase(file_name);
  if (name.ends_with(".jsonl") || name.ends_with(".ndjson")) return DataSourceSpec::Format::jsonl;
  return DataSourceSpec::Format::csv;
}

void Decoder::data_source(const YAML::Node& node, const std::string& path, LoadTestSpec& spec) {
  DataSourceSpec data;
  if (!section(node, path, data, data_source_fields())) return;
  if (!seen_.has(join(path, "name"))) error(join(path, "name"), "required");
  int origins = 0;
  for (const char* origin : {"file", "configMapKeyRef", "secretKeyRef"}) {
    const std::string at = join(path, origin);
    if (!seen_.has(at)) continue;
    ++origins;
    if (std::string_view(origin) != "file" && !seen_.malformed(at)) {
      if (!seen_.has(join(at, "name"))) error(join(at, "name"), "required");
      if (!seen_.has(join(at, "key"))) error(join(at, "key"), "required");
    }
  }
  if (origins != 1) {
    error(path, "exactly one of file (loadgen run), configMapKeyRef or secretKeyRef is required");
  }
  if (seen_.has(join(path, "onExhausted")) && data.mode != DataSourceSpec::Mode::unique) {
    error(join(path, "onExhausted"),
          "only with mode unique (sequential and random rows never run out)");
  }
  if (!seen_.has(join(path, "format"))) {
    data.format = format_of(data.from ? data.from->key : data.file);
  }
  for (const DataSourceSpec& other : spec.data) {
    if (!data.name.empty() && other.name == data.name) {
      error(join(path, "name"), "data source " + quote(data.name) + " is named twice");
    }
  }
  spec.data.push_back(std::move(data));
  seen_.data_paths.push_back(path);
}

}  // namespace

ParsedLoadTest decode_manifest(const YAML::Node& root) {
  return Decoder().decode(root);
}

}  // namespace kubeload::spec_parser
