"""Servers the tests and scripts start on 127.0.0.1: Debian's nginx from a
throwaway prefix, our fault_server fixture, and a small TLS peer for what
nginx will not do over TLS (stall, end a response by closing without
close_notify, count a request body's bytes). Used by run.py (integration
tests), scripts/bench and scripts/demo."""

import collections
import http.client
import json
import os
import re
import select
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time

LOOPBACK = "127.0.0.1"
SMALL_FILE_BYTES = 100
# Large enough that 1000 of them pass 2^32 bytes: a 32-bit byte counter wraps.
BIG_FILE_BYTES = 6 * 1024 * 1024
# nginx's h2_goaway_port ends each connection after this many requests.
H2_REQUESTS_PER_CONNECTION = 100

# One access log line per request; the check's tag travels in the query string.
# Over https also whether the TLS session was resumed ("r", else ".") and the
# SNI name the client sent ("-" when none); both "-" over http. $msec and
# $request_time last: when the request arrived (scripts/bench's spread of
# open-model arrivals), ignored by the count checks.
ACCESS_LOG_FORMAT = ('$connection $connection_requests $status $bytes_sent "$request" '
                     '"$http_x_kubeload_probe" $ssl_session_reused "$ssl_server_name" '
                     '$msec $request_time')
ACCESS_LOG_LINE = re.compile(
    r'^(\d+) (\d+) (\d{3}) (\d+) "([^"]*)" "([^"]*)" (\S+) "([^"]*)"(?: [\d.]+ [\d.]+)?$')


class CheckFailure(Exception):
    """A check's expectation did not hold; the message says which and why."""


def expect(condition, message):
    if not condition:
        raise CheckFailure(message)


def free_port():
    """A port nothing listens on right now (the kernel picked it, then we let go)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def wait_for_listener(port, process, timeout_s):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            with socket.create_connection((LOOPBACK, port), timeout=0.5):
                return True
        except OSError:
            time.sleep(0.05)
    return False


def stop_process(process, name, stop_signal=signal.SIGTERM, grace_s=5):
    """Stops a process we started: a polite signal first, SIGKILL after the grace period."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(stop_signal)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        print(f"note: {name} ignored {stop_signal.name}, killing it", file=sys.stderr)
        process.kill()
        process.wait()


class Nginx:
    """Debian's nginx from a throwaway prefix: config, docroot, logs and temp paths all inside."""

    def __init__(self, binary, workdir, workers=1):
        self.binary = binary
        self.workers = workers  # worker processes
        self.prefix = os.path.join(workdir, "nginx")
        self.docroot = os.path.join(self.prefix, "docroot")
        self.access_log = os.path.join(self.prefix, "access.log")
        self.error_log = os.path.join(self.prefix, "error.log")
        self.process = None
        self.port = None
        self.tls_port = None  # TLS 1.2, as Debian 12's nginx offers by default
        self.tls13_port = None  # TLS 1.3 only
        self.h2c_port = None  # cleartext HTTP/2 (prior knowledge)
        self.h2_port = None  # HTTP/2 over TLS (ALPN h2)
        # HTTP/2 over TLS that ends each connection with a graceful GOAWAY
        # after H2_REQUESTS_PER_CONNECTION requests (keepalive_requests).
        self.h2_goaway_port = None
        self.ca_cert = None
        # Appended to every check's tag (url, logged_requests): a check that
        # runs once per engine counts each run's own requests in the log.
        self.tag_suffix = ""

    def start(self, attempts=5):
        os.makedirs(self.docroot)
        self._make_certificate()
        # Workers drop to an unprivileged user when started as root; they must
        # still be able to read the docroot inside our private temp dir.
        for path in (os.path.dirname(self.prefix), self.prefix, self.docroot):
            os.chmod(path, 0o755)
        self._write_docroot()
        last_error = ""
        # free_port() can race with another process grabbing the port; retry.
        for _ in range(attempts):
            self.port = free_port()
            self.tls_port = free_port()
            self.tls13_port = free_port()
            self.h2c_port = free_port()
            self.h2_port = free_port()
            self.h2_goaway_port = free_port()
            config = os.path.join(self.prefix, "nginx.conf")
            with open(config, "w") as out:
                out.write(self._config())
            stderr_path = os.path.join(self.prefix, "stderr.log")
            with open(stderr_path, "w") as stderr_file:
                self.process = subprocess.Popen(
                    [self.binary, "-p", self.prefix, "-c", config, "-e", self.error_log],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr_file,
                    start_new_session=True)
            if wait_for_listener(self.port, self.process, timeout_s=10):
                return
            stop_process(self.process, "nginx")
            last_error = read_tail(stderr_path) + read_tail(self.error_log)
        raise RuntimeError(f"nginx did not start: {last_error}")

    def stop(self):
        # SIGQUIT: graceful shutdown, the master waits for its worker.
        stop_process(self.process, "nginx", signal.SIGQUIT)
        if self.process is not None:
            # Should the master have been killed, its worker would linger; the
            # session we started nginx in holds both.
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def url(self, path, tag, tls=False, host=LOOPBACK, protocol="http1", tls13=False):
        tag += self.tag_suffix
        if protocol == "h2c":
            return f"http://{LOOPBACK}:{self.h2c_port}{path}?check={tag}"
        if protocol == "http2":
            return f"https://{host}:{self.h2_port}{path}?check={tag}"
        if tls:
            port = self.tls13_port if tls13 else self.tls_port
            return f"https://{host}:{port}{path}?check={tag}"
        return f"http://{LOOPBACK}:{self.port}{path}?check={tag}"

    def _make_certificate(self):
        # A CA of our own and a server certificate it signed for 127.0.0.1 and
        # localhost. loadgen verifies certificates: clients pass ca_cert
        # (--cacert), which the system store knows nothing about.
        self.ca_cert = os.path.join(self.prefix, "ca.crt")
        ca_key = os.path.join(self.prefix, "ca.key")
        key = os.path.join(self.prefix, "tls.key")
        request = os.path.join(self.prefix, "tls.csr")
        extensions = os.path.join(self.prefix, "tls.ext")
        with open(extensions, "w") as out:
            out.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n"
                      "extendedKeyUsage=serverAuth\n")
        for command in (
                ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                 "-subj", "/CN=kubeload test CA", "-keyout", ca_key, "-out", self.ca_cert],
                ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                 "-keyout", key, "-out", request],
                ["x509", "-req", "-in", request, "-CA", self.ca_cert, "-CAkey", ca_key,
                 "-CAcreateserial", "-days", "2", "-extfile", extensions,
                 "-out", os.path.join(self.prefix, "tls.crt")]):
            subprocess.run(["openssl", *command], check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)

    def _write_docroot(self):
        with open(os.path.join(self.docroot, "small.bin"), "wb") as out:
            out.write(bytes(ord("a") + i % 26 for i in range(SMALL_FILE_BYTES)))
        with open(os.path.join(self.docroot, "big.bin"), "wb") as out:
            block = bytes(range(256)) * 4096
            remaining = BIG_FILE_BYTES
            while remaining:
                piece = block[:remaining]
                out.write(piece)
                remaining -= len(piece)
        with open(os.path.join(self.docroot, "index.html"), "w") as out:
            out.write("<!doctype html><title>kubeload</title><p>integration target</p>\n")

    def _config(self):
        p = self.prefix
        return f"""
daemon off;
master_process on;
worker_processes {self.workers};
error_log {p}/error.log;
pid {p}/nginx.pid;
events {{ worker_connections 4096; }}
http {{
    log_format counted '{ACCESS_LOG_FORMAT}';
    access_log {p}/access.log counted;
    client_body_temp_path {p}/client_body_temp;
    proxy_temp_path {p}/proxy_temp;
    fastcgi_temp_path {p}/fastcgi_temp;
    uwsgi_temp_path {p}/uwsgi_temp;
    scgi_temp_path {p}/scgi_temp;
    # Every server below serves the docroot, the TLS ones with the test CA's
    # certificate.
    root {self.docroot};
    ssl_certificate {p}/tls.crt;
    ssl_certificate_key {p}/tls.key;
    types {{ text/html html; }}
    default_type application/octet-stream;
    sendfile on;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    server {{ listen {LOOPBACK}:{self.port}; }}
    server {{
        listen {LOOPBACK}:{self.tls_port} ssl;
        # Said, not left to the default: the kTLS check expects TLS 1.2 here.
        ssl_protocols TLSv1.2;
    }}
    server {{
        listen {LOOPBACK}:{self.tls13_port} ssl;
        ssl_protocols TLSv1.3;
    }}
    server {{
        listen {LOOPBACK}:{self.h2c_port} http2;
        # nginx 1.22 writes an HTTP/2 response's HEADERS frame, then the
        # file's DATA by sendfile, Nagle on: with one stream per connection
        # the DATA waits for the client's delayed ACK, 40 ms a response
        # (h2load shows the same 90 requests/s). Plain writes, as over TLS.
        sendfile off;
    }}
    server {{ listen {LOOPBACK}:{self.h2_port} ssl http2; }}
    server {{
        listen {LOOPBACK}:{self.h2_goaway_port} ssl http2;
        keepalive_requests {H2_REQUESTS_PER_CONNECTION};
    }}
}}
"""

    def logged_requests(self, tag, expected, settle_s=0.3, quiet_s=1.5, deadline_s=10):
        """The access-log entries of one check, once the log has settled.

        nginx logs a request after its response went out, so the client may
        finish a moment before the last lines appear. Returns when `expected`
        lines are there and nothing changed for `settle_s`, or when nothing
        changed for `quiet_s` (fewer lines than expected: the caller's
        assertion reports it)."""
        marker = f"check={tag}{self.tag_suffix} "
        start = time.monotonic()
        last_change = start
        previous = None
        while True:
            entries = []
            with open(self.access_log, errors="replace") as log:
                for line in log:
                    if marker in line:
                        match = ACCESS_LOG_LINE.match(line.rstrip("\n"))
                        expect(match, f"unparsable access log line: {line!r}")
                        entries.append(LogEntry(int(match[1]), int(match[2]), int(match[3]),
                                                int(match[4]), match[6], match[7] == "r",
                                                match[8]))
            now = time.monotonic()
            if previous is None or len(entries) != previous:
                previous = len(entries)
                last_change = now
            stable_for = now - last_change
            if (len(entries) >= expected and stable_for >= settle_s) or stable_for >= quiet_s \
                    or now - start >= deadline_s:
                return entries
            time.sleep(0.05)


# probe_header: the request's X-Kubeload-Probe header ("-" when absent);
# session_reused: its TLS session was resumed; server_name: the SNI ("-": none).
LogEntry = collections.namedtuple(
    "LogEntry",
    "connection connection_requests status bytes_sent probe_header session_reused server_name")


class FaultServer:
    """tests/fixtures/fault_server on an ephemeral port (`args`: e.g. ["--h2", "rst-stream"])."""

    def __init__(self, binary, workdir, args=()):
        self.binary = binary
        self.args = list(args)
        name = "-".join(["fault_server", *[a.lstrip("-") for a in self.args]])
        self.stderr_path = os.path.join(workdir, name + ".stderr")
        self.process = None
        self.address = None  # as announced: 127.0.0.1 unless `args` give --listen
        self.port = None

    def start(self, timeout_s=10):
        with open(self.stderr_path, "w") as stderr_file:
            self.process = subprocess.Popen([self.binary, "--port", "0", *self.args],
                                            stdin=subprocess.DEVNULL,
                                            stdout=subprocess.PIPE, stderr=stderr_file)
        ready, _, _ = select.select([self.process.stdout], [], [], timeout_s)
        line = self.process.stdout.readline().decode(errors="replace").strip() if ready else ""
        match = re.fullmatch(r"listening (\S+):(\d+)", line)
        if not match:
            stop_process(self.process, "fault_server")
            raise RuntimeError(f"fault_server did not announce its port (got {line!r}): "
                               f"{read_tail(self.stderr_path)}")
        self.address = match[1]
        self.port = int(match[2])

    def stop(self):
        stop_process(self.process, "fault_server")
        if self.process is not None:
            self.process.stdout.close()

    def url(self, path):
        return f"http://{LOOPBACK}:{self.port}{path}"

    def stats(self, path="/__stats"):
        """The server's counters; path="/shop/stats" for the shop's (neither counts itself)."""
        connection = http.client.HTTPConnection(LOOPBACK, self.port, timeout=5)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            return json.loads(response.read())
        finally:
            connection.close()

    def stats_after(self, before, expected_requests, settle_s=0.2, deadline_s=5):
        """Counter deltas since `before`, once they stopped moving.

        The server counts a request when it has read it, which can trail the
        client's view by a moment (a request that timed out on the client)."""
        start = time.monotonic()
        last, last_change = None, start
        while True:
            now_stats = self.stats()
            delta = {key: now_stats[key] - before[key] for key in before}
            now = time.monotonic()
            if delta != last:
                last, last_change = delta, now
            stable = now - last_change >= settle_s
            if (stable and delta["requests"] >= expected_requests) or now - start >= deadline_s:
                return delta
            time.sleep(0.05)


class TlsPeer:
    """An HTTP/1.1 server over TLS on 127.0.0.1 (Python's ssl, a thread per
    connection), with nginx's certificate, for what nginx does not do over TLS:
      /stall            reads the request and never answers;
      /close-delimited  answers without a length and closes without close_notify
                        (the end of the connection ends the body);
      /close-after      answers with a length, as if the connection stayed open,
                        and closes it (the client's next request finds it gone);
      anything else     reads the request and its Content-Length body, counts
                        every byte it read (`bytes_received`, `requests`) and
                        answers 200 "ok" on the kept-alive connection.
    `maximum_version`: the highest TLS version it offers (ssl.TLSVersion)."""

    CLOSE_DELIMITED_BODY = b"ended by the connection's end"

    def __init__(self, certificate, key, maximum_version=ssl.TLSVersion.MAXIMUM_SUPPORTED):
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.maximum_version = maximum_version
        self.context.load_cert_chain(certificate, key)
        self.listener = None
        self.port = None
        self.lock = threading.Lock()
        self.bytes_received = 0
        self.requests = 0
        self.stopping = threading.Event()
        self.connections = []

    def start(self):
        self.listener = socket.create_server((LOOPBACK, 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self):
        self.stopping.set()
        self.listener.close()
        with self.lock:
            for connection in self.connections:
                try:
                    connection.close()
                except OSError:
                    pass

    def url(self, path):
        return f"https://{LOOPBACK}:{self.port}{path}"

    def counts(self):
        with self.lock:
            return self.requests, self.bytes_received

    def _accept(self):
        while not self.stopping.is_set():
            try:
                raw, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(raw,), daemon=True).start()

    def _serve(self, raw):
        try:
            connection = self.context.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            raw.close()
            return
        with self.lock:
            self.connections.append(connection)
        pending = b""
        try:
            while not self.stopping.is_set():
                while b"\r\n\r\n" not in pending:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    pending += chunk
                head, pending = pending.split(b"\r\n\r\n", 1)
                request_line = head.split(b"\r\n", 1)[0].decode(errors="replace")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                while len(pending) < length:
                    chunk = connection.recv(1 << 20)
                    if not chunk:
                        return
                    pending += chunk
                pending = pending[length:]
                path = request_line.split(" ")[1] if " " in request_line else ""
                if path.startswith("/stall"):
                    self.stopping.wait()
                    return
                if path.startswith("/close-delimited"):
                    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n" +
                                       self.CLOSE_DELIMITED_BODY)
                    return  # closed below without SSL_shutdown: no close_notify
                with self.lock:
                    self.requests += 1
                    self.bytes_received += len(head) + 4 + length
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                if path.startswith("/close-after"):
                    return
        except (OSError, ssl.SSLError, ValueError):
            return
        finally:
            connection.close()


def read_tail(path, limit=2000):
    try:
        with open(path, errors="replace") as source:
            return source.read()[-limit:]
    except OSError:
        return ""
