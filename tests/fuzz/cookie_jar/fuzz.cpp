// The cookie jar against arbitrary Set-Cookie values and request paths. The
// first byte: bit 0 a TLS request, the rest seconds later for the request.
// Then lines: the path of the request that got the response, the path of
// the next request, and one Set-Cookie value per line. Whatever was set, the
// Cookie field is one well-formed header line (nothing can end it early),
// the jar stays within its bounds, a plain cookie is always kept and deleted
// as asked, and dates and default paths are sound.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "common/scenario/cookie_jar.hpp"

namespace {

using namespace kubeload::scenario;

void require(bool condition) {
  if (!condition) std::abort();
}

constexpr std::int64_t now = 1796464800000;  // 2026-12-05 10:00:00 UTC

std::string_view next_line(std::string_view& input) {
  const std::size_t lf = input.find('\n');
  const std::string_view line = input.substr(0, lf);
  input.remove_prefix(lf == std::string_view::npos ? input.size() : lf + 1);
  return line;
}

void require_well_formed(const std::string& field) {
  if (field.empty()) return;
  require(field.starts_with("Cookie: ") && field.ends_with("\r\n"));
  const std::string_view pairs = std::string_view(field).substr(8, field.size() - 10);
  require(!pairs.empty());
  for (char c : pairs) {
    const auto byte = static_cast<unsigned char>(c);
    require(byte >= 0x20 || byte == '\t');
    require(byte != 0x7f);
  }
  // Each cookie at most name=value of max_cookie_bytes, and "; " between them.
  require(pairs.size() <= CookieJar::max_cookies * (CookieJar::max_cookie_bytes + 3));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const bool secure = (data[0] & 1) != 0;
  const std::int64_t later = now + static_cast<std::int64_t>(data[0] >> 1) * 1000;
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::string_view response_path = next_line(input);
  const std::string_view request_path = next_line(input);
  std::vector<Header> headers;
  while (!input.empty()) {
    const std::string_view value = next_line(input);
    headers.push_back(Header{"Set-Cookie", value});
    // Every date the jar may read is a real one, from 1601 to 9999.
    if (const auto date = parse_cookie_date(value)) {
      require(*date >= -11644473600000 && *date < 253402300800000);
    }
  }

  static CookieJar jar;  // reused, as a virtual user's is
  jar.clear();
  jar.update(headers, response_path, now);
  require(jar.size() <= CookieJar::max_cookies);
  std::string field;
  jar.append_cookie_header(request_path, secure, later, field);
  require_well_formed(field);
  field.clear();
  jar.append_cookie_header(response_path, secure, now, field);
  require_well_formed(field);

  // A cookie without a Path goes back to the path that set it, even into a full jar.
  const std::string_view default_path = default_cookie_path(response_path);
  require(default_path.starts_with('/'));
  if (default_path.size() > CookieJar::max_cookie_bytes) return 0;  // too long a path to keep
  const std::size_t before = jar.size();
  const std::vector<Header> plain{{"Set-Cookie", "fuzz-probe=1"}};
  jar.update(plain, response_path, now);
  if (response_path.starts_with('/')) {
    require(cookie_path_matches(response_path, default_path));
    field.clear();
    jar.append_cookie_header(response_path, false, now, field);
    require(field.find("fuzz-probe=1") != std::string::npos);
  }
  const std::size_t with_probe = jar.size();
  require(with_probe >= before && with_probe <= CookieJar::max_cookies);
  const std::vector<Header> deletion{{"Set-Cookie", "fuzz-probe=; Max-Age=0"}};
  jar.update(deletion, response_path, now);
  require(jar.size() == with_probe - 1);
  return 0;
}
