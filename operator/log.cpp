#include "operator/log.hpp"

#include <chrono>

#include "operator/timestamp.hpp"

namespace kubeload::controller {

void Logger::write(std::string_view level, std::string_view message, nlohmann::json fields) {
  const auto now = std::chrono::system_clock::now();
  const auto millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::string ts = format_time(now);  // "2026-11-29T19:42:53Z"
  if (!ts.empty() && ts.back() == 'Z') {
    char fraction[8];
    std::snprintf(fraction, sizeof fraction, ".%03lldZ", static_cast<long long>(millis));
    ts.pop_back();
    ts += fraction;
  }
  nlohmann::json line = {{"ts", ts}, {"level", level}, {"msg", message}};
  if (fields.is_object()) line.update(fields);
  const std::string text = line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::lock_guard lock(mutex_);
  out_ << text << '\n' << std::flush;
}

}  // namespace kubeload::controller
