"""Every page as a browser without JavaScript reads it: it answers, and each of its controls has
a label (a <label for>, a <label> around it, or an aria-label) a screen reader can say."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.support import Harness
from tests.web.support import signed_in

PAGES = [
    "/", "/chat/echo", "/tasks", "/tasks/{task}", "/roots/{task}", "/runs", "/runs/{run}", "/turns",
    "/agents", "/agents/echo", "/nodes", "/people", "/connections", "/channels", "/a2a-access",
]  # fmt: skip
CONTROLS = {"input", "select", "textarea"}
UNLABELLED_KINDS = {"hidden", "submit", "button"}  # a button's text is its label


class Controls(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.labelled: set[str] = set()  # ids named by a <label for>
        self.unnamed: list[str] = []  # controls with no id to name them by, outside a label
        self.ids: list[str] = []
        self._in_label = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "label":
            self._in_label += 1
            if found.get("for"):
                self.labelled.add(found["for"] or "")
        if tag not in CONTROLS or found.get("type") in UNLABELLED_KINDS:
            return
        if self._in_label or found.get("aria-label"):
            return
        if found.get("id"):
            self.ids.append(found["id"] or "")
        else:
            self.unnamed.append(f"<{tag} name={found.get('name')!r}>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "label":
            self._in_label -= 1

    def unlabelled(self) -> list[str]:
        return self.unnamed + [f"#{i}" for i in self.ids if i not in self.labelled]


@pytest.mark.parametrize("person", ["owner", "member"])
async def test_every_page_answers_and_labels_its_controls(
    parley: Harness, tmp_path: Path, person: str
) -> None:
    rules = tmp_path / "echo.yaml"
    rules.write_text('otherwise:\n  - reply: "heard {text}"\n')
    await parley.hire("echo", brain=f"scripted:{rules}")
    task = (await parley.owner.post("/api/v1/tasks", json={"agent": "echo", "text": "t"})).json()
    runs = await parley.owner.get("/api/v1/runs", params={"topic": task["id"]})
    run = runs.json()["items"][0]["id"]
    token = None if person == "owner" else await parley.add_person("mia")
    async with signed_in(parley, token) as browser:
        for path in PAGES:
            answer = await browser.get(path.format(task=task["id"], run=run))
            if person == "member" and path in {"/connections", "/channels", "/a2a-access"}:
                assert answer.status_code == 403, path  # owners' lists
                continue
            assert answer.status_code == 200, (path, answer.text[:300])
            controls = Controls()
            controls.feed(answer.text)
            assert controls.unlabelled() == [], path
            assert '<main id="main"' in answer.text and 'lang="en"' in answer.text
