// The worker's control server against arbitrary client bytes (any pod can
// connect to a worker's port): parsed as the server parses them (Boost.Beast's
// request parser under the server's limits, fed in pieces the input chooses),
// then decided as the server decides before the body is read (the run's token
// on the control paths) and, for /start, its start time. Nothing crashes or
// throws, and a control path goes on only with the run's token.
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "loadgen/worker_server/worker_server.hpp"

namespace {

constexpr std::string_view kToken = "4f1c0a9e7b2d4c6f8a1e3b5d7f9c2e4a";

void require(bool condition) {
  if (!condition) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace http = boost::beast::http;
  using kubeload::loadgen::ControlHeaderAnswer;
  if (size < 1) return 0;
  const std::size_t piece = 1 + data[0] % 64;
  const char* bytes = reinterpret_cast<const char*>(data + 1);
  std::size_t left = size - 1;

  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(kubeload::loadgen::kMaxControlRequestBytes));
  parser.body_limit(kubeload::loadgen::kMaxControlRequestBytes);
  std::string pending;
  boost::beast::error_code error;
  while (left > 0 && !error && !parser.is_header_done()) {
    const std::size_t take = left < piece ? left : piece;
    pending.append(bytes, take);
    bytes += take;
    left -= take;
    const std::size_t used = parser.put(boost::asio::buffer(pending), error);
    if (error == http::error::need_more) error = {};
    pending.erase(0, used);
  }
  if (error || !parser.is_header_done()) return 0;

  const auto& header = parser.get();
  const std::string_view target(header.target().data(), header.target().size());
  const auto authorization = header[http::field::authorization];
  const std::string_view presented(authorization.data(), authorization.size());
  const ControlHeaderAnswer answer =
      kubeload::loadgen::control_header_answer(target, presented, kToken);
  const bool control = kubeload::loadgen::is_control_path(target);
  if (control && answer == ControlHeaderAnswer::proceed) {
    require(presented.size() == 7 + kToken.size() && presented.substr(7) == kToken);
  }
  if (!control) require(answer == ControlHeaderAnswer::proceed);
  if (const auto at = kubeload::loadgen::requested_start_ms(target); at && *at != 0) {
    (void)kubeload::loadgen::start_time_problem(*at, 1780000000000);
  }
  return 0;
}
