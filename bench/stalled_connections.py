#!/usr/bin/env python3
"""Stalled connections against normal requests, in one run.

Opens N connections from 127.0.0.1 that each send half a request head and then nothing
(the slowloris pattern of the issue), and meanwhile times whole requests from 127.0.0.2,
each on a new connection (so the accept path is measured too). The same requests are
timed first with nothing stalled, so the ratios compare like with like on a shared
machine. Usage:

  bench/stalled_connections.py [--stalled 3000] [--requests 1000] [--binary PATH]

With --binary pointing at a server without the transport flags (the thread-per-connection
model), it runs with its defaults and reports the failed requests instead.
"""

import argparse
import json
import resource
import socket
import sys
import time
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import conftest  # noqa: E402
from helpers import request_from  # noqa: E402


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def endpoint(url):
    host, port = url.split("//")[1].split(":")
    return host, int(port)


def one_request(addr, source):
    """Seconds for one GET /livez on a new connection from `source`, or None on failure."""
    started = time.perf_counter()
    try:
        data = request_from(addr[0], addr[1], source, timeout=5)
        if not data.startswith(b"HTTP/1.1 200"):
            return None
    except OSError:
        return None
    return time.perf_counter() - started


def measure(addr, count):
    times, errors = [], 0
    for _ in range(count):
        t = one_request(addr, "127.0.0.2")
        if t is None:
            errors += 1
        else:
            times.append(t)
    times.sort()
    pick = (lambda q: times[min(len(times) - 1, int(q * len(times)))] * 1000) if times else (
        lambda q: float("nan"))
    return {"p50_ms": pick(0.50), "p99_ms": pick(0.99), "ok": len(times), "errors": errors}


def stall(addr, count):
    """Opens `count` stalled connections from 127.0.0.1; returns them and how many the
    server refused or closed at once."""
    socks, refused = [], 0
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind(("127.0.0.1", 0))
            sock.connect(addr)
            sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n")
            socks.append(sock)
        except OSError:
            refused += 1
            sock.close()
    time.sleep(0.5)
    still_open = []
    for sock in socks:
        sock.setblocking(False)
        try:
            data = sock.recv(4096)
            open_ = False if data == b"" or data.startswith(b"HTTP/1.1 503") else True
        except BlockingIOError:
            open_ = True
        except OSError:
            open_ = False
        if open_:
            still_open.append(sock)
        else:
            refused += 1
            sock.close()
    return still_open, refused


def scenario(args, server_args, label):
    srv = conftest.Server(args=server_args)
    try:
        addr = endpoint(srv.api)
        for _ in range(50):  # warm up
            one_request(addr, "127.0.0.2")
        base = measure(addr, args.requests)
        socks, refused = stall(addr, args.stalled)
        loaded = measure(addr, args.requests)
        for s in socks:
            s.close()
        ratio = lambda k: loaded[k] / base[k] if base[k] == base[k] and base[k] > 0 else float("nan")
        return {"scenario": label, "server_args": server_args, "stalled_requested": args.stalled,
                "stalled_held": len(socks), "stalled_refused": refused, "baseline": base,
                "with_stalled": loaded, "p50_ratio": ratio("p50_ms"), "p99_ratio": ratio("p99_ms")}
    finally:
        srv.cleanup()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stalled", type=int, default=3000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--binary", default=None)
    parser.add_argument("--old-model", action="store_true",
                        help="the binary has no transport flags: run it with its defaults")
    args = parser.parse_args()
    limit = raise_fd_limit()
    if limit < args.stalled + 100:
        sys.exit(f"RLIMIT_NOFILE {limit} is too low for {args.stalled} connections")
    if args.binary:
        conftest.SERVER_BIN = pathlib.Path(args.binary)
    results = []
    if args.old_model:
        results.append(scenario(args, [], "old binary, its defaults"))
    else:
        # Every stalled connection held open by the event loop (the cap above them) ...
        results.append(scenario(args, ["--max-connections-per-address", str(args.stalled + 100)],
                                "cap above the stalled count: all held"))
        # ... and with the default per-address cap, which refuses the excess.
        results.append(scenario(args, [], "default per-address cap (1000)"))
    for r in results:
        print(json.dumps(r))


if __name__ == "__main__":
    main()
