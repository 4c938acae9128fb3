// <utility> must come before any Asio header: Boost 1.74's Asio with GCC 12 in
// C++20 mode uses std::exchange without including it.
#include <utility>

#include "operator/kube/client.hpp"

#include <cstdint>
#include <ctime>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include <cpprest/containerstream.h>
#include <cpprest/http_client.h>
#include <openssl/ssl.h>

#include "kubeload/base64.hpp"
#include "kubeload/text.hpp"
#include "operator/kube/proxy.hpp"
#include "operator/kube/tls.hpp"

namespace kubeload::kube {

namespace http = web::http;
using http::client::http_client;
using http::client::http_client_config;

std::string_view to_string(Propagation p) {
  switch (p) {
    case Propagation::Background:
      return "Background";
    case Propagation::Foreground:
      return "Foreground";
    case Propagation::Orphan:
      return "Orphan";
  }
  return "Background";
}

namespace {

std::string rfc3339_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Objects sent without apiVersion/kind are filled from the resource, so
// callers can pass just {"metadata":..., "data":...}.
nlohmann::json with_type(const ResourceRef& r, nlohmann::json obj) {
  if (!obj.is_object()) throw std::invalid_argument("kube: object body must be a JSON object");
  if (!obj.contains("apiVersion")) obj["apiVersion"] = r.api_version();
  if (!obj.contains("kind") && !r.kind.empty()) obj["kind"] = r.kind;
  return obj;
}

void require_namespace(const ResourceRef& r, const char* verb) {
  if (r.namespaced && r.namespace_.empty()) {
    throw std::invalid_argument(std::string("kube: ") + verb + " " + r.plural +
                                " needs a namespace");
  }
}

}  // namespace

// What a request authenticates with: the bearer token (if any) and the
// client whose TLS contexts carry the client certificate (if any).
struct Auth {
  std::string token;
  http_client http;
  std::optional<ExecCredential> exec;  // the plugin's credential this came from
};

struct Client::Impl {
  Impl(ClusterConfig c, ClientOptions o)
      : cfg(std::make_shared<const ClusterConfig>(std::move(c))),
        opts(std::move(o)),
        proxy(proxy_for(cfg->server, cfg->proxy_url)),
        token(*cfg),
        http(make_http(opts.request_timeout, cfg)) {
    // A static token or token file wins over the plugin, as in client-go.
    if (cfg->exec && cfg->token.empty() && cfg->token_file.empty()) {
      exec.emplace(*cfg, opts.exec);
    }
    if (!proxy.empty() && !tunnelled()) {
      if (const auto [user, password] = proxy_login(); !user.empty() || !password.empty()) {
        const std::string login = user + ":" + password;
        proxy_authorization =
            "Basic " + kubeload::base64_encode(std::span<const uint8_t>(
                           reinterpret_cast<const uint8_t*>(login.data()), login.size()));
      }
    }
  }

  // https servers are reached through a CONNECT tunnel, http ones by absolute
  // URIs sent to the proxy.
  bool tunnelled() const { return cfg->server.rfind("https://", 0) == 0; }
  // The user and password in the proxy URL, decoded.
  std::pair<std::string, std::string> proxy_login() const {
    const std::string user_info = web::uri(utility::conversions::to_string_t(proxy)).user_info();
    if (user_info.empty()) return {};
    const auto colon = user_info.find(':');
    return {web::uri::decode(user_info.substr(0, colon)),
            colon == std::string::npos ? "" : web::uri::decode(user_info.substr(colon + 1))};
  }

  // A TLS client for `tls` (the cluster's config, with the exec plugin's
  // client certificate when it gives one). Zero timeout: none.
  http_client make_http(std::chrono::milliseconds timeout,
                        std::shared_ptr<const ClusterConfig> tls) const {
    http_client_config c;
    // cpprestsdk has no "no timeout"; a year is longer than any request.
    c.set_timeout(timeout.count() > 0 ? timeout
                                      : std::chrono::milliseconds(std::chrono::hours(24 * 365)));
    c.set_validate_certificates(!tls->insecure_skip_tls_verify);
    // cpprestsdk builds a new asio ssl context per connection and hands it
    // here; the shared_ptr keeps the material alive for pooled connections.
    c.set_ssl_context_callback(
        [tls](boost::asio::ssl::context& ctx) { configure_tls(ctx.native_handle(), *tls); });
    if (!proxy.empty()) {
      try {
        // cpprestsdk (2.10, asio) sends CONNECT host:port through this proxy
        // for https servers (its ssl_proxy_tunnel) and absolute URIs for http
        // ones. Its CONNECT takes Basic credentials only from
        // set_credentials, and every use of those leaks the password's
        // std::string (its zero_memory_deleter is a no-op outside Windows):
        // so they go to cpprestsdk only for a tunnel, where that is once per
        // new connection, and an http request carries our own
        // Proxy-Authorization header instead (make_request).
        web::web_proxy web_proxy(web::uri(utility::conversions::to_string_t(proxy)));
        if (const auto [user, password] = proxy_login();
            tunnelled() && (!user.empty() || !password.empty())) {
          web_proxy.set_credentials(web::credentials(user, password));
        }
        c.set_proxy(web_proxy);
      } catch (const std::exception& e) {
        throw ConfigError("proxy \"" + proxy_shown() + "\" for " + tls->source + ": " + e.what());
      }
    }
    try {
      return http_client(utility::conversions::to_string_t(tls->server), c);
    } catch (const std::exception& e) {
      throw ConfigError("server \"" + tls->server + "\" from " + tls->source + ": " + e.what());
    }
  }

  // The credential for the next request: the static token and client, or the
  // exec plugin's credential (run now if none is cached or it expired).
  Auth auth(std::chrono::milliseconds timeout = {}) {
    const bool own_client = timeout.count() > 0;
    if (!exec) {
      return Auth{token.current(), own_client ? make_http(timeout, cfg) : http, std::nullopt};
    }
    ExecCredential cred;
    try {
      cred = exec->current();
    } catch (const ExecPluginError& e) {
      throw TransportError("credentials for " + cfg->source + ": " + e.what());
    }
    return auth_with(std::move(cred), timeout);
  }

  Auth auth_with(ExecCredential cred, std::chrono::milliseconds timeout) {
    if (cred.client_cert_pem.empty()) {
      return Auth{cred.token, timeout.count() > 0 ? make_http(timeout, cfg) : http, cred};
    }
    // A certificate from the plugin needs connections made with it: a client
    // of its own, replaced when the certificate changes (old pooled
    // connections go with the old client).
    std::lock_guard lock(cert_mu);
    if (!cert_http || cert_pem != cred.client_cert_pem || cert_key != cred.client_key_pem) {
      auto tls = std::make_shared<ClusterConfig>(*cfg);
      tls->client_cert_pem = cred.client_cert_pem;
      tls->client_key_pem = cred.client_key_pem;
      try {
        validate_tls(*tls);
      } catch (const ConfigError& e) {
        throw TransportError("credentials for " + cfg->source +
                             ": exec plugin's certificate: " + e.what());
      }
      cert_tls = tls;
      cert_http.emplace(make_http(opts.request_timeout, tls));
      cert_pem = cred.client_cert_pem;
      cert_key = cred.client_key_pem;
    }
    http_client client = timeout.count() > 0 ? make_http(timeout, cert_tls) : *cert_http;
    return Auth{cred.token, client, cred};
  }

  // After a 401: a fresh credential from the plugin, or nullopt when there is
  // no plugin to ask (a static credential would only be refused again).
  std::optional<Auth> reauth(const Auth& refused, std::chrono::milliseconds timeout = {}) {
    if (!exec || !refused.exec) return std::nullopt;
    ExecCredential cred;
    try {
      cred = exec->refresh_after_unauthorized(*refused.exec);
    } catch (const ExecPluginError& e) {
      throw TransportError("credentials for " + cfg->source + " after a 401: " + e.what());
    }
    return auth_with(std::move(cred), timeout);
  }

  http::http_request make_request(const http::method& method, const std::string& target,
                                  const std::string& bearer,
                                  std::string_view accept = "application/json") {
    http::http_request req(method);
    req.set_request_uri(web::uri(utility::conversions::to_string_t(target)));
    req.headers().add("Accept", std::string(accept));
    req.headers().add("User-Agent", opts.user_agent);
    if (!bearer.empty()) req.headers().add("Authorization", "Bearer " + bearer);
    if (!proxy_authorization.empty()) req.headers().add("Proxy-Authorization", proxy_authorization);
    if (!opts.impersonate_user.empty())
      req.headers().add("Impersonate-User", opts.impersonate_user);
    if (!opts.impersonate_groups.empty()) {
      // One header line per group: cpprestsdk keeps headers in a map and
      // would join repeated names with ", ", which the API server reads as
      // one group. It writes values as they are, so the later lines ride in
      // the first one's value (the Client refuses CR and LF in group names).
      std::string value = opts.impersonate_groups.front();
      for (std::size_t i = 1; i < opts.impersonate_groups.size(); ++i) {
        value += "\r\nImpersonate-Group:" + opts.impersonate_groups[i];
      }
      req.headers().add("Impersonate-Group", value);
    }
    if (!cfg->tls_server_name.empty() && cfg->server.rfind("https://", 0) == 0) {
      // cpprestsdk takes the name for SNI and for checking the certificate
      // from the Host header when one is set.
      req.headers().add("Host", cfg->tls_server_name);
    }
    return req;
  }

  Response send(const http::method& method, const std::string& target,
                std::optional<std::string> body = std::nullopt,
                const std::string& content_type = "application/json", std::stop_token stop = {},
                std::string_view accept = "application/json") {
    Auth current = auth();
    for (int attempt = 0;; ++attempt) {
      http::http_request req = make_request(method, target, current.token, accept);
      if (body) {
        // Not set_body(std::string): that overload views a char buffer as a
        // uint8_t one, which UBSan reports. A byte container is what it wants.
        const auto length = body->size();
        concurrency::streams::container_buffer<std::vector<uint8_t>> bytes(
            std::vector<uint8_t>(body->begin(), body->end()), std::ios_base::in);
        req.set_body(concurrency::streams::istream(bytes), length, content_type);
      }
      pplx::cancellation_token_source cancel;
      std::stop_callback on_stop(stop, [&cancel] { cancel.cancel(); });
      try {
        http::http_response resp = current.http.request(req, cancel.get_token()).get();
        const std::string text = resp.extract_utf8string(true).get();
        if (resp.status_code() == http::status_codes::Unauthorized && attempt == 0) {
          // The plugin's credential may have been revoked or rotated before
          // its expiry: ask once more and send the request again.
          if (std::optional<Auth> renewed = reauth(current)) {
            current = std::move(*renewed);
            continue;
          }
        }
        return make_response(resp.status_code(), text);
      } catch (const pplx::task_canceled&) {
        throw TransportError(method + " " + target + ": cancelled");
      } catch (const http::http_exception& e) {
        throw TransportError(method + " " + target + " (" + cfg->server + via() + "): " + e.what());
      }
    }
  }

  std::string via() const { return proxy.empty() ? "" : " via proxy " + proxy_shown(); }
  // The proxy URL without its password, for messages.
  std::string proxy_shown() const {
    const auto start = proxy.find("://");
    const auto at = proxy.find('@');
    if (start == std::string::npos || at == std::string::npos) return proxy;
    return proxy.substr(0, start + 3) + "***" + proxy.substr(at);
  }

  std::shared_ptr<const ClusterConfig> cfg;
  ClientOptions opts;
  std::string proxy;  // "" : direct
  BearerToken token;
  http_client http;
  std::optional<ExecAuthenticator> exec;
  std::string proxy_authorization;  // "Basic ..." for a plain-http server's proxy with a login
  std::mutex cert_mu;               // guards the client made for the plugin's certificate
  std::shared_ptr<const ClusterConfig> cert_tls;
  std::optional<http_client> cert_http;
  std::string cert_pem, cert_key;
};

Client::Client(ClusterConfig config, ClientOptions options) {
  validate_tls(config);
  const auto check_header_value = [](const std::string& value, const char* flag) {
    for (const char c : value) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        throw std::invalid_argument(std::string(flag) + ": \"" + printable(value) +
                                    "\" has a control character");
      }
    }
  };
  check_header_value(options.impersonate_user, "impersonate user (--as)");
  for (const std::string& group : options.impersonate_groups) {
    check_header_value(group, "impersonate group (--as-group)");
  }
  if (!options.impersonate_groups.empty() && options.impersonate_user.empty()) {
    // The API server refuses groups without a user; say so before sending.
    throw std::invalid_argument(
        "impersonate group (--as-group) needs a user to impersonate (--as)");
  }
  impl_ = std::make_unique<Impl>(std::move(config), std::move(options));
}

Client::~Client() = default;

const ClusterConfig& Client::config() const {
  return *impl_->cfg;
}

Response Client::get(const ResourceRef& r, std::string_view name) {
  return impl_->send(http::methods::GET, resource_path(r, name));
}

Response Client::get_metadata(const ResourceRef& r, std::string_view name) {
  return impl_->send(http::methods::GET, resource_path(r, name), std::nullopt, "application/json",
                     {}, kPartialObjectMetadata);
}

Response Client::list(const ResourceRef& r, const ListOptions& options, std::stop_token stop) {
  return impl_->send(http::methods::GET, resource_path(r) + list_query(options), std::nullopt,
                     "application/json", stop);
}

Response Client::create(const ResourceRef& r, const nlohmann::json& object) {
  require_namespace(r, "create");
  return impl_->send(http::methods::POST, resource_path(r), with_type(r, object).dump());
}

Response Client::replace(const ResourceRef& r, std::string_view name,
                         const nlohmann::json& object) {
  return impl_->send(http::methods::PUT, resource_path(r, name), with_type(r, object).dump());
}

Response Client::merge_patch(const ResourceRef& r, std::string_view name,
                             const nlohmann::json& patch, std::string_view subresource) {
  return impl_->send(http::methods::PATCH, resource_path(r, name, subresource), patch.dump(),
                     "application/merge-patch+json");
}

Response Client::apply(const ResourceRef& r, std::string_view name, const nlohmann::json& object,
                       const ApplyOptions& options, std::string_view subresource) {
  nlohmann::json body = with_type(r, object);
  body["metadata"]["name"] = std::string(name);
  const std::string& manager =
      options.field_manager.empty() ? impl_->opts.field_manager : options.field_manager;
  std::string target = resource_path(r, name, subresource) + "?fieldManager=" + url_encode(manager);
  if (options.force) target += "&force=true";
  return impl_->send(http::methods::PATCH, target, body.dump(), "application/apply-patch+yaml");
}

Response Client::remove(const ResourceRef& r, std::string_view name, const DeleteOptions& options) {
  nlohmann::json body = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (options.propagation) body["propagationPolicy"] = std::string(to_string(*options.propagation));
  if (!options.precondition_resource_version.empty()) {
    body["preconditions"]["resourceVersion"] = options.precondition_resource_version;
  }
  if (!options.precondition_uid.empty()) body["preconditions"]["uid"] = options.precondition_uid;
  return impl_->send(http::methods::DEL, resource_path(r, name), body.dump());
}

Response Client::update_with_retry(const ResourceRef& r, std::string_view name,
                                   const std::function<bool(nlohmann::json&)>& mutate,
                                   int max_attempts) {
  Response last;
  for (int attempt = 0; attempt < std::max(1, max_attempts); ++attempt) {
    Response current = get(r, name);
    if (!current.ok()) return current;
    nlohmann::json object = std::move(current.body);
    if (!mutate(object)) {
      current.body = std::move(object);
      return current;
    }
    // The object still carries the resourceVersion we read, so the PUT only
    // succeeds if nobody wrote in between; a 409 means read again.
    last = replace(r, name, object);
    if (!last.is_conflict()) return last;
  }
  return last;
}

Response Client::record_event(const nlohmann::json& involved, std::string_view type,
                              std::string_view reason, std::string_view message) {
  const nlohmann::json& meta = involved.at("metadata");
  const std::string name = meta.at("name").get<std::string>();
  const std::string ns = meta.value("namespace", std::string("default"));
  nlohmann::json ref = {{"apiVersion", involved.value("apiVersion", "")},
                        {"kind", involved.value("kind", "")},
                        {"name", name}};
  if (meta.contains("namespace")) ref["namespace"] = ns;
  if (meta.contains("uid")) ref["uid"] = meta["uid"];
  if (meta.contains("resourceVersion")) ref["resourceVersion"] = meta["resourceVersion"];
  const std::string now = rfc3339_now();
  const nlohmann::json event = {{"apiVersion", "v1"},
                                {"kind", "Event"},
                                {"metadata", {{"generateName", name + "."}, {"namespace", ns}}},
                                {"involvedObject", ref},
                                {"type", std::string(type)},
                                {"reason", std::string(reason)},
                                {"message", std::string(message)},
                                {"source", {{"component", impl_->opts.field_manager}}},
                                {"reportingComponent", impl_->opts.field_manager},
                                {"firstTimestamp", now},
                                {"lastTimestamp", now},
                                {"count", 1}};
  return create(resources::events(ns), event);
}

WatchResult Client::watch(const ResourceRef& r, const WatchOptions& options,
                          const std::function<void(const WatchEvent&)>& on_event,
                          std::stop_token stop) {
  WatchResult result;
  result.resource_version = options.resource_version;
  // A client of its own: the watch holds its connection for minutes, and its
  // timeout must outlast timeoutSeconds or cpprestsdk would cut it short.
  const int server_timeout = options.timeout_seconds > 0 ? options.timeout_seconds : 1800;
  const std::chrono::milliseconds watch_timeout = std::chrono::seconds(server_timeout + 60);
  const std::string target = resource_path(r) + watch_query(options);
  Auth auth = impl_->auth(watch_timeout);

  pplx::cancellation_token_source cancel;
  std::stop_callback on_stop(stop, [&cancel] { cancel.cancel(); });
  try {
    http::http_response resp =
        auth.http
            .request(impl_->make_request(http::methods::GET, target, auth.token),
                     cancel.get_token())
            .get();
    if (resp.status_code() == http::status_codes::Unauthorized) {
      // As in send(): one more try with a fresh credential from the plugin.
      if (std::optional<Auth> renewed = impl_->reauth(auth, watch_timeout)) {
        auth = std::move(*renewed);
        resp = auth.http
                   .request(impl_->make_request(http::methods::GET, target, auth.token),
                            cancel.get_token())
                   .get();
      }
    }
    if (resp.status_code() != http::status_codes::OK) {
      const Response err = make_response(resp.status_code(), resp.extract_utf8string(true).get());
      result.end = err.is_gone() ? WatchResult::End::Gone : WatchResult::End::Error;
      result.status = err.error;
      return result;
    }
    auto body = resp.body();
    WatchEventParser parser;
    std::vector<WatchParseItem> items;
    bool eof = false;
    while (!eof) {
      if (stop.stop_requested()) {
        result.end = WatchResult::End::Stopped;
        return result;
      }
      // A byte buffer, for the same reason as in send().
      concurrency::streams::container_buffer<std::vector<uint8_t>> line;
      const std::size_t n = body.read_line(line).get();
      if (n == 0 && body.is_eof()) {
        parser.finish(items);
        eof = true;
      } else {
        // read_line strips the newline; the parser wants the raw framing back.
        std::vector<uint8_t>& bytes = line.collection();
        bytes.push_back('\n');
        parser.feed(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                    items);
      }
      for (WatchParseItem& item : items) {
        if (std::holds_alternative<WatchParseError>(item)) {
          ++result.parse_errors;
          continue;
        }
        WatchEvent& ev = std::get<WatchEvent>(item);
        ++result.events;
        if (ev.type == WatchEventType::Error) {
          result.status = parse_status(ev.object);
          on_event(ev);
          const bool gone = result.status && result.status->code == 410;
          result.end = gone ? WatchResult::End::Gone : WatchResult::End::Error;
          return result;
        }
        if (auto m = ev.object.find("metadata"); m != ev.object.end() && m->is_object()) {
          if (auto rv = m->find("resourceVersion"); rv != m->end() && rv->is_string()) {
            result.resource_version = rv->get<std::string>();
          }
        }
        on_event(ev);
      }
      items.clear();
    }
    result.end = WatchResult::End::Closed;
    return result;
  } catch (const std::exception& e) {
    if (stop.stop_requested()) {
      result.end = WatchResult::End::Stopped;
      return result;
    }
    if (dynamic_cast<const pplx::task_canceled*>(&e) == nullptr &&
        dynamic_cast<const http::http_exception*>(&e) == nullptr) {
      throw;  // from on_event or a bug: not a transport problem
    }
    throw TransportError("watch " + target + " (" + impl_->cfg->server + impl_->via() +
                         "): " + e.what());
  }
}

}  // namespace kubeload::kube
