#!/usr/bin/env bash
# scripts/test's arguments without a build: --list, an unknown tier or option
# (exit 2 before scripts/setup or any build), and which builds a selection
# starts. scripts/test runs from a copy in a temporary folder whose
# scripts/setup, cmake, scripts/format and tier programs are stand-ins that
# log their calls, so nothing here builds or installs anything.
# Last line: "test-args: N passed, M failed".
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
E2E_NAME=test-args
. "$root/tests/e2e/lib.sh"

copy="$(mktemp -d)"
trap 'rm -rf "$copy"' EXIT
mkdir -p "$copy/scripts" "$copy/bin" "$copy/tests/docs" "$copy/build-asan/bin"
cp "$root/scripts/test" "$copy/scripts/test"
stand_in() { # path body: an executable script
  printf '#!/usr/bin/env bash\n%s\n' "$2" >"$1"
  chmod +x "$1"
}
stand_in "$copy/scripts/setup" "echo setup >>'$copy/calls'; exit \${FAKE_SETUP_RC:-0}"
stand_in "$copy/bin/cmake" "echo \"cmake \$*\" >>'$copy/calls'"
stand_in "$copy/scripts/format" "echo \"format \$*\" >>'$copy/calls'; exit \${FAKE_FORMAT_RC:-0}"
echo "open('$copy/calls', 'a').write('check_reference\n')" >"$copy/tests/docs/check_reference.py"
stand_in "$copy/build-asan/bin/unit_tests" "echo \"unit_tests-asan \$*\" >>'$copy/calls'"

# run ARGS...: scripts/test from the copy; sets out, err, rc and calls
run() {
  rm -f "$copy/calls"
  out="$(PATH="$copy/bin:$PATH" "$copy/scripts/test" "$@" 2>"$copy/err")"
  rc=$?
  err="$(cat "$copy/err")"
  calls="$(cat "$copy/calls" 2>/dev/null)"
}
nothing_ran() { [ -z "$calls" ]; }

run --list
check "--list exits 0 (status $rc)" test "$rc" -eq 0
check "--list runs neither scripts/setup nor cmake" nothing_ran
mapfile -t listed < <(awk '{print $1}' <<<"$out")
check "--list prints one tier a line, each with a description" \
  bash -c '! grep -qvE "^[a-z0-9-]+ +[^ ].*$" <<<"$0"' "$out"
check "--list names each tier once" \
  bash -c '[ -z "$(printf "%s\n" "$@" | sort | uniq -d)" ]' "${listed[@]}"
for name in format unit unit-asan unit-tsan integration integration-asan integration-tsan \
  reports gitops layering docs-reference hdr-interop cluster-processes test-args setup-kernel \
  plugin-completion chart fuzz packaging cluster-e2e kube-client-e2e operator-e2e \
  lifecycle-e2e scenario-e2e plugin-e2e chart-e2e security-e2e target-usage-e2e dashboards demo; do
  check "--list has $name" contains "$(printf ' %s ' "${listed[@]}")" " $name "
done
# The registry's order is the order the script runs its tiers in.
mapfile -t called < <(grep -oE '^ *tier [a-z0-9-]+' "$root/scripts/test" | awk '{print $2}')
check "each listed tier has one \`tier NAME\` call in scripts/test, in --list's order" \
  test "${listed[*]}" = "${called[*]}"
run --help
check "--help exits 0 without scripts/setup (status $rc)" bash -c '[ "$0" -eq 0 ] && [ -z "$1" ]' "$rc" "$calls"

run no-such-tier
check "an unknown tier exits 2 (status $rc)" test "$rc" -eq 2
check "the error names the unknown tier" contains "$err" "unknown tier no-such-tier"
check "the error lists the valid tiers" contains "$err" "valid tiers: format unit "
check "an unknown tier runs neither scripts/setup nor cmake" nothing_ran
run unit no-such-tier format
check "an unknown tier among known ones exits 2 before anything runs (status $rc)" \
  bash -c '[ "$0" -eq 2 ] && [ -z "$1" ]' "$rc" "$calls"
run --no-such-option
check "an unknown option exits 2 before anything runs (status $rc)" \
  bash -c '[ "$0" -eq 2 ] && [ -z "$1" ]' "$rc" "$calls"

# The stand-ins see what a selection runs. scripts/setup always runs first.
FAKE_SETUP_RC=1 run format
check "a failing scripts/setup fails the run (status $rc)" test "$rc" -eq 1
check "scripts/setup runs for a tier" test "$calls" = setup
run docs-reference format
check "two cheap tiers: setup, then the tiers in the registry's order, no build" \
  test "$(tr '\n' ' ' <<<"$calls")" = "setup format --check check_reference "
check "their titles as the run prints them" \
  bash -c 'grep -q "^=== format: scripts/format --check$" <<<"$0" &&
    grep -q "^=== docs reference: python3 tests/docs/check_reference.py$" <<<"$0"' "$out"
check "the summary line counts them (status $rc)" \
  bash -c '[ "$0" -eq 0 ] && [ "$(tail -1 <<<"$1")" = "tiers: 2 passed, 0 failed" ]' "$rc" "$out"
FAKE_FORMAT_RC=1 run format
check "a failed tier: exit 1, named in the summary" \
  bash -c '[ "$0" -eq 1 ] && grep -q "^failed tiers: format$" <<<"$1" &&
    [ "$(tail -1 <<<"$1")" = "tiers: 0 passed, 1 failed" ]' "$rc" "$out"
run unit-asan
check "unit-asan configures and builds build-asan only" \
  bash -c 'grep -q -- "-S $1 -B build-asan " <<<"$0" && ! grep -q -- "-B build " <<<"$0" &&
    grep -q "^cmake --build build-asan .*--target unit_tests" <<<"$0"' "$calls" "$copy"
check "unit-asan runs build-asan/bin/unit_tests (status $rc)" \
  bash -c '[ "$0" -eq 0 ] && grep -q "^unit_tests-asan --gtest_brief=1$" <<<"$1"' "$rc" "$calls"
run unit
check "unit configures and builds build/" \
  bash -c 'grep -q -- "-S $1 -B build .*RelWithDebInfo" <<<"$0" && grep -q "^cmake --build build " <<<"$0" &&
    ! grep -q "build-asan\|build-tsan" <<<"$0"' "$calls" "$copy"
report
