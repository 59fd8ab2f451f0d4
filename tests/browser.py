"""A real browser for the account page's tests: Debian's chromium driven by Playwright
(never Playwright's own browser download), one browser per test session and a fresh
context per test. A page is guarded: any request to an address other than the server's
listeners, any console error and any uncaught exception fails the test."""

import os
import shutil
import tempfile
from urllib.parse import urlsplit

CHROMIUM = os.environ.get("TABLEMERE_CHROMIUM", "/usr/bin/chromium")

# What the machine's chromium needs to start headless as root on a closed network.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage",
        # A gateway's host name for the page, resolved to this machine.
        "--host-resolver-rules=MAP tablemere.test 127.0.0.1"]


def origin(url):
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Browser:
    def __init__(self):
        from playwright.sync_api import sync_playwright

        if not os.path.exists(CHROMIUM):
            raise RuntimeError(f"{CHROMIUM} is missing; scripts/install-deps.sh installs chromium")
        self.profile = tempfile.mkdtemp(prefix="tm-chromium-")
        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=ARGS)

    def close(self):
        self.browser.close()
        self.playwright.stop()
        shutil.rmtree(self.profile, ignore_errors=True)


class GuardedPage:
    """A page in a fresh context that records what must not happen."""

    def __init__(self, browser, allowed_origins):
        self.context = browser.browser.new_context(viewport={"width": 1200, "height": 900},
                                                   accept_downloads=False)
        self.page = self.context.new_page()
        self.page.set_default_timeout(30_000)
        self.allowed = {origin(u) for u in allowed_origins}
        self.foreign = []        # requests to any other origin
        self.console_errors = []
        self.page_errors = []
        self.responses = []      # (status, method, url) of every response
        self.expected_failures = set()  # statuses a test provokes on purpose
        self.page.on("request", self._on_request)
        self.page.on("response", lambda r: self.responses.append((r.status, r.request.method, r.url)))
        self.page.on("console", self._on_console)
        self.page.on("pageerror", lambda e: self.page_errors.append(str(e)))

    def _on_request(self, request):
        if request.url.startswith(("data:", "blob:", "about:")):
            return
        if origin(request.url) not in self.allowed:
            self.foreign.append(request.url)

    def _on_console(self, message):
        if message.type != "error":
            return
        text = message.text
        # Chromium reports every HTTP failure of a fetch on the console; a test that
        # provokes one on purpose names its status.
        for expected in self.expected_failures:
            if expected in text:
                return
        self.console_errors.append(text)

    def expect_failure(self, *statuses):
        self.expected_failures.update(f"status of {status}" for status in statuses)

    def expect_console_error(self, *fragments):
        """Console errors with these fragments are the test's own doing (a refused CORS
        request, say)."""
        self.expected_failures.update(fragments)

    def check(self):
        problems = []
        if self.foreign:
            problems.append(f"requests to other origins: {self.foreign}")
        if self.console_errors:
            failed = [r for r in self.responses if r[0] >= 400]
            problems.append(f"console errors: {self.console_errors} (failed responses: {failed})")
        if self.page_errors:
            problems.append(f"uncaught page errors: {self.page_errors}")
        return problems

    def close(self):
        self.context.close()
