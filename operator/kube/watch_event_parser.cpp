#include "operator/kube/watch_event_parser.hpp"

namespace kubeload::kube {

std::string_view to_string(WatchEventType t) {
  switch (t) {
    case WatchEventType::Added:
      return "ADDED";
    case WatchEventType::Modified:
      return "MODIFIED";
    case WatchEventType::Deleted:
      return "DELETED";
    case WatchEventType::Bookmark:
      return "BOOKMARK";
    case WatchEventType::Error:
      return "ERROR";
  }
  return "UNKNOWN";
}

std::optional<WatchEventType> parse_watch_event_type(std::string_view s) {
  if (s == "ADDED") return WatchEventType::Added;
  if (s == "MODIFIED") return WatchEventType::Modified;
  if (s == "DELETED") return WatchEventType::Deleted;
  if (s == "BOOKMARK") return WatchEventType::Bookmark;
  if (s == "ERROR") return WatchEventType::Error;
  return std::nullopt;
}

void WatchEventParser::feed(std::string_view bytes, std::vector<WatchParseItem>& out) {
  while (!bytes.empty()) {
    const auto nl = bytes.find('\n');
    const std::string_view piece = bytes.substr(0, nl);
    if (discarding_) {
      // The rest of an over-long line, already reported.
    } else if (pending_.size() + piece.size() > max_line_bytes_) {
      ++line_;
      out.emplace_back(WatchParseError{
          line_, "watch event line longer than " + std::to_string(max_line_bytes_) + " bytes"});
      pending_.clear();
      pending_.shrink_to_fit();
      discarding_ = true;
    } else if (nl != std::string_view::npos && pending_.empty()) {
      // Common case, the whole line is in this chunk: no copy.
      ++line_;
      parse_line(piece, out);
    } else {
      pending_.append(piece);
      if (nl != std::string_view::npos) {
        ++line_;
        parse_line(pending_, out);
        pending_.clear();
      }
    }
    if (nl == std::string_view::npos) return;
    discarding_ = false;
    bytes.remove_prefix(nl + 1);
  }
}

void WatchEventParser::finish(std::vector<WatchParseItem>& out) {
  const bool partial =
      !pending_.empty() && pending_.find_first_not_of(" \t\r") != std::string::npos;
  if (partial) {
    out.emplace_back(WatchParseError{line_ + 1, "watch stream ended inside an event (" +
                                                    std::to_string(pending_.size()) + " bytes)"});
  }
  pending_.clear();
  discarding_ = false;
}

void WatchEventParser::parse_line(std::string_view line, std::vector<WatchParseItem>& out) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.remove_suffix(1);
  }
  if (line.find_first_not_of(" \t") == std::string_view::npos) return;  // keep-alive blank line

  auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  auto fail = [&](std::string msg) {
    constexpr std::size_t kQuote = 80;
    std::string head(line.substr(0, kQuote));
    if (line.size() > kQuote) head += "...";
    out.emplace_back(WatchParseError{line_, std::move(msg) + ": " + head});
  };
  if (j.is_discarded()) return fail("watch event is not valid JSON");
  if (!j.is_object()) return fail("watch event is not a JSON object");
  auto type_it = j.find("type");
  if (type_it == j.end() || !type_it->is_string()) return fail("watch event has no \"type\"");
  auto type = parse_watch_event_type(type_it->get_ref<const std::string&>());
  if (!type) return fail("unknown watch event type \"" + type_it->get<std::string>() + "\"");
  auto obj_it = j.find("object");
  if (obj_it == j.end() || !obj_it->is_object()) return fail("watch event has no \"object\"");
  out.emplace_back(WatchEvent{*type, std::move(*obj_it)});
}

}  // namespace kubeload::kube
