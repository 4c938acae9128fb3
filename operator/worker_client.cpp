#include "operator/worker_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <cctype>
#include <chrono>

namespace kubeload::controller {
namespace {

// A worker's error answer, shortened and with anything unprintable replaced:
// it ends up in the operator's log, never verbatim.
std::string quoted(const std::string& body) {
  std::string out;
  for (const char c : body.substr(0, kMaxQuotedWorkerBytes)) {
    out += std::isprint(static_cast<unsigned char>(c)) != 0 ? c : '?';
  }
  if (body.size() > kMaxQuotedWorkerBytes) out += "...";
  return out;
}

// /start's and /finish's answers: a few fields, or an error line.
constexpr std::size_t kMaxSmallAnswerBytes = 64 * 1024;

}  // namespace

std::string WorkerAddress::base_url() const {
  const bool ipv6 = ip.find(':') != std::string::npos;
  return "http://" + (ipv6 ? "[" + ip + "]" : ip) + ":" + std::to_string(port);
}

std::optional<std::string> WorkerClient::call(const WorkerAddress& worker,
                                              const std::string& method, const std::string& path,
                                              std::size_t max_bytes, int& status,
                                              std::string& error, std::chrono::milliseconds wait,
                                              AnswerLease lease) const {
  namespace asio = boost::asio;
  namespace beast = boost::beast;
  namespace http = beast::http;
  const std::string where = worker.base_url() + path;
  boost::system::error_code failure;
  const asio::ip::address address = asio::ip::make_address(worker.ip, failure);
  if (failure) {
    error = where + ": \"" + worker.ip + "\" is not an IP address";
    return std::nullopt;
  }
  http::request<http::empty_body> request(method == "POST" ? http::verb::post : http::verb::get,
                                          path, 11);
  request.set(http::field::host, worker.base_url().substr(7));  // after "http://"
  request.set(http::field::authorization, "Bearer " + worker.token);
  request.set(http::field::connection, "close");
  request.prepare_payload();

  asio::io_context io;
  beast::tcp_stream stream(io);
  beast::flat_buffer buffer;
  // Beast reads as much as the buffer has room for, and a buffer starts at
  // 512 bytes: a 17 KB result took 35 reads, each a recvmsg, an epoll_wait and
  // a timer reset. Room for a loopback segment from the start: a read or two.
  buffer.reserve(std::min(max_bytes, kAnswerReadBytes));
  http::response_parser<http::string_body> parser;
  // A longer chunked body fails as soon as it passes the cap, a
  // Content-Length over it at the header (below): never more is held.
  parser.body_limit(static_cast<std::uint64_t>(max_bytes));
  parser.header_limit(static_cast<std::uint32_t>(kAnswerHeaderBytes));
  // The whole call: connect, send, wait, read.
  auto deadline = std::chrono::steady_clock::now() + timeout_ + wait;
  stream.expires_at(deadline);
  // One operation at a time on this thread, until the first failure.
  const auto step = [&](const auto& start) {
    if (failure) return;
    start([&](boost::system::error_code ec, auto&&...) { failure = ec; });
    io.restart();
    io.run();
  };
  step([&](auto done) {
    stream.async_connect(asio::ip::tcp::endpoint(address, worker.port), done);
  });
  step([&](auto done) { http::async_write(stream, request, done); });
  step([&](auto done) { http::async_read_header(stream, buffer, parser, done); });
  // Checked here as well as by the parser: Boost 1.74's eager body read
  // skips the limit for a Content-Length that arrives with the header.
  if (const auto length = parser.is_header_done() ? parser.content_length() : boost::none;
      length && *length > max_bytes) {
    error = where + ": answer of " + std::to_string(*length) + " bytes, more than " +
            std::to_string(max_bytes);
    return std::nullopt;
  }
  if (lease.lease != nullptr && !failure) {
    const auto length = parser.content_length();
    const auto asked = std::chrono::steady_clock::now();
    lease.lease->resize(kResultCallBytes +
                        WorkerResultParser::peak_bytes(
                            length ? static_cast<std::size_t>(*length) : max_bytes, *lease.limits));
    deadline += std::chrono::steady_clock::now() - asked;
    stream.expires_at(deadline);
  }
  step([&](auto done) { http::async_read(stream, buffer, parser, done); });
  if (failure == http::error::body_limit) {
    error = where + ": answer longer than " + std::to_string(max_bytes) + " bytes";
    return std::nullopt;
  }
  if (failure == beast::error::timeout) {
    error = where + ": no answer within " + std::to_string((timeout_ + wait).count()) + "ms";
    return std::nullopt;
  }
  if (failure) {
    error = where + ": " + failure.message();
    return std::nullopt;
  }
  status = parser.get().result_int();
  return std::move(parser.get().body());
}

bool WorkerClient::start(const WorkerAddress& worker, int64_t start_at_unix_ms,
                         std::string& error) const {
  int status = 0;
  const auto body = call(worker, "POST", "/start?at=" + std::to_string(start_at_unix_ms),
                         kMaxSmallAnswerBytes, status, error);
  if (!body) return false;
  if (status / 100 != 2) {
    error = worker.base_url() + "/start: HTTP " + std::to_string(status) + ": " + quoted(*body);
    return false;
  }
  return true;
}

std::optional<nlohmann::json> WorkerClient::result(const WorkerAddress& worker,
                                                   const api::ResultLimits& limits,
                                                   std::string& error, bool* token_refused,
                                                   std::chrono::milliseconds wait,
                                                   ByteBudget::Lease* lease) const {
  int status = 0;
  const std::string path =
      wait.count() > 0 ? "/result?wait=" + std::to_string(wait.count()) : "/result";
  const auto body =
      call(worker, "GET", path, limits.bytes, status, error, wait, AnswerLease{lease, &limits});
  if (!body) return std::nullopt;
  if (status != 200) {
    const bool refused = status == 401 || status == 403;
    if (token_refused != nullptr) *token_refused = refused;
    error = worker.base_url() + "/result: HTTP " + std::to_string(status) +
            (refused ? ": " + quoted(*body) : std::string());
    return std::nullopt;
  }
  api::BoundedParse parsed = results_->parse(*body, limits);
  if (!parsed.document) error = worker.base_url() + "/result: " + parsed.problem;
  return std::move(parsed.document);
}

bool WorkerClient::finish(const WorkerAddress& worker, std::string& error) const {
  int status = 0;
  const auto body = call(worker, "POST", "/finish", kMaxSmallAnswerBytes, status, error);
  if (!body) return false;
  if (status != 200) {
    error = worker.base_url() + "/finish: HTTP " + std::to_string(status) + ": " + quoted(*body);
    return false;
  }
  return true;
}

}  // namespace kubeload::controller
