#pragma once
// The per-run worker token: what a worker demands on /start, /result and
// /finish (loadgen/worker_server/worker_server.hpp), so that no other pod of the cluster can
// drive a run or read its results.

#include <string>
#include <string_view>

namespace kubeload::controller {

// The token of one run: HMAC-SHA256 of the LoadTest's UID under the operator's
// key (worker_token_key.hpp: its Secret or file), hex. Derived rather than
// stored, so a restarted or standby operator with the same key drives the same
// workers without reading each run's Secret; a new LoadTest (a new UID) gets a
// new token. Throws std::invalid_argument for an empty key or UID.
std::string worker_token(std::string_view key, std::string_view loadtest_uid);

}  // namespace kubeload::controller
