// How a TLS connection is prepared to resume the session its slot kept: a
// TLS 1.2 session is offered as TLS 1.2 only (no TLS 1.3 key share to
// generate), a TLS 1.3 session and a fresh connection offer every version.
// No handshake is made: what the ClientHello will offer is read back from
// the SSL object.

#include <openssl/ssl.h>

#include <gtest/gtest.h>

#include "loadgen/engine/network.hpp"

namespace kubeload::loadgen {
namespace {

struct SslFree {
  void operator()(SSL* ssl) const noexcept { SSL_free(ssl); }
};

class TlsResume : public ::testing::Test {
 protected:
  TlsResume() {
    options_.verify = false;
    target_.scheme = "https";
    target_.host = "127.0.0.1";
    target_.port = 8443;
  }

  // A new connection's SSL, prepared with `keep` as the slot's kept session.
  std::unique_ptr<SSL, SslFree> prepared(SslSession* keep) {
    std::unique_ptr<SSL, SslFree> ssl(SSL_new(context_->native_handle()));
    configure_tls_connection(ssl.get(), target_, true, options_, keep);
    return ssl;
  }

  static SslSession session_of(int version) {
    SslSession session(SSL_SESSION_new());
    SSL_SESSION_set_protocol_version(session.get(), version);
    return session;
  }

  TlsOptions options_;
  Target target_;
  std::unique_ptr<asio::ssl::context> context_ = make_tls_context(options_);
};

TEST_F(TlsResume, ATls12SessionIsOfferedAsTls12Only) {
  SslSession keep = session_of(TLS1_2_VERSION);
  const auto ssl = prepared(&keep);
  EXPECT_EQ(SSL_get_max_proto_version(ssl.get()), TLS1_2_VERSION);
  EXPECT_EQ(SSL_get_session(ssl.get()), keep.get());
}

TEST_F(TlsResume, ATls13SessionAndAFreshConnectionOfferEveryVersion) {
  SslSession keep = session_of(TLS1_3_VERSION);
  EXPECT_EQ(SSL_get_max_proto_version(prepared(&keep).get()), 0);  // 0: the highest
  SslSession none;
  EXPECT_EQ(SSL_get_max_proto_version(prepared(&none).get()), 0);
  EXPECT_EQ(SSL_get_max_proto_version(prepared(nullptr).get()), 0);
}

TEST_F(TlsResume, WithoutResumptionNoSessionIsOfferedNorVersionCapped) {
  options_.resume = false;
  context_ = make_tls_context(options_);
  SslSession keep = session_of(TLS1_2_VERSION);
  const auto ssl = prepared(&keep);
  EXPECT_EQ(SSL_get_session(ssl.get()), nullptr);
  EXPECT_EQ(SSL_get_max_proto_version(ssl.get()), 0);
}

}  // namespace
}  // namespace kubeload::loadgen
