#!/usr/bin/env bash
# Shell completion of kubectl-kubeload without a cluster: bash with the script
# of `kubectl-kubeload completion bash` sourced, COMP_WORDS/COMP_CWORD set as
# bash sets them on <TAB>, and the candidates in COMPREPLY checked; the
# kubectl_complete-kubeload script kubectl (1.26+) runs for `kubectl kubeload
# <TAB>`; zsh's script parsed when zsh is installed. With no kubeconfig the
# LoadTest names are simply not offered (no error, no file names).
#   tests/scripts/plugin_completion_test.sh [build/bin/kubectl-kubeload]
# Last line: "plugin-completion: N passed, M failed".
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
E2E_NAME=plugin-completion
. "$root/tests/e2e/lib.sh"

binary="$(cd "$(dirname "${1:-$root/build/bin/kubectl-kubeload}")" && pwd)/$(basename "${1:-kubectl-kubeload}")"
[ -x "$binary" ] || { say "FAIL $binary is not built"; exit 1; }
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
# No kubeconfig anywhere, no in-cluster configuration: nothing is contacted.
export HOME="$home" KUBECONFIG="$home/none"
unset KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT
export PATH="$(dirname "$binary"):$root/plugin/krew:$PATH"

# The candidates bash offers for a command line whose last word is being completed.
offered() { # words...
  bash --norc --noprofile -c '
    source <("$1" completion bash) || exit 3
    shift
    COMP_WORDS=(kubectl-kubeload "$@")
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMP_LINE="${COMP_WORDS[*]}"
    COMP_POINT=${#COMP_LINE}
    _kubectl_kubeload
    echo "${COMPREPLY[*]}"' _ "$binary" "$@"
}
same() { # description expected actual
  if [ "$2" = "$3" ]; then ok "$1: $3"; else bad "$1: expected \"$2\", got \"$3\""; fi
}

same "commands" "run report compare history completion help" "$(offered "")"
same "a command by its prefix" "report" "$(offered re)"
same "history's flags (--al)" "--all-namespaces" "$(offered history web --al)"
same "run's flags (--w)" "--wait" "$(offered run --w)"
same "report -o: kubectl's formats, then the reports" \
  "json yaml name jsonpath= text ab jmeter junit markdown html" "$(offered report x -o "")"
same "history -o j" "json jsonpath=" "$(offered history web -o j)"
same "compare -o: the comparison's formats only" "text markdown json" "$(offered compare a b -o "")"
same "history --format" "text markdown json" "$(offered history web --format "")"
same "completion's shells" "bash zsh" "$(offered completion "")"
same "report NAME without a cluster: nothing, and no file names" "" "$(offered report "")"
same "report ltr/NAME without a cluster: nothing, and no file names" "" "$(offered report ltr/)"
same "compare lt/NAME without a cluster: nothing, and no file names" "" "$(offered compare a lt/we)"
same "report's flags (--tr): --trend" "--trend" "$(offered report x --tr)"
same "run's flags (--tr): --trend" "--trend" "$(offered run -f x.yaml --tr)"
out=$(kubectl_complete-kubeload compare a ltr/)
same "kubectl_complete-kubeload compare a ltr/: no candidates without a cluster, no files (:4)" ":4" "$out"
same "run -f: file names" "$(cd "$root/examples/ci" && compgen -f -- load)" \
  "$(cd "$root/examples/ci" && offered run -f load)"

out=$(kubectl_complete-kubeload report x -o "")
same "kubectl_complete-kubeload speaks Cobra's protocol (last line :4)" ":4" "$(tail -1 <<<"$out")"
same "kubectl_complete-kubeload: the same candidates" \
  "json yaml name jsonpath= text ab jmeter junit markdown html" "$(head -n -1 <<<"$out" | tr '\n' ' ' | sed 's/ $//')"
same "kubectl_complete-kubeload report x -o jsonp: no space after jsonpath=" ":6" \
  "$(kubectl_complete-kubeload report x -o jsonp | tail -1)"

# zsh: the script loaded after compinit registers itself for kubectl-kubeload,
# and its function, called as zsh calls it on <TAB> (words, CURRENT), hands
# compadd the candidates (compadd and _files stand in for zsh's own, which
# need a live line editor).
zsh_offered() { # words...
  zsh -f -c '
    autoload -U compinit && compinit -u -D || exit 3
    source <("$1" completion zsh) || exit 3
    [[ $_comps[kubectl-kubeload] == _kubectl_kubeload ]] || { print "not registered"; exit 0; }
    compadd() { local name=${@[-1]}; print -r -- ${(P)name}; }
    _files() { print -r -- FILES; }
    shift
    words=(kubectl-kubeload "$@")
    CURRENT=${#words}
    _kubectl_kubeload' _ "$binary" "$@"
}
if command -v zsh >/dev/null; then
  check "zsh: the script of completion zsh parses (zsh -n)" \
    zsh -n <("$binary" completion zsh)
  same "zsh: commands" "run report compare history completion help" "$(zsh_offered "")"
  same "zsh: history's flags (--al)" "--all-namespaces" "$(zsh_offered history --al)"
  same "zsh: -o formats of report" "json yaml name jsonpath= text ab jmeter junit markdown html" \
    "$(zsh_offered report x -o "")"
else
  bad "zsh is not installed (scripts/setup installs it): its script is not checked"
fi
report
