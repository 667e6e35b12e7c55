"""In a real browser: a page of another origin (here, another port of the same host, so that
the SameSite cookie still goes along) cannot show a signed-in Parley page in a frame, while it
can frame a page of its own; and Parley's own pages run under their policy without a single
violation (no inline script or style that the policy would block)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from playwright.sync_api import ConsoleMessage, Page

from bench.ports import free_port
from tests.served import Served
from tests.web.browser import chromium, page, sign_in, site

__all__ = ["chromium", "page", "site"]  # fixtures


@contextmanager
def another_site(pages: dict[str, str]) -> Iterator[str]:
    """A plain HTTP server on another port of this host serving ``pages`` (path: HTML)."""

    class Pages(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(self.path, "").encode()
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", free_port()), Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_another_site_cannot_frame_a_parley_page(page: Page, site: Served) -> None:
    sign_in(page, site)
    framing = f'<iframe id=parley src="{site.url}/"></iframe><iframe id=own src="/own"></iframe>'
    with another_site({"/": framing, "/own": "<p id=own>its own page</p>"}) as elsewhere:
        page.goto(elsewhere + "/", wait_until="load")  # "load" waits for the frames too
        assert page.frame_locator("#own").locator("#own").inner_text() == "its own page"
        parley = page.locator("#parley").element_handle().content_frame()
        assert parley is not None
        # Refused: the browser shows its own error page there, not Parley's signed-in page.
        assert parley.url == "chrome-error://chromewebdata/"
        assert page.frame_locator("#parley").get_by_role("button", name="Sign out").count() == 0


def test_parley_s_pages_run_under_their_policy_without_a_violation(
    page: Page, site: Served
) -> None:
    violations: list[str] = []

    def note(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text:
            violations.append(message.text)

    page.on("console", note)
    sign_in(page, site)
    for path in ("/tasks", "/agents", "/"):
        page.goto(site.url + path, wait_until="load")
    page.get_by_role("link", name="Runs").click()  # htmx boosts the link: its script runs
    page.wait_for_url(site.url + "/runs")
    page.goto(site.url + "/docs")
    # Swagger UI is started by the page's one inline script, allowed by its hash.
    page.get_by_role("link", name="/api/v1/runs", exact=True).wait_for()
    assert violations == []
