#pragma once
// A virtual user's cookie jar: the Set-Cookie fields of the responses it got
// from the load target, sent back in the Cookie field of its later requests,
// as a browser would (RFC 6265 section 5, for one origin; docs/scenarios.md,
// "Cookie jar", says what is kept and what is ignored). Pure: the caller
// passes the time. No heap allocation once its buffers have grown, so a
// journey that sets the same cookies every iteration costs none.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/scenario/response.hpp"

namespace kubeload::scenario {

class CookieJar {
 public:
  // RFC 6265 section 6.1 asks a user agent for at least 50 cookies per domain
  // and 4096 bytes per cookie; a server that relies on more is not served by
  // browsers either, and the bound keeps a virtual user's memory small
  // whatever the target sends (a jar holds at most about 50 x 8 KiB).
  static constexpr std::size_t max_cookies = 50;  // the oldest goes for a new one
  // Name and value together; a cookie with more, or with a longer Path, is
  // ignored (not cut: a cut value would be a wrong value).
  static constexpr std::size_t max_cookie_bytes = 4096;

  CookieJar();

  // Stores the cookies of every Set-Cookie field (any case) of a response to
  // a request for `request_path` (its query, if any, is ignored), received at
  // `now_unix_ms`. A cookie replaces the one of the same name and path; one
  // that is already expired (Max-Age <= 0, Expires in the past) deletes it.
  // Malformed fields are ignored, as RFC 6265 says.
  void update(std::span<const Header> response_headers, std::string_view request_path,
              std::int64_t now_unix_ms);

  // Appends "Cookie: a=1; b=2\r\n" with the cookies for a request to
  // `request_path` at `now_unix_ms` (path-matched, unexpired, Secure ones only
  // over TLS), longer paths first and then oldest first (RFC 6265 section
  // 5.4); appends nothing when none matches.
  void append_cookie_header(std::string_view request_path, bool secure_channel,
                            std::int64_t now_unix_ms, std::string& out) const;

  // Forgets every cookie (a new virtual user), keeping the buffers.
  void clear() noexcept;

  // Cookies stored, expired ones not yet dropped included.
  std::size_t size() const noexcept;

 private:
  struct Cookie {
    bool live = false;
    bool secure = false;
    std::string name_value;  // "name=value", as sent back
    std::size_t name_size = 0;
    std::string path;
    std::int64_t expiry_unix_ms = 0;  // INT64_MAX for a session cookie
    std::uint64_t creation = 0;       // order of creation, kept when replaced

    std::string_view name() const { return std::string_view(name_value).substr(0, name_size); }
  };

  void store(std::string_view name, std::string_view value, std::string_view path,
             std::optional<std::int64_t> expiry_unix_ms, bool secure, std::int64_t now_unix_ms);
  Cookie* slot_for_new_cookie(std::int64_t now_unix_ms);

  std::vector<Cookie> cookies_;  // max_cookies slots; a dead slot keeps its buffers
  std::uint64_t next_creation_ = 0;
};

// RFC 6265 section 5.1.1's cookie-date (IMF-fixdate, RFC 850 and asctime
// dates, and what servers make of them) in Unix milliseconds; nullopt when
// it is not a date. Exposed for tests.
std::optional<std::int64_t> parse_cookie_date(std::string_view text);

// Section 5.1.4: the default path of a cookie set by a response to
// `request_path`, and whether a request for `request_path` path-matches
// `cookie_path`. `request_path` may carry a query; it is ignored.
std::string_view default_cookie_path(std::string_view request_path);
bool cookie_path_matches(std::string_view request_path, std::string_view cookie_path);

}  // namespace kubeload::scenario
