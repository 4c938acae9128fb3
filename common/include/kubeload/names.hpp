#pragma once
// The naming rules every part shares: Kubernetes object names and labels,
// HTTP tokens, request names. One definition, used by the spec parser, the
// operator's builders and loadgen alike.

#include <cstddef>
#include <string>
#include <string_view>

#include "kubeload/api/meta.hpp"

namespace kubeload {

using api::kTestLabel;

// RFC 9110 token: header names and methods.
bool is_http_token(std::string_view s);
// A method: a token without lower-case letters (a lower-case "get" is almost
// always a typo that a server would answer with 405 or 501).
bool is_http_method(std::string_view s);
// RFC 1123 label (namespaces, Job names): [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63.
bool is_dns1123_label(std::string_view s);
// RFC 1035 label (Service names): like RFC 1123 but starting with a letter.
bool is_dns1035_label(std::string_view s);
// RFC 1123 subdomain (object names): dot-separated labels, at most 253.
bool is_dns1123_subdomain(std::string_view s);
// A metadata.generateName: the prefix the API server completes with 5 random
// characters. Checked as the API server checks it: a subdomain once a
// trailing '-' is masked, with room left for the 5 characters.
bool is_generate_name(std::string_view s);
// A request name, which becomes a metric label: [a-z0-9]([-a-z0-9_]*[a-z0-9])?, at most 253.
bool is_request_name(std::string_view s);
// A label key: an optional DNS subdomain prefix and "/", then at most 63
// alphanumerics, '-', '_' and '.', starting and ending alphanumeric.
bool is_qualified_name(std::string_view s);
// A label value: empty, or at most 63 like the name part of a label key.
bool is_label_value(std::string_view s);
// A Secret key: [-._a-zA-Z0-9]+, at most 253.
bool is_secret_key(std::string_view s);

// 8 hex digits of FNV-1a over `text`: the same on every platform and in
// every release (std::hash promises neither), so names built from it never
// change. For names too long for a label or a Job name.
inline constexpr std::size_t kShortHashLength = 8;
// The longest object name (an RFC 1123 subdomain).
inline constexpr std::size_t kMaxObjectName = 253;
std::string short_hash(std::string_view text);

// The value of the kubeload.dev/loadtest label (on a run's Job, pods and
// LoadTestResult records): the LoadTest's name itself when it fits in a
// label value (63 characters), else a prefix and its short_hash. The
// operator writes it and selects by it; the plugin selects by it.
std::string loadtest_label_value(std::string_view loadtest_name);

}  // namespace kubeload
