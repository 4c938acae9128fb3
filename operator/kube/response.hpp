#pragma once
// What the API server answered: the HTTP status, the body, and on errors the
// metav1.Status it sends (reason, message, code) so callers branch on meaning.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kubeload::kube {

struct ApiStatus {
  std::string status;   // "Success" or "Failure"
  std::string reason;   // "NotFound", "Conflict", "AlreadyExists", "Expired", "Invalid", ...
  std::string message;  // human-readable, names the object or field
  int code = 0;         // HTTP code the status stands for
  nlohmann::json details;
};

// A Status object if `body` is one (kind == "Status"), else nullopt.
std::optional<ApiStatus> parse_status(const nlohmann::json& body);

struct Response {
  int http_status = 0;
  nlohmann::json body;             // the parsed JSON body; null when empty or not JSON
  std::string raw_body;            // kept only when the body was not JSON, for error text
  std::optional<ApiStatus> error;  // set on every non-2xx answer

  bool ok() const { return http_status >= 200 && http_status < 300; }
  bool is_not_found() const { return http_status == 404; }
  // 409 from a stale resourceVersion; a create of an existing name is also 409
  // but says AlreadyExists, which a retry from a fresh read would not fix.
  bool is_conflict() const { return http_status == 409 && !is_already_exists(); }
  bool is_already_exists() const {
    return http_status == 409 && error && error->reason == "AlreadyExists";
  }
  bool is_gone() const { return http_status == 410; }
  bool is_invalid() const { return http_status == 422; }
  // "404 NotFound: configmaps \"x\" not found" (or the raw body when there was no Status).
  std::string describe() const;
};

// Builds a Response from a status code and body text: parses JSON and, for
// errors, the Status (synthesised from the HTTP code when the body is not one).
Response make_response(int http_status, std::string_view body_text);

}  // namespace kubeload::kube
