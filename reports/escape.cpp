#include "reports/escape.hpp"

namespace kubeload::loadgen {

// XML 1.0 forbids most control characters even as references; they become
// U+FFFD so text from a status (names, messages) cannot break the document.
std::string xml_escape(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (const char c : in) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (byte < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += "\xEF\xBF\xBD";
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string html_escape(const std::string& in) {
  std::string out;
  out.reserve(in.size());
  for (const char c : in) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Text from the cluster goes into table cells and inline code: pipes,
// backticks and newlines would break the layout.
std::string markdown_cell(const std::string& in) {
  std::string out;
  for (const char c : in) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else if (c == '`') {
      out += '\'';
    } else if (c == '<') {
      out += "&lt;";
    } else {
      out += c;
    }
  }
  return out;
}

// Inside a code span nothing is decoded, so only what ends the span or the
// table cell is replaced.
std::string markdown_code(const std::string& in) {
  std::string out = "`";
  for (const char c : in) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '`') {
      out += '\'';
    } else if (c != '\n' && c != '\r') {
      out += c;
    }
  }
  return out + "`";
}

}  // namespace kubeload::loadgen
