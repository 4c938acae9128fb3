#pragma once
// Text from a run or the cluster (names, messages, expressions) put into a
// document: one escaping function per output format, for the reports and
// the plugin's tables.

#include <string>

namespace kubeload::loadgen {

// XML character data and attribute values (JUnit): & < > " ' as entities;
// control characters XML 1.0 forbids become U+FFFD.
std::string xml_escape(const std::string& in);
// HTML text and attribute values: & < > " ' as entities.
std::string html_escape(const std::string& in);
// A GitHub-flavoured Markdown table cell or paragraph: pipes escaped,
// newlines as spaces, backticks as quotes, < as &lt;.
std::string markdown_cell(const std::string& in);
// An inline code span, backticks included: only what would end the span or
// the table cell is replaced.
std::string markdown_code(const std::string& in);

}  // namespace kubeload::loadgen
