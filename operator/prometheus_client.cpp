#include "operator/prometheus_client.hpp"

#include <cpprest/http_client.h>
#include <cpprest/uri.h>

#include <cmath>
#include <cstdio>
#include <variant>

#include <nlohmann/json.hpp>

#include "kubeload/json_access.hpp"
#include "kubeload/text.hpp"
#include "kubeload/url.hpp"
#include "operator/bounded_body.hpp"
#include "operator/timestamp.hpp"

namespace kubeload::controller {

using json = nlohmann::json;
using json_access::member;
using json_access::text;

namespace {

std::string form_value(const std::string& value) {
  return web::uri::encode_data_string(value);
}

}  // namespace

std::optional<std::string> prometheus_url_problem(const std::string& url) {
  const auto parsed = parse_http_url(url);
  if (const auto* problem = std::get_if<std::string>(&parsed)) return *problem;
  if (std::get<HttpUrl>(parsed).target.find('?') != std::string::npos) {
    return "must have no query, got " + quote(url);
  }
  return std::nullopt;
}

PrometheusClient::PrometheusClient(std::string base_url, std::chrono::milliseconds timeout)
    : base_url_(std::move(base_url)), timeout_(timeout) {
  while (!base_url_.empty() && base_url_.back() == '/') base_url_.pop_back();
}

std::optional<double> PrometheusClient::scalar(const std::string& expression, Timestamp at) const {
  const std::string where = base_url_ + "/api/v1/query";
  std::string body;
  int status = 0;
  try {
    web::http::client::http_client_config config;
    config.set_timeout(timeout_);
    web::http::client::http_client client(base_url_, config);
    web::http::http_request request(web::http::methods::POST);
    request.set_request_uri("/api/v1/query");
    // POST: a selector of many pods does not fit every proxy's URL limit.
    request.set_body("query=" + form_value(expression) + "&time=" + form_value(unix_seconds(at)),
                     "application/x-www-form-urlencoded");
    const web::http::http_response response = client.request(request).get();
    status = response.status_code();
    std::optional<std::string> read = read_bounded_body(response, kMaxPrometheusResponseBytes);
    if (!read) {
      throw PrometheusError(
          where + ": answer longer than " + std::to_string(kMaxPrometheusResponseBytes) + " bytes",
          false);
    }
    body = std::move(*read);
  } catch (const PrometheusError&) {
    throw;
  } catch (const std::exception& e) {
    throw PrometheusError(where + ": " + e.what(), true);
  }
  const json document = json::parse(body, nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    throw PrometheusError(
        where + ": HTTP " + std::to_string(status) + ", not a Prometheus answer: " + quote(body),
        status >= 500);
  }
  if (text(member(document, "status")) != "success") {
    throw PrometheusError(
        where + ": HTTP " + std::to_string(status) + ", " + text(member(document, "errorType")) +
            ": " + text(member(document, "error")) + " (query " + quote(expression) + ")",
        status >= 500 || status == 0);
  }
  const json& data = member(document, "data");
  const json& result = member(data, "result");
  const std::string type = text(member(data, "resultType"));
  const json* value = nullptr;
  if (type == "scalar") {
    value = &result;
  } else if (type == "vector" && result.is_array()) {
    if (result.empty()) return std::nullopt;
    if (result.size() != 1) {
      throw PrometheusError(where + ": " + std::to_string(result.size()) +
                                " samples where one was asked for (query " + quote(expression) +
                                ")",
                            false);
    }
    value = &member(result[0], "value");
  }
  if (value == nullptr || !value->is_array() || value->size() != 2 || !(*value)[1].is_string()) {
    throw PrometheusError(where + ": unexpected result " + quote(data.dump()), false);
  }
  const std::string number = (*value)[1].get<std::string>();
  try {
    std::size_t used = 0;
    const double parsed = std::stod(number, &used);
    if (used != number.size()) throw std::invalid_argument(number);
    if (!std::isfinite(parsed)) return std::nullopt;
    return parsed;
  } catch (const std::exception&) {
    throw PrometheusError(where + ": the sample value " + quote(number) + " is not a number",
                          false);
  }
}

}  // namespace kubeload::controller
