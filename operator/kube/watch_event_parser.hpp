#pragma once
// Splits a watch response body (newline-delimited JSON, arriving in arbitrary
// pieces) into typed events. Bytes go in as they come off the wire; a line is
// parsed only once its newline has arrived, so a line split across chunks and
// several lines in one chunk both work. A bad line becomes an error entry and
// parsing carries on with the next line.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace kubeload::kube {

enum class WatchEventType { Added, Modified, Deleted, Bookmark, Error };

std::string_view to_string(WatchEventType t);
std::optional<WatchEventType> parse_watch_event_type(std::string_view s);

struct WatchEvent {
  WatchEventType type = WatchEventType::Added;
  nlohmann::json object;  // the object; for Error events a metav1.Status
};

struct WatchParseError {
  std::size_t line = 0;  // 1-based line number in the stream
  std::string message;
};

using WatchParseItem = std::variant<WatchEvent, WatchParseError>;

class WatchEventParser {
 public:
  static constexpr std::size_t kDefaultMaxLineBytes = 64 * 1024 * 1024;

  explicit WatchEventParser(std::size_t max_line_bytes = kDefaultMaxLineBytes)
      : max_line_bytes_(max_line_bytes) {}

  // Appends every event (or error) completed by `bytes` to `out`, in stream order.
  void feed(std::string_view bytes, std::vector<WatchParseItem>& out);
  // End of stream: a partial line left over is reported as an error.
  void finish(std::vector<WatchParseItem>& out);

  // Bytes of an incomplete line held back, waiting for its newline.
  std::size_t buffered() const { return pending_.size(); }

 private:
  void parse_line(std::string_view line, std::vector<WatchParseItem>& out);

  std::size_t max_line_bytes_;
  std::string pending_;
  std::size_t line_ = 0;
  // Set after an over-long line was reported: drop bytes up to its newline.
  bool discarding_ = false;
};

}  // namespace kubeload::kube
