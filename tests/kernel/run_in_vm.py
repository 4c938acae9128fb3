#!/usr/bin/env python3
"""Runs a command under Debian's own kernel in a VM, with this machine's files
read-only: for what this machine's kernel cannot show, such as kTLS where it
was built without the tls module.

    tests/kernel/run_in_vm.py [--kernel DIR] [--timeout SECONDS] -- COMMAND [ARG...]

The command runs as root in the current directory, with an empty writable
/tmp and no network device (loopback only). Its output is printed as it comes
and its exit status is this script's. The VM is QEMU under software emulation
(TCG), 2 CPUs and 2 GiB: slower than the host, and no place for timings (the
machines' /dev/kvm is PVM's, which boots only kernels built for it: see
docs/testing.md, "The kernel-tls VM").
scripts/setup unpacks the kernel package (linux-image-amd64's) into
$KUBELOAD_CACHE/kernel/VERSION (default ~/.cache/kubeload) with its module
index; tests/kernel/init is the VM's first process."""

import argparse
import glob
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CACHE = os.path.join(os.environ.get("KUBELOAD_CACHE", os.path.expanduser("~/.cache/kubeload")),
                             "kernel")
# What the VM loads: the virtio transport and 9p for the shared folders, and
# what kTLS asks the kernel for (the tls module, the AEAD ciphers).
MODULE_FOLDERS = ("drivers/virtio", "net/9p", "fs/9p", "fs/netfs", "fs/fscache", "net/tls",
                  "crypto", "arch/x86/crypto", "lib/crypto")
MODULE_INDEX = ("modules.dep", "modules.alias", "modules.symbols", "modules.builtin",
                "modules.order")


def fail(message):
    sys.exit(f"run_in_vm: {message}")


def find_kernel(folder):
    """The unpacked package's kernel image and module folder."""
    images = sorted(glob.glob(os.path.join(folder, "*", "boot", "vmlinuz-*")))
    if not images:
        fail(f"no kernel under {folder}: scripts/setup unpacks Debian's linux-image package there")
    image = images[-1]
    version = os.path.basename(image)[len("vmlinuz-"):]
    modules = os.path.join(os.path.dirname(os.path.dirname(image)), "lib", "modules", version)
    if not os.path.exists(os.path.join(modules, "modules.dep")):
        fail(f"{modules} has no modules.dep: scripts/setup runs depmod on it")
    return image, version, modules


def static_busybox():
    busybox = shutil.which("busybox")
    if busybox is None:
        fail("no busybox: scripts/setup installs busybox-static")
    # The initramfs has no libraries: a dynamically linked busybox cannot start.
    linked = subprocess.run(["ldd", busybox], capture_output=True, text=True)
    if linked.returncode == 0:
        fail(f"{busybox} is linked dynamically: scripts/setup installs busybox-static")
    return busybox


def write_initramfs(path, busybox, version, modules):
    """An uncompressed newc cpio (the kernel takes it as is) of busybox, the
    init script and the module folders the VM needs, packed by busybox cpio."""
    with tempfile.TemporaryDirectory(prefix="kubeload-initramfs-") as root:
        for folder in ("bin", "sbin", "proc", "sys", "dev", "host"):
            os.makedirs(os.path.join(root, folder))
        shutil.copy(busybox, os.path.join(root, "bin", "busybox"))
        shutil.copy(os.path.join(HERE, "init"), os.path.join(root, "init"))
        os.chmod(os.path.join(root, "init"), 0o755)
        into = os.path.join(root, "lib", "modules", version)
        for folder in MODULE_FOLDERS:
            source = os.path.join(modules, "kernel", folder)
            if os.path.isdir(source):
                shutil.copytree(source, os.path.join(into, "kernel", folder))
        for name in MODULE_INDEX:
            shutil.copy(os.path.join(modules, name), into)
        names = subprocess.run(["find", "."], cwd=root, capture_output=True, check=True).stdout
        with open(path, "wb") as out:
            subprocess.run([busybox, "cpio", "-o", "-H", "newc"], cwd=root, input=names,
                           stdout=out, stderr=subprocess.DEVNULL, check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel", default=DEFAULT_CACHE,
                        help="the folder scripts/setup unpacked the kernel package into")
    parser.add_argument("--timeout", type=float, default=1800,
                        help="seconds before the VM is stopped and the run fails")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    qemu = shutil.which("qemu-system-x86_64")
    if qemu is None:
        fail("no qemu-system-x86_64: scripts/setup installs qemu-system-x86")
    image, version, modules = find_kernel(args.kernel)
    busybox = static_busybox()

    with tempfile.TemporaryDirectory(prefix="kubeload-vm-") as work:
        exchange = os.path.join(work, "exchange")
        os.makedirs(exchange)
        initramfs = os.path.join(work, "initramfs.cpio")
        write_initramfs(initramfs, busybox, version, modules)
        with open(os.path.join(exchange, "workdir"), "w") as out:
            out.write(os.getcwd())
        with open(os.path.join(exchange, "command"), "w") as out:
            out.write(f"export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
                      f"export HOME=/tmp PYTHONDONTWRITEBYTECODE=1\n"
                      f"cd {shlex.quote(os.getcwd())} || exit 1\n"
                      f"exec {shlex.join(command)}\n")
        console_path = os.path.join(work, "console.log")
        print(f"run_in_vm: Linux {version} under QEMU (software emulation): {shlex.join(command)}",
              flush=True)
        with open(console_path, "wb") as console:
            vm = subprocess.Popen(
                [qemu, "-accel", "tcg", "-cpu", "max", "-m", "2048", "-smp", "2",
                 "-nographic", "-no-reboot", "-nic", "none",
                 "-kernel", image, "-initrd", initramfs,
                 "-virtfs", "local,path=/,mount_tag=host,security_model=none,readonly=on,"
                            "multidevs=remap",
                 "-virtfs", f"local,path={exchange},mount_tag=exchange,security_model=none",
                 "-append", "console=ttyS0 quiet panic=-1"],
                stdin=subprocess.DEVNULL, stdout=console, stderr=subprocess.STDOUT)
            output = os.path.join(exchange, "output")
            shown = 0
            deadline = time.monotonic() + args.timeout
            while True:
                finished = vm.poll() is not None
                if os.path.exists(output):
                    with open(output, "rb") as produced:
                        produced.seek(shown)
                        new = produced.read()
                    shown += len(new)
                    sys.stdout.buffer.write(new)
                    sys.stdout.flush()
                if finished:
                    break
                if time.monotonic() > deadline:
                    vm.kill()
                    vm.wait()
                    print(f"run_in_vm: stopped the VM after {args.timeout:.0f} s", flush=True)
                    break
                time.sleep(0.5)
        status_path = os.path.join(exchange, "status")
        if not os.path.exists(status_path):
            with open(console_path, "rb") as console:
                tail = console.read()[-3000:].decode(errors="replace")
            fail(f"the command did not finish in the VM; the console's end:\n{tail}")
        with open(status_path) as status:
            return int(status.read().strip() or 1)


if __name__ == "__main__":
    sys.exit(main())
