#include "loadgen/engine/network.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <cerrno>
#include <stdexcept>

#include "loadgen/engine/event_loop.hpp"

namespace kubeload::loadgen {
namespace {

// How long the checks before a run wait for one address or one handshake.
constexpr auto kProbeTimeout = std::chrono::seconds(5);

// The ex_data slot of an SSL that points at the connection's SslSession.
// (Asio keeps its verify callback in the app data slot.)
int session_slot() {
  static const int slot = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return slot;
}

// OpenSSL calls this for every session the server issues (during the
// handshake in TLS 1.2, after it in TLS 1.3); the connection keeps the last.
int keep_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* keep = static_cast<SslSession*>(SSL_get_ex_data(ssl, session_slot()));
  if (keep == nullptr) return 0;
  keep->reset(session);
  return 1;  // the reference is ours now
}

// Runs `io` until `done` is set or `timeout` passes; closes `socket` on timeout
// so the pending operation completes.
bool run_until(asio::io_context& io, const bool& done, tcp::socket& socket,
               std::chrono::milliseconds timeout) {
  io.restart();
  const auto deadline = Clock::now() + timeout;
  while (!done && Clock::now() < deadline) {
    io.run_one_until(deadline);
  }
  if (done) return true;
  boost::system::error_code ignored;
  socket.close(ignored);
  io.restart();
  io.run();
  return false;
}

bool connect_within(asio::io_context& io, tcp::socket& socket, const tcp::endpoint& endpoint,
                    std::chrono::milliseconds timeout) {
  bool done = false;
  boost::system::error_code result;
  socket.async_connect(endpoint, [&](const boost::system::error_code& ec) {
    result = ec;
    done = true;
  });
  return run_until(io, done, socket, timeout) && !result;
}

std::string describe_session(SSL* ssl) {
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl);
  int key_bits = 0;
  if (X509* certificate = SSL_get1_peer_certificate(ssl)) {
    if (EVP_PKEY* key = X509_get0_pubkey(certificate)) key_bits = EVP_PKEY_bits(key);
    X509_free(certificate);
  }
  int secret_bits = 0;
  if (cipher != nullptr) SSL_CIPHER_get_bits(cipher, &secret_bits);
  // ab's "SSL/TLS Protocol" form: protocol,cipher,key bits,secret bits.
  return std::string(SSL_get_version(ssl)) + "," +
         (cipher != nullptr ? SSL_CIPHER_get_name(cipher) : "?") + "," + std::to_string(key_bits) +
         "," + std::to_string(secret_bits);
}

// One handshake with the first reachable address, as every connection will
// make it. Returns the session's description; throws when the certificate
// does not verify. Any other failure is left to the run, which counts it.
// `alpn`: the protocol the server selected ("" when none); `refused_alpn`:
// the server ended the handshake because it speaks none of the protocols
// offered (the no_application_protocol alert, RFC 7301 section 3.2).
std::string check_tls(const RunPlan& plan, const tcp::endpoint& endpoint,
                      asio::ssl::context& context, std::string& alpn, bool& refused_alpn) {
  asio::io_context io;
  asio::ssl::stream<tcp::socket> stream(io, context);
  if (!connect_within(io, stream.next_layer(), endpoint, kProbeTimeout)) return {};
  configure_tls_connection(stream.native_handle(), plan.target, is_ip_literal(plan.target.host),
                           plan.tls, nullptr);
  bool done = false;
  boost::system::error_code result;
  stream.async_handshake(asio::ssl::stream_base::client, [&](const boost::system::error_code& ec) {
    result = ec;
    done = true;
  });
  if (!run_until(io, done, stream.next_layer(), kProbeTimeout)) return {};
  const long verify_result = SSL_get_verify_result(stream.native_handle());
  if (result && verify_result != X509_V_OK) {
    const std::string option = plan.tls.ca_file.empty()
                                   ? "--cacert FILE (spec.target.tls.caFrom) with the CA that "
                                     "signed it"
                                   : "a --cacert bundle that holds the CA that signed it (" +
                                         plan.tls.ca_file + " does not)";
    throw std::runtime_error(
        "TLS: the certificate of " + plan.target.host + " did not verify (" +
        X509_verify_cert_error_string(verify_result) + "); give " + option +
        ", or --insecure (spec.target.tls.insecureSkipVerify: true) to skip verification");
  }
  refused_alpn = result && result.category() == asio::error::get_ssl_category() &&
                 ERR_GET_REASON(static_cast<unsigned long>(result.value())) ==
                     SSL_R_TLSV1_ALERT_NO_APPLICATION_PROTOCOL;
  if (result) return {};
  const unsigned char* selected = nullptr;
  unsigned int selected_length = 0;
  SSL_get0_alpn_selected(stream.native_handle(), &selected, &selected_length);
  alpn.assign(reinterpret_cast<const char*>(selected), selected_length);
  std::string description = describe_session(stream.native_handle());
  boost::system::error_code ignored;
  stream.next_layer().close(ignored);
  return description;
}

}  // namespace

std::vector<tcp::endpoint> resolve_target(const Target& target, const TargetPolicy* policy) {
  if (policy != nullptr) {
    const TargetDecision decision = decide_host(*policy, target.host);
    if (!decision.allowed) {
      throw std::runtime_error("target host \"" + target.host + "\" refused: " + decision.reason);
    }
  }
  asio::io_context io;
  tcp::resolver resolver(io);
  boost::system::error_code ec;
  const auto results = resolver.resolve(target.host, std::to_string(target.port), ec);
  if (ec || results.empty()) {
    throw std::runtime_error("cannot resolve host \"" + target.host +
                             "\": " + (ec ? ec.message() : "no addresses"));
  }
  std::vector<tcp::endpoint> endpoints;
  for (const auto& entry : results) {
    // The address the socket will use, not the name: numeric forms, DNS answers
    // and IPv4-mapped IPv6 all end up here as what they really are.
    if (policy != nullptr) {
      const auto address = IpAddress::parse(entry.endpoint().address().to_string());
      const TargetDecision decision = address ? decide_target(*policy, *address, target.port)
                                              : TargetDecision{false, "unparsable address"};
      if (!decision.allowed) {
        throw std::runtime_error("target host \"" + target.host + "\" resolves to " +
                                 entry.endpoint().address().to_string() +
                                 ", refused: " + decision.reason);
      }
    }
    endpoints.push_back(entry.endpoint());
  }
  return endpoints;
}

std::vector<tcp::endpoint> connectable_in_order(const std::vector<tcp::endpoint>& endpoints,
                                                std::chrono::milliseconds timeout) {
  asio::io_context io;
  std::vector<tcp::endpoint> reachable;
  for (const tcp::endpoint& endpoint : endpoints) {
    tcp::socket socket(io);
    if (connect_within(io, socket, endpoint, timeout)) reachable.push_back(endpoint);
  }
  return reachable.empty() ? endpoints : reachable;
}

bool is_ip_literal(const std::string& host) {
  boost::system::error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

std::unique_ptr<asio::ssl::context> make_tls_context(const TlsOptions& options) {
  auto context = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_client);
  if (options.verify) {
    context->set_verify_mode(asio::ssl::verify_peer);
    boost::system::error_code ec;
    if (options.ca_file.empty()) {
      context->set_default_verify_paths(ec);
      if (ec)
        throw std::runtime_error("TLS: cannot load the system's CA certificates: " + ec.message());
    } else {
      context->load_verify_file(options.ca_file, ec);
      if (ec) {
        throw std::runtime_error("--cacert: cannot load CA certificates from \"" + options.ca_file +
                                 "\": " + ec.message());
      }
    }
  } else {
    context->set_verify_mode(asio::ssl::verify_none);
  }
  SSL_CTX* native = context->native_handle();
  if (options.resume) {
    // Sessions live with the connections that made them, not in a cache
    // shared across threads.
    SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL);
    SSL_CTX_sess_set_new_cb(native, keep_new_session);
  } else {
    SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(native, SSL_OP_NO_TICKET);
  }
  return context;
}

void configure_tls_connection(SSL* ssl, const Target& target, bool host_is_ip,
                              const TlsOptions& options, SslSession* keep) {
  if (!host_is_ip) SSL_set_tlsext_host_name(ssl, target.host.c_str());
  if (options.verify) {
    if (host_is_ip) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), target.host.c_str());
    } else {
      SSL_set1_host(ssl, target.host.c_str());
    }
  }
  if (options.resume && keep != nullptr) {
    SSL_set_ex_data(ssl, session_slot(), keep);
    if (*keep) {
      SSL_set_session(ssl, keep->get());
      // A TLS 1.2 session resumes as TLS 1.2, the version the server chose
      // on this slot's last connection. Offering TLS 1.3 too would make
      // OpenSSL generate a key share for the ClientHello (an X25519 key
      // pair: 18% of a --no-keepalive run's CPU against a TLS 1.2 server)
      // that an abbreviated TLS 1.2 handshake never uses. A handshake that
      // fails drops the kept session, so the next connection offers every
      // version again.
      const int version = SSL_SESSION_get_protocol_version(keep->get());
      if (version != 0 && version < TLS1_3_VERSION) SSL_set_max_proto_version(ssl, version);
    }
  }
}

bool kernel_tls_available() noexcept {
  static const bool available = [] {
    const UniqueFd probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!probe.is_open()) return false;
    // A kernel with the tls module refuses it on a socket that is not
    // connected (ENOTCONN, net/tls/tls_main.c); one without it, or that
    // may not load it here, says it has no such protocol (ENOENT).
    constexpr char kTls[] = "tls";
    if (::setsockopt(probe.get(), IPPROTO_TCP, TCP_ULP, kTls, sizeof kTls - 1) == 0) return true;
    return errno != ENOENT;
  }();
  return available;
}

TargetAccess prepare_target(const RunPlan& plan, const TargetPolicy* policy) {
  TargetAccess access;
  access.endpoints =
      connectable_in_order(resolve_target(plan.target, policy),
                           std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::min<Clock::duration>(kProbeTimeout, plan.timeout)));
  access.protocol = plan.protocol;
  if (plan.target.tls()) {
    access.tls = make_tls_context(plan.tls);
    if (plan.protocol == Protocol::http2) {
      // ALPN (RFC 7301): h2, and http/1.1 only when the user accepts it.
      static constexpr unsigned char kH2[] = "\x02h2";
      static constexpr unsigned char kH2OrHttp1[] = "\x02h2\x08http/1.1";
      if (plan.allow_http1) {
        SSL_CTX_set_alpn_protos(access.tls->native_handle(), kH2OrHttp1, sizeof kH2OrHttp1 - 1);
      } else {
        SSL_CTX_set_alpn_protos(access.tls->native_handle(), kH2, sizeof kH2 - 1);
      }
    }
    std::string alpn;
    bool refused_alpn = false;
    access.tls_description =
        check_tls(plan, access.endpoints.front(), *access.tls, alpn, refused_alpn);
    if (plan.protocol == Protocol::http2 && refused_alpn) {
      throw std::runtime_error(
          "HTTP/2: " + plan.target.host +
          " refused ALPN h2 (no_application_protocol alert: it does not speak HTTP/2 on port " +
          std::to_string(plan.target.port) + "); pass --allow-http1 to load it over HTTP/1.1, " +
          "or drop --h2 (spec.target.protocol: http1)");
    }
    if (plan.protocol == Protocol::http2 && !access.tls_description.empty() && alpn != "h2") {
      const std::string negotiated =
          alpn.empty() ? "no application protocol (ALPN)" : "\"" + alpn + "\"";
      if (!plan.allow_http1) {
        throw std::runtime_error(
            "HTTP/2: " + plan.target.host + " negotiated " + negotiated +
            " instead of h2; pass --allow-http1 to load it over HTTP/1.1, or drop --h2"
            " (spec.target.protocol: http1)");
      }
      access.protocol = Protocol::http1;
    }
  }
  return access;
}

}  // namespace kubeload::loadgen
