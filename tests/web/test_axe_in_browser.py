"""Every page under axe-core (tests/web/vendor/axe-core), in Chromium: with data in its lists, as
an owner and as a member, in the light and the dark scheme, at a desktop's width and a phone's,
no serious or critical violation of the rules axe runs by default (WCAG 2.x A and AA and its
best practices: contrast, landmarks, labels, names of links and buttons, list structure…)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

import parley
from parley.agents.model import Lifecycle
from parley.channels.connected import AccountPhase
from parley.channels.model import BindingStatus
from parley.conversations.model import TaskStatus
from parley.deliveries.model import DeliveryState
from parley.federation.model import ConnectionState
from parley.mesh.model import NodeStatus
from parley.runs.model import RunState
from tests.served import Served
from tests.web.browser import chromium, sign_in, site
from tests.web.pages import member_token, paths, with_data

__all__ = ["chromium", "site"]  # fixtures

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
WIDTHS = (1280, 390)
GRAVE = {"serious", "critical"}
RUN = "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"


def violations(page: Page) -> list[dict[str, Any]]:
    """axe's serious and critical violations on the page as it is now."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    found: list[dict[str, Any]] = page.evaluate(RUN)
    return [v for v in found if v["impact"] in GRAVE]


def readable(where: str, found: list[dict[str, Any]]) -> list[str]:
    """One line a violation: where, the rule, its impact, the elements (axe's selectors), help."""
    lines = []
    for v in found:
        targets = ", ".join(" ".join(map(str, n["target"])) for n in v["nodes"][:5])
        more = f" (+{len(v['nodes']) - 5} more)" if len(v["nodes"]) > 5 else ""
        lines.append(f"{where}: {v['id']} [{v['impact']}] at {targets}{more}: {v['help']}")
    return lines


def _check(page: Page, where: str) -> list[str]:
    page.wait_for_load_state("load")
    lines = []
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        lines += readable(f"{where} at {width}px", violations(page))
    return lines


@pytest.mark.parametrize("person", ["owner", "member"])
def test_no_page_has_a_serious_accessibility_violation(
    chromium: Browser, site: Served, tmp_path: Path, person: str
) -> None:
    ids = with_data(site, tmp_path)
    token = member_token(site) if person == "member" else None
    problems: list[str] = []
    for scheme in ("light", "dark"):
        # bypass_csp: the page's policy (script-src 'self') refuses axe's script, injected inline.
        context = chromium.new_context(color_scheme=scheme, bypass_csp=True)
        context.set_default_timeout(15_000)
        page = context.new_page()
        page.goto(site.url + "/signin")
        problems += _check(page, f"/signin ({scheme})")
        sign_in(page, site, token)
        for path in [*paths(ids, person), "/tasks/999999"]:  # the last: the error page
            page.goto(site.url + path)
            problems += _check(page, f"{path} ({scheme})")
        context.close()
    assert problems == [], "\n".join(["axe found:", *problems])


def test_the_check_reads_a_violation(chromium: Browser) -> None:
    """The check can fail: a page with an unnamed link, pale text and no landmark is caught."""
    page = chromium.new_page()
    page.set_content(
        '<html lang="en"><body><a href="/x"></a><p style="color:#ccc;background:#fff">pale</p>'
        "</body></html>"
    )
    lines = readable("test", violations(page))
    page.close()
    assert any(line.startswith("test: link-name [serious] at a") for line in lines), lines
    assert any("color-contrast [serious]" in line for line in lines), lines


STYLESHEET = Path(parley.__file__).parent / "web" / "static" / "parley.css"
KINDS = [RunState, TaskStatus, Lifecycle, NodeStatus, ConnectionState, BindingStatus,
         DeliveryState, AccountPhase]  # fmt: skip
# Every value of the enums a page shows with the `state` macro; and the tree's "closed".
STATES = {"closed"} | {state.value for kind in KINDS for state in kind}


def test_every_state_is_a_badge_that_reads_in_both_schemes(chromium: Browser) -> None:
    """Each state the `state` macro can be given has its own rule in the stylesheet (a ground and
    a text), and axe finds each badge's contrast enough, light and dark."""
    css = STYLESHEET.read_text()
    assert [s for s in sorted(STATES) if f".state-{s}" not in css] == []
    badges = "".join(f'<li><span class="state state-{s}">{s}</span></li>' for s in sorted(STATES))
    page = chromium.new_page()
    page.set_content(f'<html lang="en"><title>badges</title><main><ul>{badges}</ul></main></html>')
    page.add_style_tag(path=str(STYLESHEET))
    problems = []
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        problems += readable(scheme, violations(page))
    page.close()
    assert problems == [], "\n".join(problems)
