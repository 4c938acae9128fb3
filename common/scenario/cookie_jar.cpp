#include "common/scenario/cookie_jar.hpp"

#include <algorithm>
#include <array>
#include <limits>

namespace kubeload::scenario {
namespace {

constexpr std::int64_t session_expiry = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t ms_per_second = 1000;

char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// RFC 6265 section 5.2 trims WSP: space and horizontal tab.
std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// RFC 6265bis (section 5.6, step 1): a Set-Cookie with a control character
// other than HTAB is ignored as a whole. RFC 6265 itself would keep it, but a
// CR or LF sent back in a Cookie field would end the request's header line.
bool has_control_character(std::string_view text) {
  return std::any_of(text.begin(), text.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && byte != '\t') || byte == 0x7f;
  });
}

std::string_view without_query(std::string_view request_path) {
  return request_path.substr(0, request_path.find_first_of("?#"));
}

// ---- Section 5.1.1, cookie-date ----

// delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E
bool is_date_delimiter(char c) {
  const auto b = static_cast<unsigned char>(c);
  return b == 0x09 || (b >= 0x20 && b <= 0x2f) || (b >= 0x3b && b <= 0x40) ||
         (b >= 0x5b && b <= 0x60) || (b >= 0x7b && b <= 0x7e);
}

// 1*`max` digits at the start of `text`, followed by its end or a non-digit
// (the productions end in "( non-digit *OCTET )"); advances past them.
std::optional<int> leading_number(std::string_view& text, std::size_t min_digits,
                                  std::size_t max_digits) {
  std::size_t n = 0;
  int value = 0;
  while (n < text.size() && is_digit(text[n])) {
    if (n == max_digits) return std::nullopt;  // one digit too many
    value = value * 10 + (text[n] - '0');
    ++n;
  }
  if (n < min_digits) return std::nullopt;
  text.remove_prefix(n);
  return value;
}

struct TimeOfDay {
  int hour = 0;
  int minute = 0;
  int second = 0;
};

// hms-time = time-field ":" time-field ":" time-field, time-field = 1*2DIGIT
std::optional<TimeOfDay> parse_time(std::string_view token) {
  std::array<int, 3> fields{};
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto field = leading_number(token, 1, 2);
    if (!field) return std::nullopt;
    fields[i] = *field;
    if (i + 1 < fields.size()) {
      if (token.empty() || token.front() != ':') return std::nullopt;
      token.remove_prefix(1);
    }
  }
  return TimeOfDay{fields[0], fields[1], fields[2]};
}

std::optional<int> parse_month(std::string_view token) {
  constexpr std::array<std::string_view, 12> months = {"jan", "feb", "mar", "apr", "may", "jun",
                                                       "jul", "aug", "sep", "oct", "nov", "dec"};
  if (token.size() < 3) return std::nullopt;
  for (std::size_t i = 0; i < months.size(); ++i) {
    if (equals_ignoring_case(token.substr(0, 3), months[i])) return static_cast<int>(i) + 1;
  }
  return std::nullopt;
}

bool is_leap_year(int year) {
  return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
}

int days_in_month(int year, int month) {
  constexpr std::array<int, 12> days = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && is_leap_year(year) ? 29 : days[static_cast<std::size_t>(month - 1)];
}

// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's
// days_from_civil), valid for every year a cookie-date can name.
std::int64_t days_from_civil(int year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  const int era = (year >= 0 ? year : year - 399) / 400;
  const int year_of_era = year - era * 400;
  const int day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const int day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return static_cast<std::int64_t>(era) * 146097 + day_of_era - 719468;
}

// ---- Section 5.2, the attributes we keep ----

struct Attributes {
  std::optional<std::int64_t> max_age_expiry;  // Max-Age wins over Expires (5.3 step 3)
  std::optional<std::int64_t> expires;
  std::optional<std::string_view> path;
  bool secure = false;
};

// Max-Age: an optional '-' and digits only; <= 0 is the earliest time.
std::optional<std::int64_t> max_age_expiry(std::string_view value, std::int64_t now_unix_ms) {
  const bool negative = !value.empty() && value.front() == '-';
  const std::string_view digits = negative ? value.substr(1) : value;
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), is_digit)) return std::nullopt;
  std::int64_t seconds = 0;
  constexpr std::int64_t max_seconds = session_expiry / ms_per_second;
  for (char c : digits) {
    seconds = std::min(max_seconds, seconds * 10 + (c - '0'));  // saturates: "forever"
  }
  if (negative || seconds == 0) return std::numeric_limits<std::int64_t>::min();
  const std::int64_t delta = seconds * ms_per_second;
  return now_unix_ms > session_expiry - delta ? session_expiry : now_unix_ms + delta;
}

Attributes parse_attributes(std::string_view unparsed, std::int64_t now_unix_ms) {
  Attributes attributes;
  while (!unparsed.empty()) {
    unparsed.remove_prefix(1);  // the ';'
    const std::size_t end = unparsed.find(';');
    const std::string_view av = unparsed.substr(0, end);
    unparsed.remove_prefix(end == std::string_view::npos ? unparsed.size() : end);
    const std::size_t equals = av.find('=');
    const std::string_view name = trim(av.substr(0, equals));
    const std::string_view value =
        equals == std::string_view::npos ? std::string_view() : trim(av.substr(equals + 1));
    if (equals_ignoring_case(name, "max-age")) {
      if (auto expiry = max_age_expiry(value, now_unix_ms)) attributes.max_age_expiry = expiry;
    } else if (equals_ignoring_case(name, "expires")) {
      if (auto expiry = parse_cookie_date(value)) attributes.expires = expiry;
    } else if (equals_ignoring_case(name, "path")) {
      // Not starting with '/' (empty included): the default path (5.2.4).
      attributes.path = !value.empty() && value.front() == '/'
                            ? std::optional<std::string_view>(value)
                            : std::nullopt;
    } else if (equals_ignoring_case(name, "secure")) {
      attributes.secure = true;
    }
    // Domain: one origin (docs/scenarios.md says why); HttpOnly: we are
    // HTTP; SameSite: no request of ours is cross-site. Others: unknown.
  }
  return attributes;
}

}  // namespace

std::optional<std::int64_t> parse_cookie_date(std::string_view text) {
  std::optional<TimeOfDay> time;
  std::optional<int> day_of_month;
  std::optional<int> month;
  std::optional<int> year;
  while (!text.empty()) {
    while (!text.empty() && is_date_delimiter(text.front())) text.remove_prefix(1);
    std::size_t size = 0;
    while (size < text.size() && !is_date_delimiter(text[size])) ++size;
    const std::string_view token = text.substr(0, size);
    text.remove_prefix(size);
    if (token.empty()) break;
    // A token is the first of these, in this order, not yet found that it matches.
    std::string_view digits = token;
    if (!time && (time = parse_time(token))) continue;
    if (!day_of_month && (day_of_month = leading_number(digits, 1, 2))) continue;
    digits = token;
    if (!month && (month = parse_month(token))) continue;
    if (!year) year = leading_number(digits, 2, 4);
  }
  if (!time || !day_of_month || !month || !year) return std::nullopt;
  int full_year = *year;
  if (full_year >= 70 && full_year <= 99) full_year += 1900;
  if (full_year >= 0 && full_year <= 69) full_year += 2000;
  if (*day_of_month < 1 || *day_of_month > 31 || full_year < 1601 || time->hour > 23 ||
      time->minute > 59 || time->second > 59) {
    return std::nullopt;
  }
  if (*day_of_month > days_in_month(full_year, *month)) return std::nullopt;  // "Feb 30"
  const std::int64_t days = days_from_civil(full_year, *month, *day_of_month);
  const std::int64_t seconds = days * 86400 + time->hour * 3600 + time->minute * 60 + time->second;
  return seconds * ms_per_second;
}

std::string_view default_cookie_path(std::string_view request_path) {
  const std::string_view path = without_query(request_path);
  if (path.empty() || path.front() != '/') return "/";
  const std::size_t last_slash = path.rfind('/');
  if (last_slash == 0) return "/";
  return path.substr(0, last_slash);
}

bool cookie_path_matches(std::string_view request_path, std::string_view cookie_path) {
  std::string_view path = without_query(request_path);
  if (path.empty()) path = "/";
  if (!path.starts_with(cookie_path)) return false;
  return path.size() == cookie_path.size() || cookie_path.ends_with('/') ||
         path[cookie_path.size()] == '/';
}

CookieJar::CookieJar() {
  cookies_.resize(max_cookies);
}

void CookieJar::clear() noexcept {
  for (Cookie& cookie : cookies_) cookie.live = false;
  next_creation_ = 0;
}

std::size_t CookieJar::size() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(cookies_.begin(), cookies_.end(), [](const Cookie& c) { return c.live; }));
}

void CookieJar::update(std::span<const Header> response_headers, std::string_view request_path,
                       std::int64_t now_unix_ms) {
  for (const Header& header : response_headers) {
    if (!equals_ignoring_case(header.name, "set-cookie")) continue;
    const std::string_view line = header.value;
    if (has_control_character(line)) continue;
    // Section 5.2: the pair is what precedes the first ';', split at its first '='.
    const std::size_t semicolon = line.find(';');
    const std::string_view pair = line.substr(0, semicolon);
    const std::size_t equals = pair.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string_view name = trim(pair.substr(0, equals));
    const std::string_view value = trim(pair.substr(equals + 1));
    if (name.empty() || name.size() + value.size() > max_cookie_bytes) continue;
    const Attributes attributes = parse_attributes(
        semicolon == std::string_view::npos ? std::string_view() : line.substr(semicolon),
        now_unix_ms);
    const std::string_view path = attributes.path.value_or(default_cookie_path(request_path));
    if (path.size() > max_cookie_bytes) continue;
    store(name, value, path,
          attributes.max_age_expiry ? attributes.max_age_expiry : attributes.expires,
          attributes.secure, now_unix_ms);
  }
}

void CookieJar::store(std::string_view name, std::string_view value, std::string_view path,
                      std::optional<std::int64_t> expiry_unix_ms, bool secure,
                      std::int64_t now_unix_ms) {
  // Section 5.3 steps 11 and 12: a cookie replaces the old one of the same
  // name and path, keeping its creation time; an expired one only deletes.
  const auto same = std::find_if(cookies_.begin(), cookies_.end(), [&](const Cookie& c) {
    return c.live && c.name() == name && c.path == path;
  });
  const std::int64_t expiry = expiry_unix_ms.value_or(session_expiry);
  const bool expired = expiry <= now_unix_ms;
  Cookie* slot = nullptr;
  std::uint64_t creation = 0;
  if (same != cookies_.end()) {
    slot = &*same;
    creation = same->creation;
    if (expired) {
      same->live = false;
      return;
    }
  } else {
    if (expired) return;
    slot = slot_for_new_cookie(now_unix_ms);
    creation = next_creation_++;
  }
  slot->live = true;
  slot->secure = secure;
  slot->name_value.assign(name);
  slot->name_value += '=';
  slot->name_value.append(value);
  slot->name_size = name.size();
  slot->path.assign(path);
  slot->expiry_unix_ms = expiry;
  slot->creation = creation;
}

// A free slot; else one freed by dropping the expired cookies; else the
// oldest cookie's (RFC 6265 evicts by last access; creation is what we keep,
// and for a journey that sets its cookies in order the two agree).
CookieJar::Cookie* CookieJar::slot_for_new_cookie(std::int64_t now_unix_ms) {
  for (Cookie& cookie : cookies_) {
    if (!cookie.live) return &cookie;
  }
  Cookie* free = nullptr;
  for (Cookie& cookie : cookies_) {
    if (cookie.expiry_unix_ms <= now_unix_ms) {
      cookie.live = false;
      free = &cookie;
    }
  }
  if (free != nullptr) return free;
  return &*std::min_element(cookies_.begin(), cookies_.end(), [](const Cookie& a, const Cookie& b) {
    return a.creation < b.creation;
  });
}

void CookieJar::append_cookie_header(std::string_view request_path, bool secure_channel,
                                     std::int64_t now_unix_ms, std::string& out) const {
  // Indexes of the cookies to send, sorted in place: no allocation.
  std::array<const Cookie*, max_cookies> sending{};
  std::size_t count = 0;
  for (const Cookie& cookie : cookies_) {
    if (!cookie.live || cookie.expiry_unix_ms <= now_unix_ms) continue;
    if (cookie.secure && !secure_channel) continue;
    if (!cookie_path_matches(request_path, cookie.path)) continue;
    sending[count++] = &cookie;
  }
  if (count == 0) return;
  std::sort(sending.begin(), sending.begin() + static_cast<std::ptrdiff_t>(count),
            [](const Cookie* a, const Cookie* b) {
              if (a->path.size() != b->path.size()) return a->path.size() > b->path.size();
              return a->creation < b->creation;
            });
  out += "Cookie: ";
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) out += "; ";
    out += sending[i]->name_value;
  }
  out += "\r\n";
}

}  // namespace kubeload::scenario
