#include "operator/worker_result_parser.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace kubeload::controller {
namespace {

using nlohmann::json;

// simdjson holds about 15 bytes per byte of the document it parses (a padded
// copy, its structural index, tape and strings): bodies up to this size take
// the fast path, so a call's parser stays under 4 MB (leased from the /result
// budget, peak_bytes); a larger body is read by api::parse_bounded_result.
constexpr std::size_t kFastBodyBytes = 256 * 1024;
constexpr std::size_t kParserBytesPerByte = 15;
// A value of nlohmann::json: 16 bytes, in an object a std::map node and its
// key's std::string besides (about 100 with the allocator's headers).
constexpr std::size_t kDocumentBytesPerValue = 128;
// An idle parser is kept for the next call only when it was sized for a
// body up to this: a worker's result is 3 to 20 KB at the shapes measured.
constexpr std::size_t kKeptCapacityBytes = 64 * 1024;

// simdjson reads the integer -0 as 0, which nlohmann keeps as a signed
// integer (and readers that want a count refuse): a body where it may stand
// goes to the bounded parse. Only a '-' and '0' that no digit, point or
// exponent follows can be that integer; in a string it is a false alarm,
// which costs the speed and nothing else.
bool may_hold_minus_zero(std::string_view body) {
  for (std::size_t at = body.find("-0"); at != std::string_view::npos;
       at = body.find("-0", at + 2)) {
    if (at + 2 == body.size()) return true;
    const char next = body[at + 2];
    if ((next < '0' || next > '9') && next != '.' && next != 'e' && next != 'E') return true;
  }
  return false;
}

// nlohmann::json of a simdjson document, within the limits as
// api::parse_bounded_result counts them: every value once, arrays and
// objects each one level. Nothing, as soon as one is passed.
class Builder {
 public:
  explicit Builder(const api::ResultLimits& limits) : limits_(limits) {}

  bool build(simdjson::dom::element from, json& to, std::size_t depth = 0) {
    if (++values_ > limits_.values) return false;
    using Type = simdjson::dom::element_type;
    switch (from.type()) {
      case Type::OBJECT: {
        if (depth + 1 > limits_.depth) return false;
        to = json::object();
        for (const auto [key, value] : simdjson::dom::object(from)) {
          // A repeated key: the last one wins, as in nlohmann's parse.
          if (!build(value, to[std::string(key)], depth + 1)) return false;
        }
        return true;
      }
      case Type::ARRAY: {
        if (depth + 1 > limits_.depth) return false;
        to = json::array();
        for (const simdjson::dom::element value : simdjson::dom::array(from)) {
          if (!build(value, to.emplace_back(), depth + 1)) return false;
        }
        return true;
      }
      case Type::STRING:
        to = std::string(std::string_view(from));
        return true;
      case Type::INT64: {
        // nlohmann keeps a number without a minus sign unsigned.
        const int64_t n = int64_t(from);
        to = n >= 0 ? json(static_cast<uint64_t>(n)) : json(n);
        return true;
      }
      case Type::UINT64:
        to = uint64_t(from);
        return true;
      case Type::DOUBLE:
        to = double(from);
        return true;
      case Type::BOOL:
        to = bool(from);
        return true;
      case Type::NULL_VALUE:
        to = nullptr;
        return true;
    }
    return false;
  }

 private:
  const api::ResultLimits& limits_;
  std::size_t values_ = 0;
};

}  // namespace

struct WorkerResultParser::Parsers {
  std::mutex mutex;
  std::vector<std::unique_ptr<simdjson::dom::parser>> idle;

  std::unique_ptr<simdjson::dom::parser> take() {
    {
      std::lock_guard lock(mutex);
      if (!idle.empty()) {
        std::unique_ptr<simdjson::dom::parser> parser = std::move(idle.back());
        idle.pop_back();
        return parser;
      }
    }
    return std::make_unique<simdjson::dom::parser>(kFastBodyBytes);
  }

  void give_back(std::unique_ptr<simdjson::dom::parser> parser) {
    if (parser->capacity() > kKeptCapacityBytes) return;
    std::lock_guard lock(mutex);
    idle.push_back(std::move(parser));
  }
};

WorkerResultParser::WorkerResultParser() : parsers_(std::make_unique<Parsers>()) {}
WorkerResultParser::~WorkerResultParser() = default;

std::size_t WorkerResultParser::peak_bytes(std::size_t body_bytes,
                                           const api::ResultLimits& limits) {
  const std::size_t values = std::min(limits.values, body_bytes / 2 + 1);
  const std::size_t document = body_bytes + kDocumentBytesPerValue * values;
  return body_bytes + document + kParserBytesPerByte * std::min(body_bytes, kFastBodyBytes);
}

api::BoundedParse WorkerResultParser::parse(std::string_view body,
                                            const api::ResultLimits& limits) const {
  if (body.size() > kFastBodyBytes || body.size() > limits.bytes || may_hold_minus_zero(body)) {
    return api::parse_bounded_result(body, limits);
  }
  std::unique_ptr<simdjson::dom::parser> parser = parsers_->take();
  std::optional<json> document;
  simdjson::dom::element root;
  if (parser->parse(body.data(), body.size()).get(root) == simdjson::SUCCESS) {
    json built;
    if (Builder(limits).build(root, built)) document = std::move(built);
  }
  parsers_->give_back(std::move(parser));
  if (!document) return api::parse_bounded_result(body, limits);
  api::BoundedParse parsed;
  parsed.document = std::move(document);
  return parsed;
}

}  // namespace kubeload::controller
