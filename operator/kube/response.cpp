#include "operator/kube/response.hpp"

namespace kubeload::kube {

std::optional<ApiStatus> parse_status(const nlohmann::json& body) {
  if (!body.is_object() || body.value("kind", "") != "Status") return std::nullopt;
  ApiStatus s;
  auto str = [&](const char* key) {
    auto it = body.find(key);
    return it != body.end() && it->is_string() ? it->get<std::string>() : std::string{};
  };
  s.status = str("status");
  s.reason = str("reason");
  s.message = str("message");
  if (auto it = body.find("code"); it != body.end() && it->is_number_integer()) {
    s.code = it->get<int>();
  }
  if (auto it = body.find("details"); it != body.end()) s.details = *it;
  return s;
}

Response make_response(int http_status, std::string_view body_text) {
  Response r;
  r.http_status = http_status;
  if (!body_text.empty()) {
    r.body = nlohmann::json::parse(body_text, nullptr, /*allow_exceptions=*/false);
    if (r.body.is_discarded()) {
      r.body = nullptr;
      r.raw_body = std::string(body_text);
    }
  }
  if (!r.ok()) {
    r.error = parse_status(r.body);
    if (!r.error) {
      // Proxies and some handlers answer errors with plain text; keep the
      // code so the is_* helpers still work.
      r.error = ApiStatus{"Failure", "", r.raw_body, http_status, nullptr};
    }
    if (r.error->code == 0) r.error->code = http_status;
  }
  return r;
}

std::string Response::describe() const {
  std::string s = std::to_string(http_status);
  if (error) {
    if (!error->reason.empty()) s += " " + error->reason;
    if (!error->message.empty()) s += ": " + error->message;
  }
  return s;
}

}  // namespace kubeload::kube
