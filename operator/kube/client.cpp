// <utility> must come before any Asio header: Boost 1.74's Asio with GCC 12 in
// C++20 mode uses std::exchange without including it.
#include <utility>

#include "operator/kube/client.hpp"

#include <cstdint>
#include <ctime>
#include <optional>
#include <vector>

#include <cpprest/containerstream.h>
#include <cpprest/http_client.h>
#include <openssl/ssl.h>

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

struct Client::Impl {
  Impl(ClusterConfig c, ClientOptions o)
      : cfg(std::make_shared<const ClusterConfig>(std::move(c))),
        opts(std::move(o)),
        token(*cfg),
        http(make_http(opts.request_timeout)) {}

  http_client make_http(std::chrono::seconds timeout) const {
    http_client_config c;
    c.set_timeout(timeout);
    c.set_validate_certificates(!cfg->insecure_skip_tls_verify);
    // cpprestsdk builds a new asio ssl context per connection and hands it
    // here; the shared_ptr keeps the material alive for pooled connections.
    c.set_ssl_context_callback(
        [cfg = cfg](boost::asio::ssl::context& ctx) { configure_tls(ctx.native_handle(), *cfg); });
    try {
      return http_client(utility::conversions::to_string_t(cfg->server), c);
    } catch (const std::exception& e) {
      throw ConfigError("server \"" + cfg->server + "\" from " + cfg->source + ": " + e.what());
    }
  }

  http::http_request make_request(const http::method& method, const std::string& target) {
    http::http_request req(method);
    req.set_request_uri(web::uri(utility::conversions::to_string_t(target)));
    req.headers().add("Accept", "application/json");
    req.headers().add("User-Agent", opts.user_agent);
    if (const std::string t = token.current(); !t.empty()) {
      req.headers().add("Authorization", "Bearer " + t);
    }
    return req;
  }

  Response send(const http::method& method, const std::string& target,
                std::optional<std::string> body = std::nullopt,
                const std::string& content_type = "application/json", std::stop_token stop = {}) {
    http::http_request req = make_request(method, target);
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
      http::http_response resp = http.request(req, cancel.get_token()).get();
      const std::string text = resp.extract_utf8string(true).get();
      return make_response(resp.status_code(), text);
    } catch (const pplx::task_canceled&) {
      throw TransportError(method + " " + target + ": cancelled");
    } catch (const http::http_exception& e) {
      throw TransportError(method + " " + target + " (" + cfg->server + "): " + e.what());
    }
  }

  std::shared_ptr<const ClusterConfig> cfg;
  ClientOptions opts;
  BearerToken token;
  http_client http;
};

Client::Client(ClusterConfig config, ClientOptions options) {
  validate_tls(config);
  impl_ = std::make_unique<Impl>(std::move(config), std::move(options));
}

Client::~Client() = default;

const ClusterConfig& Client::config() const {
  return *impl_->cfg;
}

Response Client::get(const ResourceRef& r, std::string_view name) {
  return impl_->send(http::methods::GET, resource_path(r, name));
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
  http_client watch_http = impl_->make_http(std::chrono::seconds(server_timeout + 60));
  const std::string target = resource_path(r) + watch_query(options);
  http::http_request req = impl_->make_request(http::methods::GET, target);

  pplx::cancellation_token_source cancel;
  std::stop_callback on_stop(stop, [&cancel] { cancel.cancel(); });
  try {
    http::http_response resp = watch_http.request(req, cancel.get_token()).get();
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
    throw TransportError("watch " + target + " (" + impl_->cfg->server + "): " + e.what());
  }
}

}  // namespace kubeload::kube
