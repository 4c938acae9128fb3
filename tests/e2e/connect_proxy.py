#!/usr/bin/env python3
"""A tiny HTTP CONNECT proxy for the e2e tests, on 127.0.0.1 only.

Tunnels CONNECT host:port requests and refuses everything else (405). Writes
its port to PORT_FILE once it listens and appends one line per tunnel,
"CONNECT host:port", to LOG_FILE, so a test can see its calls went through it.
Usage: connect_proxy.py PORT_FILE LOG_FILE
"""
import socket
import sys
import threading


def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def handle(client, log_file, lock):
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = client.recv(4096)
        if not chunk:
            client.close()
            return
        head += chunk
        if len(head) > 65536:
            client.close()
            return
    request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = request_line.split()
    if len(parts) != 3 or parts[0] != "CONNECT":
        client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
        client.close()
        return
    host, _, port = parts[1].rpartition(":")
    try:
        upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
        upstream.settimeout(None)
    except (OSError, ValueError) as e:
        client.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
        client.close()
        print(f"connect_proxy: {parts[1]}: {e}", file=sys.stderr)
        return
    with lock, open(log_file, "a", encoding="utf-8") as log:
        log.write(f"CONNECT {parts[1]}\n")
    client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    rest = head.split(b"\r\n\r\n", 1)[1]
    if rest:
        upstream.sendall(rest)
    threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    pipe(upstream, client)


def main():
    port_file, log_file = sys.argv[1], sys.argv[2]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    open(log_file, "a", encoding="utf-8").close()
    with open(port_file, "w", encoding="utf-8") as f:
        f.write(str(listener.getsockname()[1]))
    lock = threading.Lock()
    while True:
        client, _ = listener.accept()
        threading.Thread(target=handle, args=(client, log_file, lock), daemon=True).start()


if __name__ == "__main__":
    main()
