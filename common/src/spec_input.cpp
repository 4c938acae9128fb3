// The defences of the spec parser, in the order a manifest meets them: its
// size, UTF-8, the number of nodes before yaml-cpp builds any (a few megabytes
// of "[1,1,1,..." would cost gigabytes), one document, the number of nodes
// with aliases expanded (a "YAML bomb"), and yaml-cpp's exceptions turned
// into errors. Only then does the decoder (spec_decoder.cpp) read the fields.
#include "kubeload/spec.hpp"
#include "kubeload/spec_yaml.hpp"

#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>

#include "kubeload/text.hpp"
#include "spec_decoder.hpp"

namespace kubeload {
namespace {

// Counts the nodes of the document as a tree, visiting aliased nodes once per
// reference, and stops as soon as `limit` is passed. Iterative, so deep
// nesting cannot overflow the stack.
bool tree_fits(const YAML::Node& root, size_t limit) {
  // push_back rather than an initializer list: GCC 12 at -O3 reports a false
  // -Wfree-nonheap-object on the latter.
  std::vector<YAML::Node> pending;
  pending.push_back(root);
  size_t counted = 1;  // counting on push keeps `pending` within the limit too
  const auto push = [&](const YAML::Node& node) {
    pending.push_back(node);
    return ++counted <= limit;
  };
  while (!pending.empty()) {
    const YAML::Node node = pending.back();
    pending.pop_back();
    if (node.IsSequence()) {
      for (const YAML::Node& child : node) {
        if (!push(child)) return false;
      }
    } else if (node.IsMap()) {
      for (const auto& entry : node) {
        if (!push(entry.first) || !push(entry.second)) return false;
      }
    }
  }
  return counted <= limit;
}

// yaml-cpp spends about half a kilobyte and several microseconds per node
// while building a document, so a few megabytes of "[1,1,1,..." would cost
// gigabytes. Counting the parser's events first, and stopping at the limit,
// bounds both before any node is built.
class NodeCounter final : public YAML::EventHandler {
 public:
  static bool fits(const std::string& text, size_t limit) {
    std::istringstream stream(text);
    YAML::Parser parser(stream);
    NodeCounter counter(limit);
    try {
      while (parser.HandleNextDocument(counter)) {
      }
    } catch (const LimitReached&) {
      return false;
    }
    return true;
  }

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { count(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { count(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    count();
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    count();
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    count();
  }
  void OnMapEnd() override {}

 private:
  struct LimitReached {};
  explicit NodeCounter(size_t limit) : limit_(limit) {}
  void count() {
    if (++nodes_ > limit_) throw LimitReached{};
  }

  size_t limit_;
  size_t nodes_ = 0;
};

}  // namespace

ParsedLoadTest parse_loadtest(const YAML::Node& manifest) {
  // yaml-cpp reports misuse by throwing; whatever slips past the checks above
  // must still come back as an error, never as an exception.
  try {
    if (manifest.IsDefined() && !manifest.IsNull() && !tree_fits(manifest, kMaxManifestNodes)) {
      ParsedLoadTest too_large;
      too_large.errors.push_back({"", "document too large: more than " +
                                          std::to_string(kMaxManifestNodes) +
                                          " nodes with aliases expanded"});
      return too_large;
    }
    return spec_parser::decode_manifest(manifest);
  } catch (const std::exception& e) {
    ParsedLoadTest failed;
    failed.errors.push_back({"", "cannot read the manifest: " + printable(e.what())});
    return failed;
  }
}

ParsedLoadTest parse_loadtest(std::string_view yaml_or_json) {
  ParsedLoadTest failed;
  if (yaml_or_json.size() > kMaxManifestBytes) {
    failed.errors.push_back({"", "manifest too large: " + std::to_string(yaml_or_json.size()) +
                                     " bytes, at most " + std::to_string(kMaxManifestBytes)});
    return failed;
  }
  // Kubernetes objects are UTF-8, and every string of a spec ends up in JSON
  // (reports, status) where anything else cannot be written.
  size_t line = 1, column = 1;
  for (size_t i = 0; i < yaml_or_json.size();) {
    const size_t length = utf8_sequence_length(yaml_or_json.substr(i));
    if (length == 0) {
      failed.errors.push_back({"", "line " + std::to_string(line) + ", column " +
                                       std::to_string(column) + ": not valid UTF-8 (byte " +
                                       printable(yaml_or_json.substr(i, 1)) + ")"});
      return failed;
    }
    if (yaml_or_json[i] == '\n') {
      ++line;
      column = 0;
    }
    ++column;
    i += length;
  }

  std::vector<YAML::Node> documents;
  try {
    const std::string text(yaml_or_json);
    if (!NodeCounter::fits(text, kMaxManifestNodes)) {
      failed.errors.push_back(
          {"", "document too large: more than " + std::to_string(kMaxManifestNodes) + " nodes"});
      return failed;
    }
    documents = YAML::LoadAll(text);
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own message for this is "bad file".
    failed.errors.push_back({"", "line " + std::to_string(e.mark.line + 1) + ", column " +
                                     std::to_string(e.mark.column + 1) + ": nested too deeply"});
    return failed;
  } catch (const YAML::ParserException& e) {
    failed.errors.push_back({"", "line " + std::to_string(e.mark.line + 1) + ", column " +
                                     std::to_string(e.mark.column + 1) + ": " + printable(e.msg)});
    return failed;
  } catch (const std::exception& e) {
    failed.errors.push_back({"", "cannot parse the manifest: " + printable(e.what())});
    return failed;
  }
  // "---" at the end of a file yields an empty document; only real ones count.
  std::erase_if(documents, [](const YAML::Node& document) { return document.IsNull(); });
  if (documents.size() > 1) {
    failed.errors.push_back(
        {"", "expected one LoadTest document, found " + std::to_string(documents.size())});
    return failed;
  }
  return parse_loadtest(documents.empty() ? YAML::Node() : documents.front());
}

}  // namespace kubeload
