#!/usr/bin/env bash
# Runs every libFuzzer target of tests/fuzz for a bounded time under ASan+UBSan,
# starting from its committed seed corpus. New inputs go to a scratch copy, so
# the committed corpus only changes by hand. A crash, leak, UB report or timeout
# fails the run and leaves the reproducer under the scratch directory.
#
#   tests/fuzz/run.sh [--seconds N] [--runs N] [--build-dir DIR] [TARGET...]
#
# --seconds: per target (default 45); --runs: stop each target after N inputs
# instead (for the long recorded run). Targets default to all of them, run
# KUBELOAD_JOBS at a time (default: the cores). Last line: "fuzz: N passed, M
# failed".
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds=45
runs=""
build_dir="$root/build-fuzz"
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ "${#targets[@]}" -eq 0 ]; then
  mapfile -t targets < <(find "$root/tests/fuzz" -mindepth 2 -maxdepth 2 -name fuzz.cpp -printf '%h\n' | xargs -n1 basename | sort)
fi

command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (scripts/setup installs it)"; echo "fuzz: 0 passed, 1 failed"; exit 1; }
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DKUBELOAD_FUZZ=ON >/dev/null || exit 1
cmake --build "$build_dir" -j "${KUBELOAD_JOBS:-$(nproc)}" --target "${targets[@]/#/fuzz_}" || {
  echo "fuzz: 0 passed, 1 failed"; exit 1; }

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
scratch="$build_dir/fuzz-work"

# fuzz_one TARGET: fuzzes one target from a scratch copy of its corpus; its
# PASS or FAIL lines go to $scratch/TARGET/verdict, printed in target order
# below.
fuzz_one() {
  local t=$1 work="$scratch/$1" limit stats
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  cp "$root/tests/fuzz/$t/corpus/"* "$work/corpus/"
  limit=(-max_total_time="$seconds")
  [ -n "$runs" ] && limit=(-runs="$runs")
  # -rss_limit_mb: an input that makes the code allocate without bound is a finding.
  if "$build_dir/bin/fuzz_$t" "${limit[@]}" -timeout=10 -rss_limit_mb=1024 -max_len=65536 \
      -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/corpus" >"$work/log" 2>&1; then
    stats="$(grep -E '^stat::number_of_executed_units' "$work/log" | awk '{print $2}')"
    echo "fuzz: PASS $t ($stats inputs, corpus $(ls "$work/corpus" | wc -l) files)" >"$work/verdict"
  else
    {
      echo "fuzz: FAIL $t (log $work/log; reproducer in $work/artifacts):"
      grep -E 'ERROR|SUMMARY|runtime error|==[0-9]+==|#[0-9]+ 0x' "$work/log" | head -30 | sed 's/^/  | /'
    } >"$work/verdict"
  fi
}

# A libFuzzer process uses one core: as many targets at a time as there are
# jobs (KUBELOAD_JOBS, else the cores), each still for its whole --seconds or
# --runs, so a 2-core machine fuzzes every target as long in half the time.
jobs_max="${KUBELOAD_JOBS:-$(nproc)}"
running=0
for t in "${targets[@]}"; do
  if [ "$running" -ge "$jobs_max" ]; then
    wait -n
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

passed=0
failed=0
for t in "${targets[@]}"; do
  verdict="$scratch/$t/verdict"
  if grep -qs '^fuzz: PASS ' "$verdict"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
  cat "$verdict" 2>/dev/null || echo "fuzz: FAIL $t (no verdict: its run ended without one)"
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
