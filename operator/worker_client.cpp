#include "operator/worker_client.hpp"

#include <cpprest/containerstream.h>
#include <cpprest/http_client.h>

#include "operator/bounded_body.hpp"

#include <cctype>

namespace kubeload::controller {
namespace {

// A worker's error answer, shortened and with anything unprintable replaced:
// it ends up in the operator's log, never verbatim.
std::string quoted(const std::string& body) {
  std::string out;
  for (const char c : body.substr(0, kMaxQuotedWorkerBytes)) {
    out += std::isprint(static_cast<unsigned char>(c)) != 0 ? c : '?';
  }
  if (body.size() > kMaxQuotedWorkerBytes) out += "...";
  return out;
}

}  // namespace

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
    request.headers().add("Authorization", "Bearer " + worker.token);
    const web::http::http_response response = client.request(request).get();
    status = response.status_code();
    if (response.headers().content_length() > max_response_bytes_) {
      error = worker.base_url() + path + ": answer of " +
              std::to_string(response.headers().content_length()) + " bytes, more than " +
              std::to_string(max_response_bytes_);
      return std::nullopt;
    }
    std::optional<std::string> body = read_bounded_body(response, max_response_bytes_);
    if (!body) {
      error = worker.base_url() + path + ": answer longer than " +
              std::to_string(max_response_bytes_) + " bytes";
    }
    return body;
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
    error = worker.base_url() + "/start: HTTP " + std::to_string(status) + ": " + quoted(*body);
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
    error = worker.base_url() + "/finish: HTTP " + std::to_string(status) + ": " + quoted(*body);
    return false;
  }
  return true;
}

}  // namespace kubeload::controller
