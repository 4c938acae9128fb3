#pragma once
// Loads the cluster CA and the client certificate/key from memory into an
// OpenSSL context. Kept apart from cpprestsdk so it can be checked on its own
// (the client calls it from http_client_config::set_ssl_context_callback).

#include "operator/kube/config.hpp"

typedef struct ssl_ctx_st SSL_CTX;

namespace kubeload::kube {

// Trusts exactly the configured CA when one is given (not the system store,
// as kubectl does), and presents the client certificate and key when given.
// Throws ConfigError naming the bad field (e.g. "client-key-data: ...").
void configure_tls(SSL_CTX* ctx, const ClusterConfig& cfg);

// Builds a throwaway context and configures it, so bad key material is
// reported when the client is created rather than on the first request.
void validate_tls(const ClusterConfig& cfg);

}  // namespace kubeload::kube
