#!/usr/bin/env python3
"""Checks what a user installs outside this repository (docs/deploy.md).

  krew: plugin/krew/package turns the static kubectl-kubeload into the krew
        archive and manifest; the manifest must be valid by krew's schema
        (krew.googlecontainertools.github.com/v1alpha2 Plugin, the fields krew's
        own validation demands), carry the project version and the archive's
        real sha256, and the archive must hold the binary krew links (`bin`)
        and the LICENSE.
  image: scripts/image-archive, given the smallest Containerfile (a second,
        no compiler), writes an OCI archive whose image config carries the
        org.opencontainers.image.* labels with this checkout's version, commit
        and license; --image ARCHIVE checks the full image's archive the same way.

Each validator is first shown a broken input and must reject it, so a check
that cannot fail fails the run.

  python3 tests/packaging/check_packaging.py [--binary FILE] [--image ARCHIVE]

--binary defaults to build-static/bin/kubectl-kubeload (plugin/krew/build-static).
Ends with "N passed, M failed".
"""
import argparse
import base64
import copy
import hashlib
import http.server
import io
import json
import os
import re
import ssl
import subprocess
import sys
import tarfile
import tempfile
import threading

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KREW_API = "krew.googlecontainertools.github.com/v1alpha2"
LICENSE_ID = "Apache-2.0"

passed = 0
failed = 0


def check(name, problems):
    global passed, failed
    if problems:
        failed += 1
        print(f"FAIL {name}")
        for problem in problems:
            print(f"     {problem}")
    else:
        passed += 1
        print(f"ok   {name}")


def project_version():
    return subprocess.run([os.path.join(ROOT, "scripts", "version")], check=True,
                          capture_output=True, text=True).stdout.strip()


def git_revision():
    """The commit, with "-dirty" when tracked files differ from it (as scripts/image-archive says)."""
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], check=True,
                            capture_output=True, text=True).stdout.strip()
    clean = subprocess.run(["git", "-C", ROOT, "diff", "--quiet", "HEAD", "--"]).returncode == 0
    return commit if clean else commit + "-dirty"


def krew_manifest_problems(manifest, file_name, archive_bytes, version):
    """What krew (or its index's rules) would refuse in the manifest, and any
    disagreement with the archive it points at."""
    problems = []
    if manifest.get("apiVersion") != KREW_API:
        problems.append(f"apiVersion is {manifest.get('apiVersion')!r}, not {KREW_API}")
    if manifest.get("kind") != "Plugin":
        problems.append(f"kind is {manifest.get('kind')!r}, not Plugin")
    name = (manifest.get("metadata") or {}).get("name", "")
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]*", name or ""):
        problems.append(f"metadata.name {name!r} is not a plugin name")
    if file_name != f"{name}.yaml":
        problems.append(f"file {file_name} does not match metadata.name {name!r} (krew wants NAME.yaml)")
    spec = manifest.get("spec") or {}
    if spec.get("version") != f"v{version}":
        problems.append(f"spec.version is {spec.get('version')!r}, not v{version} (the project's, with krew's v)")
    if not re.fullmatch(r"v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?", str(spec.get("version"))):
        problems.append(f"spec.version {spec.get('version')!r} is not v-prefixed semver")
    if not spec.get("shortDescription"):
        problems.append("spec.shortDescription is empty")
    if not str(spec.get("homepage", "")).startswith("https://"):
        problems.append(f"spec.homepage {spec.get('homepage')!r} is not an https URL")
    platforms = spec.get("platforms") or []
    if not platforms:
        problems.append("spec.platforms is empty")
    archive_sha = hashlib.sha256(archive_bytes).hexdigest()
    try:
        members = tarfile.open(fileobj=io.BytesIO(archive_bytes), mode="r:gz").getmembers()
    except tarfile.TarError as e:
        return problems + [f"the archive is not a tar.gz: {e}"]
    member_names = {m.name.removeprefix("./"): m for m in members}
    for i, platform in enumerate(platforms):
        where = f"spec.platforms[{i}]"
        labels = ((platform.get("selector") or {}).get("matchLabels") or {})
        if labels.get("os") != "linux" or labels.get("arch") != "amd64":
            problems.append(f"{where}.selector.matchLabels is {labels}, not os: linux, arch: amd64")
        uri = str(platform.get("uri", ""))
        if not uri.startswith("https://") or not uri.endswith(f"_{version}_linux_amd64.tar.gz"):
            problems.append(f"{where}.uri {uri!r} is not an https URL of this version's archive")
        sha = str(platform.get("sha256", ""))
        if not re.fullmatch(r"[0-9a-f]{64}", sha):
            problems.append(f"{where}.sha256 {sha!r} is not 64 lowercase hex digits")
        elif sha != archive_sha:
            problems.append(f"{where}.sha256 {sha} is not the archive's, {archive_sha}")
        files = platform.get("files") or []
        for f in files:
            if not f.get("from") or not f.get("to"):
                problems.append(f"{where}.files entry {f} needs from and to")
            elif f["from"] not in member_names:
                problems.append(f"{where}.files from {f['from']!r} is not in the archive")
        bin_name = platform.get("bin", "")
        if not bin_name:
            problems.append(f"{where}.bin is empty")
        elif bin_name not in member_names:
            problems.append(f"{where}.bin {bin_name!r} is not in the archive")
        elif not member_names[bin_name].mode & 0o111:
            problems.append(f"{where}.bin {bin_name!r} is not executable in the archive")
        if "LICENSE" not in member_names:
            problems.append("the archive holds no LICENSE")
        elif not any(f.get("from") == "LICENSE" for f in files):
            problems.append(f"{where}.files does not install the LICENSE")
    if re.search(r"@[A-Z0-9]+@", yaml.safe_dump(manifest)):
        problems.append("a @PLACEHOLDER@ is left in the manifest")
    return problems


def check_krew(binary, version, old_root):
    with tempfile.TemporaryDirectory() as out:
        # A dynamic binary of this machine (openssl: libssl, GLIBC_2.34) must not be packed.
        refused = subprocess.run([os.path.join(ROOT, "plugin", "krew", "package"), "--binary", "/usr/bin/openssl",
                                  "--out", out], capture_output=True, text=True)
        check("plugin/krew/package refuses a dynamic binary of this machine (/usr/bin/openssl)",
              [] if refused.returncode != 0 and "GLIBC_" in refused.stderr and not os.listdir(out)
              else [f"exit {refused.returncode}, stderr {refused.stderr.strip()!r}, wrote {os.listdir(out)}"])
        run = subprocess.run([os.path.join(ROOT, "plugin", "krew", "package"), "--binary", binary,
                              "--out", out], capture_output=True, text=True)
        if run.returncode != 0:
            check("plugin/krew/package wrote the archive and the manifest",
                  [f"exit {run.returncode}: {run.stderr.strip()}"])
            return
        archive = os.path.join(out, f"kubectl-kubeload_{version}_linux_amd64.tar.gz")
        manifest_path = os.path.join(out, "kubeload.yaml")
        with open(archive, "rb") as f:
            archive_bytes = f.read()
        with open(manifest_path) as f:
            manifest = yaml.safe_load(f)

        broken = copy.deepcopy(manifest)
        broken["spec"]["platforms"][0]["sha256"] = hashlib.sha256(b"another archive").hexdigest()
        broken["apiVersion"] = "krew.googlecontainertools.github.com/v1alpha1"
        rejected = krew_manifest_problems(broken, "kubeload.yaml", archive_bytes, version)
        check("the krew check rejects a wrong sha256 and apiVersion",
              [] if len(rejected) == 2 else [f"it found {rejected}"])

        check(f"dist manifest valid for krew, sha256 {manifest['spec']['platforms'][0]['sha256'][:12]}... "
              f"is the archive's, version v{version}",
              krew_manifest_problems(manifest, os.path.basename(manifest_path), archive_bytes, version))

        again = os.path.join(out, "again")
        subprocess.run([os.path.join(ROOT, "plugin", "krew", "package"), "--binary", binary, "--out", again],
                       check=True, capture_output=True)
        with open(os.path.join(again, os.path.basename(archive)), "rb") as f:
            same = f.read() == archive_bytes
        check("packaging the same binary twice gives the same archive (the same sha256)",
              [] if same else ["the two archives differ"])

        with tarfile.open(archive) as tar:
            license_text = tar.extractfile("LICENSE").read()
            unpacked_binary = tar.extractfile("kubectl-kubeload").read()
        with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
            repo_license = f.read()
        problems = []
        if license_text != repo_license:
            problems.append("the archive's LICENSE is not the repository's")
        if b"Apache License" not in license_text or b"Version 2.0, January 2004" not in license_text:
            problems.append("LICENSE is not the Apache License 2.0 text")
        check("the archive's LICENSE is the repository's Apache License 2.0", problems)

        unpacked = os.path.join(out, "kubectl-kubeload")
        with open(unpacked, "wb") as f:
            f.write(unpacked_binary)
        os.chmod(unpacked, 0o755)
        run = subprocess.run([os.path.join(ROOT, "plugin", "krew", "check-binary"), unpacked],
                             capture_output=True, text=True)
        check(f"the archive's binary runs on glibc >= 2.31 ({run.stdout.strip() or run.stderr.strip()})",
              [] if run.returncode == 0 else [run.stderr.strip()])
        check_static_client([unpacked], out, "")
        if old_root:
            check_in_old_root(unpacked, old_root)


def check_in_old_root(binary, old_root):
    """The binary in another distribution's root file system (say Debian 11's,
    glibc 2.31, from debootstrap), run there with chroot."""
    libc = subprocess.run(["/usr/sbin/chroot", old_root, "ldd", "--version"], capture_output=True,
                          text=True).stdout.splitlines()
    hosts = os.path.join(old_root, "etc", "hosts")
    with open(hosts, "a+") as f:  # debootstrap writes none; localhost must not go to DNS
        f.seek(0)
        if not re.search(r"^127\.0\.0\.1\s+localhost\b", f.read(), re.M):
            f.write("127.0.0.1 localhost\n")
    with tempfile.TemporaryDirectory(dir=os.path.join(old_root, "tmp")) as work:
        inside = "/" + os.path.relpath(work, old_root)
        with open(binary, "rb") as src, open(os.path.join(work, "kubectl-kubeload"), "wb") as dst:
            dst.write(src.read())
        os.chmod(os.path.join(work, "kubectl-kubeload"), 0o755)
        check_static_client(["/usr/sbin/chroot", old_root, f"{inside}/kubectl-kubeload"], work, inside,
                            f" in {old_root} ({libc[0] if libc else 'no ldd'})")


def check_static_client(command, work, work_seen, where=""):
    """The static binary's whole client path: `localhost` resolved by static
    glibc from /etc/hosts, TLS by the static OpenSSL, HTTP by the static
    cpprestsdk, against a stand-in API server on 127.0.0.1 that answers the
    LoadTest list of `history` (nothing leaves the machine). `command` runs the
    binary; it sees `work` as `work_seen` (a chroot) or as it is ("")."""
    requests = []

    class ApiServer(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requests.append(self.path)
            body = json.dumps({"apiVersion": "kubeload.dev/v1alpha1", "kind": "LoadTestList",
                               "metadata": {"resourceVersion": "1"}, "items": []}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    key, cert = os.path.join(work, "key.pem"), os.path.join(work, "cert.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost"], check=True, capture_output=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ApiServer)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with open(cert) as f:
        ca = f.read()
    kubeconfig = os.path.join(work, "kubeconfig")
    with open(kubeconfig, "w") as f:
        yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "here",
            "clusters": [{"name": "here", "cluster": {
                "server": f"https://localhost:{server.server_address[1]}",
                "certificate-authority-data": base64.b64encode(ca.encode()).decode()}}],
            "users": [{"name": "here", "user": {"token": "packaging-check"}}],
            "contexts": [{"name": "here", "context": {"cluster": "here", "user": "here",
                                                      "namespace": "packaging"}}],
        }, f)
    try:
        seen = os.path.join(work_seen, "kubeconfig") if work_seen else kubeconfig
        run = subprocess.run(command + ["history", "smoke", "--kubeconfig", seen], capture_output=True,
                             text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "HOME": work})
    finally:
        server.shutdown()
    problems = []
    if run.returncode != 0:
        problems.append(f"exit {run.returncode}: {run.stderr.strip()}")
    if not any(p.startswith("/apis/kubeload.dev/v1alpha1/namespaces/packaging/loadtests") for p in requests):
        problems.append(f"the stand-in API server saw {requests}")
    check("the static binary resolves localhost, verifies TLS and lists LoadTests "
          f"(history against a stand-in API server on 127.0.0.1){where}", problems)


def oci_labels(archive):
    """The config labels of the one image in an OCI archive (index.json ->
    manifest -> config blob), read with tarfile, as any registry would."""
    with tarfile.open(archive) as tar:
        def blob(descriptor):
            algorithm, digest = descriptor["digest"].split(":", 1)
            data = tar.extractfile(f"blobs/{algorithm}/{digest}").read()
            if hashlib.new(algorithm, data).hexdigest() != digest:
                raise ValueError(f"blob {descriptor['digest']} does not match its digest")
            return json.loads(data)
        index = json.loads(tar.extractfile("index.json").read())
        manifests = index.get("manifests") or []
        if len(manifests) != 1:
            raise ValueError(f"index.json lists {len(manifests)} manifests, not 1")
        manifest = blob(manifests[0])
        config = blob(manifest["config"])
        return (config.get("config") or {}).get("Labels") or {}, manifests[0].get("annotations") or {}


def oci_label_problems(labels, version, revision, source):
    expected = {
        "org.opencontainers.image.title": "kubeload",
        "org.opencontainers.image.version": version,
        "org.opencontainers.image.revision": revision,
        "org.opencontainers.image.source": source,
        "org.opencontainers.image.licenses": LICENSE_ID,
    }
    problems = [f"{k} is {labels.get(k)!r}, not {v!r}" for k, v in expected.items() if labels.get(k) != v]
    if not labels.get("org.opencontainers.image.description"):
        problems.append("org.opencontainers.image.description is missing")
    created = labels.get("org.opencontainers.image.created", "")
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", created):
        problems.append(f"org.opencontainers.image.created {created!r} is not an RFC 3339 UTC time")
    return problems


def check_image(archive, version, what):
    revision = git_revision()
    with open(os.path.join(ROOT, "plugin", "krew", "kubeload.yaml")) as f:
        source = yaml.safe_load(f)["spec"]["homepage"]
    try:
        labels, _ = oci_labels(archive)
    except (OSError, KeyError, ValueError, tarfile.TarError) as e:
        check(f"{what}: an OCI archive with one image", [str(e)])
        return
    check(f"{what}: org.opencontainers.image.* labels (version {version}, "
          f"revision {revision[:12]}..., licenses {LICENSE_ID})",
          oci_label_problems(labels, version, revision, source))


def check_image_labels(version):
    """scripts/image-archive with the smallest Containerfile: the labels without a build."""
    rejected = oci_label_problems({"org.opencontainers.image.version": version}, version, git_revision(), "x")
    check("the label check rejects an image with only a version label",
          [] if len(rejected) == 6 else [f"it found {rejected}"])
    if os.geteuid() != 0:
        print("skip scripts/image-archive (buildah here needs root)")
        return
    with tempfile.TemporaryDirectory() as out:
        archive = os.path.join(out, "labels.oci.tar")
        run = subprocess.run([os.path.join(ROOT, "scripts", "image-archive"), "--base", "scratch",
                              "-f", os.path.join(ROOT, "tests", "packaging", "Containerfile.labels"),
                              "--out", archive], capture_output=True, text=True)
        if run.returncode != 0:
            check("scripts/image-archive built an OCI archive", [f"exit {run.returncode}: {run.stderr.strip()}"])
            return
        check_image(archive, version, "scripts/image-archive -f tests/packaging/Containerfile.labels")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, "build-static", "bin", "kubectl-kubeload"))
    parser.add_argument("--old-root", help="also run the packed binary in this root file system with "
                        "chroot, e.g. Debian 11's: debootstrap --variant=minbase bullseye DIR")
    parser.add_argument("--image", help="also check this OCI archive made by scripts/image-archive "
                        "(the full image; the labels are checked anyway on a quick image)")
    args = parser.parse_args()
    version = project_version()
    check_krew(os.path.abspath(args.binary), version, args.old_root)
    check_image_labels(version)
    if args.image:
        check_image(os.path.abspath(args.image), version, os.path.basename(args.image))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
