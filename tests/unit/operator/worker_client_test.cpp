#include "operator/worker_client.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "kubeload/spec.hpp"
#include "loadgen/worker_server/worker_server.hpp"
#include "socket_call_counter.hpp"

namespace kubeload::controller {
namespace {

using boost::asio::ip::tcp;
using namespace std::chrono_literals;

// A worker that answers one connection with `answer` (raw bytes), or, with
// no answer, reads the request and then says nothing until the client hangs
// up. Held, it sends `at_once` after the request, says that it has the
// request (requested()), and the answer only once released: a run that is
// not over yet, answering a GET /result?wait= when it ends.
class OneShotWorker {
 public:
  enum class Hold { no, until_released };
  explicit OneShotWorker(std::optional<std::string> answer, Hold hold = Hold::no,
                         std::string at_once = {})
      : acceptor_(io_, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
        port_(acceptor_.local_endpoint().port()),
        thread_([this, answer = std::move(answer), hold, at_once = std::move(at_once)] {
          tcp::socket socket(io_);
          acceptor_.accept(socket);
          boost::asio::streambuf buffer;
          boost::system::error_code ec;
          const std::size_t head = boost::asio::read_until(socket, buffer, "\r\n\r\n", ec);
          request_ = std::string(static_cast<const char*>(buffer.data().data()), head);
          boost::asio::write(socket, boost::asio::buffer(at_once), ec);
          requested_.set_value();
          if (hold == Hold::until_released) released_.get_future().wait();
          if (answer) {
            boost::asio::write(socket, boost::asio::buffer(*answer), ec);
            socket.shutdown(tcp::socket::shutdown_send, ec);
          }
          char byte;
          socket.read_some(boost::asio::buffer(&byte, 1), ec);  // until the client closes
        }) {}
  ~OneShotWorker() {
    release();
    if (thread_.joinable()) thread_.join();
  }

  WorkerAddress address() const { return WorkerAddress{"127.0.0.1", port_, "run-token"}; }
  // What the client sent; waits for the client to hang up.
  const std::string& request() {
    if (thread_.joinable()) thread_.join();
    return request_;
  }
  std::future<void> requested() { return requested_.get_future(); }
  void release() {
    std::call_once(released_once_, [this] { released_.set_value(); });
  }

 private:
  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  uint16_t port_;  // read before the thread starts: the acceptor is the thread's
  std::string request_;
  std::promise<void> requested_;
  std::promise<void> released_;
  std::once_flag released_once_;
  std::thread thread_;
};

// The limits of a run of the default spec (one request, no stages).
const api::ResultLimits kLimits = api::result_limits(LoadTestSpec{});

uint16_t unused_port() {
  boost::asio::io_context io;
  tcp::acceptor probe(io, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
  return probe.local_endpoint().port();
}

std::string http_answer(const std::string& status, const std::string& body) {
  return "HTTP/1.1 " + status +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

TEST(WorkerClient, FetchesAResultWithTheRunsToken) {
  OneShotWorker worker(http_answer("200 OK", R"({"finished":true,"worker":3})"));
  std::string error;
  const auto document = WorkerClient(2s).result(worker.address(), kLimits, error);
  ASSERT_TRUE(document.has_value()) << error;
  EXPECT_EQ((*document)["worker"], 3);
  EXPECT_EQ(worker.request().rfind("GET /result HTTP/1.1\r\n", 0), 0u) << worker.request();
  std::string headers = worker.request();
  std::transform(headers.begin(), headers.end(), headers.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  headers.erase(std::remove(headers.begin(), headers.end(), ' '), headers.end());
  EXPECT_NE(headers.find("\r\nauthorization:bearerrun-token\r\n"), std::string::npos) << headers;
}

// A worker's final result is tens of KB (docs/benchmarks.md): it is read a
// loopback segment at a time, not in Beast's first 512-byte steps (each a
// recvmsg, an epoll_wait and a timer reset: 1,000 workers' results took
// 35,000 of each).
TEST(WorkerClient, ALargeResultTakesAFewReadsNotOnePerHalfKilobyte) {
  const std::string body = R"({"finished":true,"pad":")" + std::string(60'000, 'x') + R"("})";
  OneShotWorker worker(http_answer("200 OK", body));
  api::ResultLimits limits = kLimits;
  limits.bytes = 1 << 20;
  std::string error;
  std::optional<nlohmann::json> document;
  uint64_t waits = 0;
  {
    const testing::SocketCallCounter calls;
    document = WorkerClient(2s).result(worker.address(), limits, error);
    waits = calls.epoll_waits();
  }
  ASSERT_TRUE(document.has_value()) << error;
  EXPECT_EQ((*document)["pad"].get_ref<const std::string&>().size(), 60'000u);
  EXPECT_LE(waits, 12u) << "a 60 KB answer read in small steps";
}

TEST(WorkerClient, AResultRefusedForTheTokenSaysSo) {
  for (const char* status : {"403 Forbidden", "401 Unauthorized"}) {
    OneShotWorker worker(http_answer(status, "not this run's token\n"));
    std::string error;
    bool token_refused = false;
    EXPECT_FALSE(
        WorkerClient(2s).result(worker.address(), kLimits, error, &token_refused).has_value());
    EXPECT_TRUE(token_refused) << status;
    EXPECT_NE(error.find("not this run's token"), std::string::npos) << error;
  }
  OneShotWorker busy(http_answer("503 Service Unavailable", "busy\n"));
  std::string error;
  bool token_refused = true;
  EXPECT_FALSE(WorkerClient(2s).result(busy.address(), kLimits, error, &token_refused).has_value());
  EXPECT_FALSE(token_refused) << error;
}

TEST(WorkerClient, StartSendsTheBarrierAndQuotesARefusal) {
  OneShotWorker worker(http_answer("400 Bad Request", "start time too far\x01 away\n"));
  std::string error;
  EXPECT_FALSE(WorkerClient(2s).start(worker.address(), 1796134986468, error));
  EXPECT_EQ(worker.request().rfind("POST /start?at=1796134986468 HTTP/1.1\r\n", 0), 0u);
  EXPECT_NE(error.find("/start: HTTP 400: start time too far? away"), std::string::npos) << error;
}

TEST(WorkerClient, AnAnswerOverTheCapIsRefusedWhateverItsFraming) {
  const std::string big(4096, 'x');
  api::ResultLimits small = kLimits;
  small.bytes = 1024;
  {
    OneShotWorker worker(http_answer("200 OK", big));
    std::string error;
    EXPECT_FALSE(WorkerClient(2s).result(worker.address(), small, error).has_value());
    EXPECT_NE(error.find("/result: answer of 4096 bytes, more than 1024"), std::string::npos)
        << error;
  }
  {
    // Chunked: no length up front; refused once the body passes the cap.
    std::string chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
    for (int i = 0; i < 4; ++i) chunked += "400\r\n" + big.substr(0, 1024) + "\r\n";
    chunked += "0\r\n\r\n";
    OneShotWorker worker(chunked);
    std::string error;
    EXPECT_FALSE(WorkerClient(2s).result(worker.address(), small, error).has_value());
    EXPECT_NE(error.find("/result: answer longer than 1024 bytes"), std::string::npos) << error;
  }
}

// Within the byte limit, but more values than the spec's rows can hold: a
// pod answering with a long array of zeros is refused by the streaming
// check, before a document of millions of nodes is built.
TEST(WorkerClient, AnAnswerWithMoreValuesThanTheSpecsRowsIsRefusedBeforeItIsBuilt) {
  std::string zeros = "[0";
  for (std::size_t i = 1; i <= kLimits.values; ++i) zeros += ",0";
  zeros += "]";
  ASSERT_LT(zeros.size(), kLimits.bytes);
  OneShotWorker worker(http_answer("200 OK", zeros));
  std::string error;
  EXPECT_FALSE(WorkerClient(2s).result(worker.address(), kLimits, error).has_value());
  EXPECT_NE(error.find("/result: more than " + std::to_string(kLimits.values) + " JSON values"),
            std::string::npos)
      << error;
}

// A call leases from the /result budget what it holds: its read buffer and
// header while the worker holds the answer, then what the answer's length
// says it will take (body, document, parser), or for an answer without a
// length what the spec's byte limit would.
TEST(WorkerClient, ALeaseHoldsTheCallsBytesUntilTheHeaderThenTheAnswers) {
  const std::string body = R"({"finished":true,"worker":3})";
  OneShotWorker worker(http_answer("200 OK", body), OneShotWorker::Hold::until_released);
  ByteBudget budget(std::size_t{1} << 30);
  ByteBudget::Lease lease = budget.reserve(kResultCallBytes);
  std::optional<nlohmann::json> document;
  std::string error;
  std::thread call([&] {
    document = WorkerClient(2s).result(worker.address(), kLimits, error, nullptr, 2s, &lease);
  });
  worker.requested().wait();
  EXPECT_EQ(budget.free(), budget.total() - kResultCallBytes);  // the held call: its buffer
  worker.release();
  call.join();
  ASSERT_TRUE(document.has_value()) << error;
  EXPECT_EQ(lease.bytes(), kResultCallBytes + WorkerResultParser::peak_bytes(body.size(), kLimits));
  EXPECT_LT(lease.bytes(), 2 * kResultCallBytes);

  std::string chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  chunked += "2\r\n{}\r\n0\r\n\r\n";
  OneShotWorker unsized(chunked);
  ByteBudget::Lease unsized_lease = budget.reserve(kResultCallBytes);
  ASSERT_TRUE(WorkerClient(2s)
                  .result(unsized.address(), kLimits, error, nullptr, {}, &unsized_lease)
                  .has_value())
      << error;
  EXPECT_EQ(unsized_lease.bytes(),
            kResultCallBytes + WorkerResultParser::peak_bytes(kLimits.bytes, kLimits));
}

// The pass at the end of a run: every call held open until its worker's run
// ends. A budget that had room for one call of a 10-stage, 5-request spec
// when each leased twice the spec's byte limit (45 MB) holds all eight at
// once: each worker answers only once all eight have asked.
TEST(WorkerClient, CallsHeldUntilTheRunEndsShareTheBudget) {
  LoadTestSpec spec;
  spec.load.stages.resize(10);
  spec.requests.resize(5);
  const api::ResultLimits limits = api::result_limits(spec);
  ByteBudget budget(2 * limits.bytes);
  constexpr std::size_t kCalls = 8;
  std::vector<std::unique_ptr<OneShotWorker>> workers;
  std::vector<std::future<void>> requested;
  for (std::size_t i = 0; i < kCalls; ++i) {
    workers.push_back(std::make_unique<OneShotWorker>(
        http_answer("200 OK", R"({"finished":true,"worker":)" + std::to_string(i) + "}"),
        OneShotWorker::Hold::until_released));
    requested.push_back(workers.back()->requested());
  }
  std::vector<std::optional<nlohmann::json>> documents(kCalls);
  std::vector<std::string> errors(kCalls);
  std::vector<std::jthread> calls;
  for (std::size_t i = 0; i < kCalls; ++i) {
    calls.emplace_back([&, i] {
      ByteBudget::Lease lease = budget.reserve(kResultCallBytes);
      documents[i] =
          WorkerClient(10s).result(workers[i]->address(), limits, errors[i], nullptr, 10s, &lease);
    });
  }
  std::size_t asked = 0;
  for (std::future<void>& each : requested) {
    asked += each.wait_for(20s) == std::future_status::ready ? 1 : 0;
  }
  EXPECT_EQ(asked, kCalls) << "calls waited for the budget while the others were held";
  for (const auto& worker : workers) worker->release();
  calls.clear();
  for (std::size_t i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(documents[i].has_value()) << errors[i];
    EXPECT_EQ((*documents[i])["worker"], i);
  }
  EXPECT_EQ(budget.free(), budget.total());
}

// Waiting for the budget is the operator's own queue, not the worker's
// slowness: a call whose header came in time is not timed out for the wait.
TEST(WorkerClient, WaitingForTheBudgetDoesNotCountAgainstTheTimeout) {
  const std::string body = R"({"finished":true,"worker":1})";
  const std::string answer = http_answer("200 OK", body);
  const std::size_t head = answer.find("\r\n\r\n") + 4;
  OneShotWorker worker(answer.substr(head), OneShotWorker::Hold::until_released,
                       answer.substr(0, head));
  ByteBudget budget(kResultCallBytes + WorkerResultParser::peak_bytes(body.size(), kLimits));
  std::optional<ByteBudget::Lease> blocker;
  blocker.emplace(budget.reserve(budget.total() - kResultCallBytes));
  ByteBudget::Lease lease = budget.reserve(kResultCallBytes);
  std::optional<nlohmann::json> document;
  std::string error;
  std::thread call([&] {
    document = WorkerClient(200ms).result(worker.address(), kLimits, error, nullptr, {}, &lease);
  });
  // The call has the header and gave its bytes back to wait for the answer's.
  for (int i = 0; i < 10'000 && budget.free() != kResultCallBytes; ++i) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(budget.free(), kResultCallBytes) << "the call did not wait for the budget";
  std::this_thread::sleep_for(400ms);  // past the call's 200 ms timeout
  blocker.reset();
  worker.release();  // the body
  call.join();
  ASSERT_TRUE(document.has_value()) << error;
  EXPECT_EQ((*document)["worker"], 1);
}

TEST(WorkerClient, AWorkerThatNeverAnswersCostsOneTimeout) {
  OneShotWorker worker(std::nullopt);
  std::string error;
  const auto began = std::chrono::steady_clock::now();
  EXPECT_FALSE(WorkerClient(200ms).result(worker.address(), kLimits, error).has_value());
  const auto took = std::chrono::steady_clock::now() - began;
  EXPECT_GE(took, 200ms);
  EXPECT_LT(took, 5s);  // one timeout, not the default
  EXPECT_EQ(error.rfind(worker.address().base_url() + "/result: ", 0), 0u) << error;
}

TEST(WorkerClient, ARefusedConnectionNamesTheWorker) {
  const uint16_t closed_port = unused_port();
  std::string error;
  EXPECT_FALSE(WorkerClient(2s).finish(WorkerAddress{"127.0.0.1", closed_port, "t"}, error));
  EXPECT_EQ(error.rfind("http://127.0.0.1:" + std::to_string(closed_port) + "/finish: ", 0), 0u)
      << error;
}

// A `loadgen worker` on 127.0.0.1:`port` for run `uid` with `load`, its
// target a port nothing listens on: every request a quick connect error.
loadgen::WorkerConfig local_worker(uint16_t port, const std::string& uid, const std::string& load) {
  loadgen::WorkerConfig config;
  config.listen = "127.0.0.1:" + std::to_string(port);
  config.token = "run-token";
  config.loadtest_uid = uid;
  config.target_url = "http://127.0.0.1:" + std::to_string(unused_port()) + "/";
  config.spec = parse_loadtest(R"({"apiVersion": "kubeload.dev/v1alpha1", "kind": "LoadTest",
      "metadata": {"name": "client"},
      "spec": {"target": {"url": ")" +
                               config.target_url + R"("}, "load": )" + load + "}}")
                    .spec;
  config.termination_log =
      (std::filesystem::temp_directory_path() / ("kubeload-client-" + std::to_string(port)))
          .string();
  config.linger = std::chrono::seconds(30);
  return config;
}

// The worker's first /result answer, once it listens.
std::optional<nlohmann::json> first_result(const WorkerClient& client, const WorkerAddress& address,
                                           const api::ResultLimits& limits, std::string& error) {
  std::optional<nlohmann::json> document;
  for (int i = 0; i < 100 && !document; ++i) {
    document = client.result(address, limits, error);
    if (!document) std::this_thread::sleep_for(20ms);
  }
  return document;
}

// GET /result read by hand: its Content-Length (none for a chunked answer)
// and its body.
std::pair<std::optional<std::size_t>, std::string> raw_result(const WorkerAddress& address) {
  namespace http = boost::beast::http;
  boost::asio::io_context io;
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(boost::asio::ip::make_address(address.ip), address.port));
  http::request<http::empty_body> request(http::verb::get, "/result", 11);
  request.set(http::field::host, address.ip);
  request.set(http::field::authorization, "Bearer " + address.token);
  http::write(socket, request);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  http::read(socket, buffer, response);
  std::optional<std::size_t> length;
  if (!response.chunked() && response.has_content_length()) {
    length = std::stoul(std::string(response[http::field::content_length]));
  }
  return {length, response.body()};
}

// The operator's client against loadgen's own worker server, the whole
// protocol: a partial result before the start, the barrier, the final
// result with the run's UID, the acknowledgement that lets the worker exit.
TEST(WorkerClient, RunsTheWholeProtocolAgainstLoadgensWorker) {
  const uint16_t port = unused_port();
  const loadgen::WorkerConfig config =
      local_worker(port, "uid-7", R"({"connections": 1, "requests": 3})");
  std::atomic<bool> stop(false);
  std::thread worker([&] { loadgen::run_worker(config, stop); });

  const WorkerAddress address{"127.0.0.1", port, "run-token"};
  const WorkerClient client(2s);
  std::string error;
  std::optional<nlohmann::json> document =
      first_result(client, address, api::result_limits(config.spec), error);
  ASSERT_TRUE(document.has_value()) << error;
  EXPECT_EQ((*document)["finished"], false);
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  ASSERT_TRUE(client.start(address, now_ms + 100, error)) << error;
  for (int i = 0; i < 250 && (*document)["finished"] != true; ++i) {
    std::this_thread::sleep_for(20ms);
    document = client.result(address, api::result_limits(config.spec), error);
    ASSERT_TRUE(document.has_value()) << error;
  }
  EXPECT_EQ((*document)["finished"], true);
  EXPECT_EQ((*document)["loadTestUid"], "uid-7");
  EXPECT_EQ((*document)["result"]["requests"], 3);
  // The final document says its length up front (the worker writes it as
  // it sends it), so the operator's call leases what it holds, not what the
  // spec's largest document would.
  const auto [length, body] = raw_result(address);
  ASSERT_TRUE(length.has_value()) << "the final result came without a Content-Length";
  EXPECT_EQ(*length, body.size());
  EXPECT_EQ(nlohmann::json::parse(body), *document);
  ByteBudget budget(std::size_t{1} << 30);
  ByteBudget::Lease lease = budget.reserve(kResultCallBytes);
  const api::ResultLimits limits = api::result_limits(config.spec);
  ASSERT_TRUE(client.result(address, limits, error, nullptr, {}, &lease)) << error;
  EXPECT_EQ(lease.bytes(), kResultCallBytes + WorkerResultParser::peak_bytes(body.size(), limits));
  EXPECT_TRUE(client.finish(address, error)) << error;
  worker.join();  // it exits once the result is acknowledged
  std::filesystem::remove(config.termination_log);
}

// GET /result?wait=: a worker whose run is not over holds the answer until it
// is (the final result, on the first call), or answers with its partial
// result when the wait is up first.
TEST(WorkerClient, AWaitingResultCallIsAnsweredWhenTheRunEnds) {
  const uint16_t port = unused_port();
  const loadgen::WorkerConfig config =
      local_worker(port, "uid-8", R"({"connections": 1, "duration": "3s"})");
  std::atomic<bool> stop(false);
  std::thread worker([&] { loadgen::run_worker(config, stop); });

  const WorkerAddress address{"127.0.0.1", port, "run-token"};
  const WorkerClient client(2s);
  const api::ResultLimits limits = api::result_limits(config.spec);
  std::string error;
  std::optional<nlohmann::json> document = first_result(client, address, limits, error);
  ASSERT_TRUE(document.has_value()) << error;
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  ASSERT_TRUE(client.start(address, now_ms + 100, error)) << error;
  // A wait shorter than the 3 s run: the partial result.
  document = client.result(address, limits, error, nullptr, 100ms);
  ASSERT_TRUE(document.has_value()) << error;
  EXPECT_EQ((*document)["finished"], false);
  // A wait past its end: the final result, in one call.
  document = client.result(address, limits, error, nullptr, loadgen::kMaxResultWait);
  ASSERT_TRUE(document.has_value()) << error;
  EXPECT_EQ((*document)["finished"], true);
  EXPECT_EQ((*document)["loadTestUid"], "uid-8");
  // Over: a waiting call is answered at once, with the same document.
  const std::optional<nlohmann::json> again =
      client.result(address, limits, error, nullptr, loadgen::kMaxResultWait);
  ASSERT_TRUE(again.has_value()) << error;
  EXPECT_EQ(*again, *document);
  EXPECT_TRUE(client.finish(address, error)) << error;
  worker.join();
  std::filesystem::remove(config.termination_log);
}

}  // namespace
}  // namespace kubeload::controller
