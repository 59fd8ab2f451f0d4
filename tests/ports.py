"""Ports for listeners the tests start at an address fixed in advance (haproxy's
frontends, SeaweedFS's servers). A port asked of the kernel (bind to 0) lies in its
ephemeral range, where a port-0 listener or an outgoing connection may take it before the
intended listener binds it: one CI run lost haproxy's frontend that way. These are picked
below that range instead, and never handed out twice by one process."""

import random
import socket

_handed_out = set()


def _ephemeral_start():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port):
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False


def reserved_port(twin_offset=0):
    """A free loopback port below the ephemeral range; with `twin_offset`, port +
    twin_offset is free and below the range too (SeaweedFS's gRPC twin)."""
    top = _ephemeral_start() - twin_offset
    for _ in range(1000):
        port = random.randrange(10000, top)
        pair = {port, port + twin_offset} if twin_offset else {port}
        if pair & _handed_out or not all(_bindable(p) for p in pair):
            continue
        _handed_out.update(pair)
        return port
    raise RuntimeError("no free port below the ephemeral range")
