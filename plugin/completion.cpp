// The completion candidates of a partial command line and the shell scripts
// that ask for them.

#include "plugin/completion.hpp"

#include <algorithm>
#include <map>

#include "plugin/cli.hpp"

namespace kubeload::plugin {
namespace {

struct Flag {
  const char* name;
  bool takes_value;
};

// The flags every command takes, then each command's own (cli.cpp's parser).
const std::vector<Flag> kGlobalFlags = {
    {"-n", true},     {"--namespace", true}, {"--kubeconfig", true},      {"--context", true},
    {"--as", true},   {"--as-group", true},  {"--request-timeout", true}, {"-h", false},
    {"--help", false}};
const std::map<std::string, std::vector<Flag>> kCommandFlags = {
    {"run",
     {{"-f", true},
      {"--filename", true},
      {"--wait", false},
      {"--timeout", true},
      {"-o", true},
      {"--output", true},
      {"--format", true},
      {"--report", true},
      {"--trend", true}}},
    {"report", {{"-o", true}, {"--output", true}, {"--format", true}, {"--trend", true}}},
    {"compare", {{"-o", true}, {"--output", true}, {"--format", true}}},
    {"history",
     {{"-A", false},
      {"--all-namespaces", false},
      {"-l", true},
      {"--selector", true},
      {"--limit", true},
      {"-o", true},
      {"--output", true},
      {"--format", true}}},
    {"completion", {}},
};
const std::vector<std::string> kCommands = {"run",     "report",     "compare",
                                            "history", "completion", "help"};
const std::vector<std::string> kReportFormats = {"text",  "ab",       "jmeter", "json",
                                                 "junit", "markdown", "html"};
const std::vector<std::string> kTableFormats = {"text", "markdown", "json"};
const std::vector<std::string> kObjectFormats = {"json", "yaml", "name", "jsonpath="};

const Flag* find_flag(const std::string& command, const std::string& name) {
  for (const Flag& flag : kGlobalFlags) {
    if (name == flag.name) return &flag;
  }
  if (const auto own = kCommandFlags.find(command); own != kCommandFlags.end()) {
    for (const Flag& flag : own->second) {
      if (name == flag.name) return &flag;
    }
  }
  return nullptr;
}

// What -o (output) or --format offers for `command` (cli.cpp decides the same).
std::vector<std::string> formats(const std::string& command, bool output) {
  const bool tables = command == "compare" || command == "history";
  std::vector<std::string> out;
  if (output && (command == "run" || command == "report" || command == "history")) {
    out = kObjectFormats;
  }
  for (const std::string& format : tables ? kTableFormats : kReportFormats) {
    if (std::find(out.begin(), out.end(), format) == out.end()) out.push_back(format);
  }
  return out;
}

std::vector<std::string> starting_with(const std::vector<std::string>& all,
                                       const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& candidate : all) {
    if (candidate.rfind(prefix, 0) == 0) out.push_back(candidate);
  }
  return out;
}

// Candidates for the value of `flag`; the directive in `completion`.
void complete_value(Completion& completion, const std::string& command, const std::string& flag,
                    const std::string& prefix) {
  std::vector<std::string> all;
  if (flag == "-o" || flag == "--output") {
    all = formats(command, true);
  } else if (flag == "--format") {
    all = formats(command, false);
  } else if (flag == "--report") {
    for (const std::string& format : kReportFormats) all.push_back(format + "=");
  } else if (flag == "-f" || flag == "--filename" || flag == "--kubeconfig") {
    completion.directive = kCompleteFiles;
    return;
  }
  completion.candidates = starting_with(all, prefix);
  const bool all_open = !completion.candidates.empty() &&
                        std::all_of(completion.candidates.begin(), completion.candidates.end(),
                                    [](const std::string& c) { return c.back() == '='; });
  if (all_open) completion.directive |= kCompleteNoSpace;
}

// A run of report or compare: NAME (a LoadTest's or a record's), or
// TYPE/NAME of one kind, the TYPE as typed.
void complete_run(Completion& completion) {
  const std::string& current = completion.current;
  const size_t slash = current.find('/');
  if (slash == std::string::npos) {
    completion.from_cluster = Completion::FromCluster::run_names;
    return;
  }
  const auto kind = run_reference_kind(current.substr(0, slash));
  if (!kind) return;
  completion.cluster_prefix = current.substr(0, slash + 1);
  completion.from_cluster = *kind == RunReference::Kind::loadtest
                                ? Completion::FromCluster::loadtest_names
                                : Completion::FromCluster::record_names;
}

}  // namespace

std::vector<std::string> completion_flags(const std::string& command) {
  std::vector<std::string> out;
  for (const Flag& flag : kGlobalFlags) out.push_back(flag.name);
  if (const auto own = kCommandFlags.find(command); own != kCommandFlags.end()) {
    for (const Flag& flag : own->second) out.push_back(flag.name);
  }
  return out;
}

Completion complete(const std::vector<std::string>& words) {
  Completion completion;
  completion.current = words.empty() ? "" : words.back();
  const std::string& current = completion.current;
  std::string command;
  std::vector<std::string> positional;
  std::string pending_flag;  // the flag whose value the next word is
  const auto remember = [&](const std::string& flag, const std::string& value) {
    if (flag == "-n" || flag == "--namespace") completion.namespace_ = value;
    if (flag == "--context") completion.context = value;
    if (flag == "--kubeconfig") completion.kubeconfig = value;
  };
  for (size_t i = 0; i + 1 < words.size(); ++i) {
    const std::string& word = words[i];
    if (!pending_flag.empty()) {
      remember(pending_flag, word);
      pending_flag.clear();
      continue;
    }
    if (word.size() > 1 && word[0] == '-') {
      const size_t eq = word.find('=');
      const std::string name = word.substr(0, eq);
      const Flag* flag = find_flag(command, name);
      if (flag && flag->takes_value) {
        if (eq == std::string::npos) {
          pending_flag = name;
        } else {
          remember(name, word.substr(eq + 1));
        }
      }
      continue;
    }
    if (command.empty() && kCommandFlags.count(word) > 0) {
      command = word;
    } else if (command.empty() && word == "help") {
      command = word;
    } else {
      positional.push_back(word);
    }
  }
  if (!pending_flag.empty()) {
    complete_value(completion, command, pending_flag, current);
    return completion;
  }
  if (!current.empty() && current[0] == '-') {
    if (const size_t eq = current.find('='); eq != std::string::npos) {
      // --output=js: the values, written whole as the shell will put them.
      const std::string flag = current.substr(0, eq);
      complete_value(completion, command, flag, current.substr(eq + 1));
      for (std::string& candidate : completion.candidates) candidate = flag + "=" + candidate;
      return completion;
    }
    completion.candidates = starting_with(completion_flags(command), current);
    return completion;
  }
  if (command.empty()) {
    completion.candidates = starting_with(kCommands, current);
  } else if (command == "help") {
    if (positional.empty()) completion.candidates = starting_with(kCommands, current);
  } else if (command == "completion") {
    if (positional.empty()) completion.candidates = starting_with({"bash", "zsh"}, current);
  } else if (command == "report" || command == "compare") {
    if (command == "compare" || positional.empty()) complete_run(completion);
  } else if (command == "history") {
    if (positional.empty()) completion.from_cluster = Completion::FromCluster::tests;
  }
  return completion;
}

void write_completion(std::ostream& out, const Completion& completion,
                      const std::vector<std::string>& from_cluster) {
  for (const std::string& candidate : completion.candidates) out << candidate << "\n";
  std::vector<std::string> prefixed;
  for (const std::string& name : from_cluster) prefixed.push_back(completion.cluster_prefix + name);
  for (const std::string& candidate : starting_with(prefixed, completion.current)) {
    out << candidate << "\n";
  }
  out << ":" << completion.directive << "\n";
}

std::string completion_script(const std::string& shell) {
  if (shell == "zsh") {
    return R"(#compdef kubectl-kubeload
# zsh completion for kubectl-kubeload: `source <(kubectl kubeload completion zsh)`
# after compinit. The candidates come from `kubectl-kubeload __complete`.
_kubectl_kubeload() {
  local out directive
  local -a lines candidates
  out=$("${words[1]}" __complete "${(@)words[2,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null) || return 1
  lines=("${(@f)out}")
  directive=${lines[-1]#:}
  candidates=("${(@)lines[1,-2]}")
  if (( ${#candidates} )); then
    if (( directive & 2 )); then
      compadd -S '' -a candidates
    else
      compadd -a candidates
    fi
  elif ! (( directive & 4 )); then
    _files
  fi
}
compdef _kubectl_kubeload kubectl-kubeload
)";
  }
  return R"(# bash completion for kubectl-kubeload: `source <(kubectl kubeload completion bash)`.
# The candidates come from `kubectl-kubeload __complete WORDS... CURRENT`.
# Flag values go after a space (-o json): bash splits words at '='.
_kubectl_kubeload() {
  local cur="${COMP_WORDS[COMP_CWORD]}" out directive
  out=$("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null) || return 0
  directive=${out##*:}
  out=${out%:*}
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "$out" -- "$cur"))
  if (( directive & 2 )); then
    compopt -o nospace 2>/dev/null
  fi
  if (( ${#COMPREPLY[@]} == 0 )) && ! (( directive & 4 )); then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
  return 0
}
complete -F _kubectl_kubeload kubectl-kubeload
)";
}

}  // namespace kubeload::plugin
