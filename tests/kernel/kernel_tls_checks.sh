#!/usr/bin/env bash
# The kernel-tls tier, run by scripts/test inside tests/kernel/run_in_vm.py's
# VM (Debian's own kernel, whose tls module this machine's kernel may lack):
# loadgen's engines and every https check with the kernel able to carry TLS
# records (kTLS), from the repository root with the build of the host.
set -euo pipefail

# Not a tier that could pass without kTLS: this kernel must load the tls
# module when a socket asks for it (the integration checks' own probe).
python3 -c '
import sys
sys.path.insert(0, "tests/integration")
import run
if not run.kernel_takes_tls_sockets():
    sys.exit("kernel-tls: this kernel did not load the tls module: no kTLS to check")
print("kernel-tls: the kernel loaded its tls module")
'

# Both parts run, whatever the first one's outcome.
failed=0
# The engine's own tests (exact counts on both engines, https, key updates,
# session resumption, timeouts) under this kernel.
build/bin/unit_tests --gtest_brief=1 --gtest_filter='Engine.*:UringEngine.*:EngineChoice.*' ||
  failed=1
# Every HTTP/1.1-over-TLS and TLS fault check, on each engine, counted by
# nginx or the TLS peer; kTLS counted by loadgen and by the kernel.
python3 tests/integration/run.py --loadgen build/bin/loadgen --fault-server build/bin/fault_server \
  -k https -k tls_ || failed=1
exit "$failed"
