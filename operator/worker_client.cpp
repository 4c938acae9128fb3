#include "operator/worker_client.hpp"

#include <cpprest/http_client.h>

namespace kubeload::controller {

std::string WorkerAddress::base_url() const {
  const bool ipv6 = ip.find(':') != std::string::npos;
  return "http://" + (ipv6 ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
}

std::optional<std::string> WorkerClient::call(const WorkerAddress& worker,
                                              const std::string& method, const std::string& path,
                                              int& status, std::string& error) const {
  try {
    web::http::client::http_client_config config;
    config.set_timeout(timeout_);
    web::http::client::http_client client(worker.base_url(), config);
    web::http::http_request request(method);
    request.set_request_uri(path);
    const web::http::http_response response = client.request(request).get();
    status = response.status_code();
    return response.extract_utf8string(true).get();
  } catch (const std::exception& e) {
    error = worker.base_url() + path + ": " + e.what();
    return std::nullopt;
  }
}

bool WorkerClient::start(const WorkerAddress& worker, int64_t start_at_unix_ms,
                         std::string& error) const {
  int status = 0;
  const auto body =
      call(worker, "POST", "/start?at=" + std::to_string(start_at_unix_ms), status, error);
  if (!body) return false;
  if (status / 100 != 2) {
    error = worker.base_url() + "/start: HTTP " + std::to_string(status) + ": " + *body;
    return false;
  }
  return true;
}

std::optional<nlohmann::json> WorkerClient::result(const WorkerAddress& worker,
                                                   std::string& error) const {
  int status = 0;
  const auto body = call(worker, "GET", "/result", status, error);
  if (!body) return std::nullopt;
  if (status != 200) {
    error = worker.base_url() + "/result: HTTP " + std::to_string(status);
    return std::nullopt;
  }
  nlohmann::json document = nlohmann::json::parse(*body, nullptr, false);
  if (document.is_discarded()) {
    error = worker.base_url() + "/result: not JSON";
    return std::nullopt;
  }
  return document;
}

bool WorkerClient::finish(const WorkerAddress& worker, std::string& error) const {
  int status = 0;
  const auto body = call(worker, "POST", "/finish", status, error);
  if (!body) return false;
  if (status != 200) {
    error = worker.base_url() + "/finish: HTTP " + std::to_string(status) + ": " + *body;
    return false;
  }
  return true;
}

}  // namespace kubeload::controller
