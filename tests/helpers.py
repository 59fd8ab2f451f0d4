"""Small helpers the black-box suites share."""

import time
import urllib.parse
import uuid


def uid(prefix="n"):
    return prefix + uuid.uuid4().hex[:10]


def wait_for(probe, what, timeout=20.0, interval=0.05):
    """Polls probe() until it returns a truthy value; fails after the deadline."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def ns_path(levels):
    """A namespace as one path segment: levels joined by 0x1F, percent-encoded (%1F)."""
    return urllib.parse.quote("\x1f".join(levels), safe="")
