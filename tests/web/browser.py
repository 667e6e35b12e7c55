"""A real browser for the page's tests: Debian's chromium, headless, driven by Playwright
(never a browser of Playwright's own, which this machine cannot download). Absent, the tests
that need it are skipped with the reason, except under CI=true, where they fail."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from parley.settings import Settings
from tests.conftest import sqlite_copy
from tests.served import Served, serving

CHROMIUM = os.environ.get("PARLEY_TEST_CHROMIUM") or shutil.which("chromium") or ""
# No background networking: this machine's network is closed, and chromium's own calls home
# would be refused many at a time.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DOCS = Path(__file__).resolve().parents[2] / "docs"


def shot(page: Page, name: str, elsewhere: Path, full_page: bool = True) -> None:
    """The README's pictures, taken as the tests reach them: written over ``docs/`` when
    PARLEY_WRITE_SHOTS=1 (so that a test run leaves the tree clean), else beside the test.
    ``full_page=False``: the screen only (a phone's, where the whole page would be tall)."""
    folder = DOCS if os.environ.get("PARLEY_WRITE_SHOTS") == "1" else elsewhere
    page.screenshot(path=str(folder / name), full_page=full_page)


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """One browser per test module: Playwright's sync API keeps an event loop running in this
    thread while it is open, which the asyncio tests of other modules must not find."""
    if not CHROMIUM:
        reason = "no chromium binary (Debian package chromium) for the browser tests"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason} (CI=true: .ci/run installs it)")
        pytest.skip(reason)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def site(tmp_path: Path, sqlite_template: Path) -> Iterator[Served]:
    """Parley served on a loopback port, on its embedded store, for a browser to reach."""
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=sqlite_copy(sqlite_template, tmp_path / "parley.db"),
        heartbeat_seconds=3600,
        sweep_seconds=3600,
    )
    with serving(settings) as served:
        yield served


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    context = chromium.new_context(viewport={"width": 1200, "height": 800})
    context.set_default_timeout(15_000)
    page = context.new_page()
    yield page
    context.close()


def sign_in(page: Page, site: Served, token: str | None = None) -> None:
    page.goto(site.url + "/")
    page.get_by_label("Your API token").fill(token or site.owner_token)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Sign out").wait_for()
