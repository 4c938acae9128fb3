#pragma once
// Structured logs: one JSON object per line on stderr
// ({"ts":"...","level":"info","msg":"...", ...fields}).

#include <iostream>
#include <mutex>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kubeload::controller {

class Logger {
 public:
  explicit Logger(std::ostream& out = std::cerr) : out_(out) {}
  void info(std::string_view message, nlohmann::json fields = nlohmann::json::object()) {
    write("info", message, std::move(fields));
  }
  void warn(std::string_view message, nlohmann::json fields = nlohmann::json::object()) {
    write("warn", message, std::move(fields));
  }
  void error(std::string_view message, nlohmann::json fields = nlohmann::json::object()) {
    write("error", message, std::move(fields));
  }

 private:
  void write(std::string_view level, std::string_view message, nlohmann::json fields);
  std::mutex mutex_;
  std::ostream& out_;
};

}  // namespace kubeload::controller
