#pragma once
// How the workers reach the target: its addresses (resolved once, the ones
// that accept a connection kept, in the resolver's order, as wrk does) and, for
// https, the TLS client context: certificates verified by default, SNI for
// host names only, sessions resumed on reconnect. A certificate that does not
// verify stops the run before it starts, with one message naming the host and
// the fix, instead of a count of connect errors.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <openssl/ssl.h>

#include "kubeload/target_policy.hpp"
#include "loadgen/engine/asio.hpp"
#include "loadgen/engine/plan.hpp"

namespace kubeload::loadgen {

struct TargetAccess {
  std::vector<tcp::endpoint> endpoints;     // never empty
  std::unique_ptr<asio::ssl::context> tls;  // https only
  std::string tls_description;              // "TLSv1.3,TLS_AES_256_GCM_SHA384,2048,256"
  // What the run speaks: the plan's protocol, or http1 when an http2 target
  // negotiated http/1.1 and the plan allows it (--allow-http1).
  Protocol protocol = Protocol::http1;
};

// Resolves, probes and (for https) verifies the target and, for http2, the
// protocol it negotiates (ALPN), every address decided by `policy` first (if
// any) so that nothing is probed that the policy refuses. Throws
// std::runtime_error with a one-line message when the run cannot start.
TargetAccess prepare_target(const RunPlan& plan, const TargetPolicy* policy);

// The host's addresses in the resolver's order, each decided with `policy`
// (null: no policy, loadgen on a developer's machine). Throws
// std::runtime_error naming the host when it does not resolve, or naming the
// host, the address and the rule when the policy refuses an address ("target
// host \"metadata\" resolves to 169.254.169.254, refused: ...").
std::vector<tcp::endpoint> resolve_target(const Target& target, const TargetPolicy* policy);

// The endpoints that accept a TCP connection within `timeout`, tried one by
// one in order; all of them when none does (the run then counts connect
// errors, as it would have).
std::vector<tcp::endpoint> connectable_in_order(const std::vector<tcp::endpoint>& endpoints,
                                                std::chrono::milliseconds timeout);

// True for an IPv4 or IPv6 literal (no SNI for those, RFC 6066 section 3).
bool is_ip_literal(const std::string& host);

// A TLS client context for `options`: verification against the system store
// or options.ca_file; session resumption through tls_keep_session_in.
std::unique_ptr<asio::ssl::context> make_tls_context(const TlsOptions& options);

// A resumable session kept by one connection.
struct SslSessionFree {
  void operator()(SSL_SESSION* session) const noexcept { SSL_SESSION_free(session); }
};
using SslSession = std::unique_ptr<SSL_SESSION, SslSessionFree>;

// Prepares one TLS connection: SNI (host names only), the name or address the
// certificate must carry, and the session to resume, if any; new sessions the
// server issues on this connection are stored in `*keep` (nullptr: none kept).
void configure_tls_connection(SSL* ssl, const Target& target, bool host_is_ip,
                              const TlsOptions& options, SslSession* keep);

// Whether this kernel can take a TLS connection's records (the tls upper
// layer protocol, kTLS; loaded on demand where the kernel may load it).
// Asked once per process, on a socket that never connects: OpenSSL's
// SSL_OP_ENABLE_KTLS is set only where it can succeed, since each attempt
// costs a connection failing system calls and a flush of its own.
bool kernel_tls_available() noexcept;

}  // namespace kubeload::loadgen
