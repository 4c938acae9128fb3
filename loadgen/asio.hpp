#pragma once
// Every Asio user includes this first: Boost 1.74's Asio uses std::exchange
// without including <utility>, which GCC 12 in C++20 mode does not pull in.
#include <utility>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

namespace kubeload::loadgen {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;
}  // namespace kubeload::loadgen
