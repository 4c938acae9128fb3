#pragma once
// Shell completion of kubectl-kubeload. The plugin answers
// `kubectl-kubeload __complete WORD... CURRENT` in Cobra's protocol, the one
// kubectl (1.26+) speaks with a plugin's kubectl_complete-NAME: one candidate
// a line, then ":DIRECTIVE". The bash and zsh scripts of
// `kubectl kubeload completion bash|zsh` and plugin/krew/kubectl_complete-kubeload
// only relay it, so the commands, flags and formats are known in one place.

#include <ostream>
#include <string>
#include <vector>

namespace kubeload::plugin {

// Cobra's ShellCompDirective bits.
inline constexpr int kCompleteFiles = 0;    // nothing said: the shell may complete files
inline constexpr int kCompleteNoSpace = 2;  // no space after the candidate (jsonpath=)
inline constexpr int kCompleteNoFiles = 4;  // no file names when there is no candidate

struct Completion {
  std::vector<std::string> candidates;  // already filtered by the current word
  int directive = kCompleteNoFiles;
  // Candidates only the cluster knows: names of LoadTests and of
  // LoadTestResult records (report, compare: both for a bare NAME, one kind
  // after lt/ or ltr/) or the tests, their kubeload.dev/test labels (history).
  enum class FromCluster { nothing, loadtest_names, record_names, run_names, tests };
  FromCluster from_cluster = FromCluster::nothing;
  // Put before each of the cluster's candidates: the "ltr/" of "ltr/chec".
  std::string cluster_prefix;
  std::string current;  // the word being completed
  // The connection flags on the line, for the cluster's candidates.
  std::string namespace_, context, kubeconfig;
};

// `words`: the arguments after __complete, the last one being completed
// (empty right after a space).
Completion complete(const std::vector<std::string>& words);
// Writes the protocol: the candidates, then those of `from_cluster` (each
// after cluster_prefix) that start with the current word, then ":DIRECTIVE".
void write_completion(std::ostream& out, const Completion& completion,
                      const std::vector<std::string>& from_cluster);
// Every flag completion offers, for a test that parse_arguments knows each.
std::vector<std::string> completion_flags(const std::string& command);
// The script `kubectl kubeload completion bash|zsh` prints.
std::string completion_script(const std::string& shell);

}  // namespace kubeload::plugin
