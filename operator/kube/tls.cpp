#include "operator/kube/tls.hpp"

#include <memory>
#include <string>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace kubeload::kube {

namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
struct CtxFree {
  void operator()(SSL_CTX* c) const { SSL_CTX_free(c); }
};
using Bio = std::unique_ptr<BIO, BioFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;

std::string openssl_error() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no PEM data found";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

Bio memory_bio(const std::string& pem) {
  Bio b(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  if (!b) throw ConfigError("TLS: out of memory");
  return b;
}

std::string field(const ClusterConfig& cfg, const char* what) {
  return "TLS config from " + (cfg.source.empty() ? std::string("?") : cfg.source) + ": " + what;
}

}  // namespace

void configure_tls(SSL_CTX* ctx, const ClusterConfig& cfg) {
  ERR_clear_error();
  if (!cfg.ca_pem.empty()) {
    // A fresh store holding only our CA(s): the cluster's CA is private and a
    // public CA must not be able to vouch for the API server.
    X509_STORE* store = X509_STORE_new();
    if (!store) throw ConfigError("TLS: out of memory");
    SSL_CTX_set_cert_store(ctx, store);  // the context owns it from here
    Bio bio = memory_bio(cfg.ca_pem);
    int added = 0;
    while (X509Ptr cert{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)}) {
      if (X509_STORE_add_cert(store, cert.get()) != 1) {
        throw ConfigError(field(cfg, "certificate-authority: ") + openssl_error());
      }
      ++added;
    }
    ERR_clear_error();  // the loop ends on a "no start line" error
    if (added == 0) {
      throw ConfigError(field(cfg, "certificate-authority(-data) holds no PEM certificate"));
    }
  }
  if (!cfg.client_cert_pem.empty()) {
    Bio bio = memory_bio(cfg.client_cert_pem);
    X509Ptr cert{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)};
    if (!cert) {
      throw ConfigError(field(cfg, "client-certificate(-data): ") + openssl_error());
    }
    if (SSL_CTX_use_certificate(ctx, cert.get()) != 1) {
      throw ConfigError(field(cfg, "client-certificate(-data): ") + openssl_error());
    }
    // Intermediates after the leaf go into the chain sent to the server.
    while (X509Ptr extra{PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)}) {
      if (SSL_CTX_add_extra_chain_cert(ctx, extra.get()) != 1) {
        throw ConfigError(field(cfg, "client-certificate(-data): ") + openssl_error());
      }
      extra.release();  // owned by the context now
    }
    ERR_clear_error();
  }
  if (!cfg.client_key_pem.empty()) {
    Bio bio = memory_bio(cfg.client_key_pem);
    std::unique_ptr<EVP_PKEY, KeyFree> key{
        PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr)};
    if (!key) throw ConfigError(field(cfg, "client-key(-data): ") + openssl_error());
    // OpenSSL checks the pair in either call, depending on which came first.
    if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
      throw ConfigError(field(cfg, "client-key(-data) does not match client-certificate: ") +
                        openssl_error());
    }
  }
}

void validate_tls(const ClusterConfig& cfg) {
  std::unique_ptr<SSL_CTX, CtxFree> ctx{SSL_CTX_new(TLS_client_method())};
  if (!ctx) throw ConfigError("TLS: cannot create an OpenSSL context");
  configure_tls(ctx.get(), cfg);
}

}  // namespace kubeload::kube
