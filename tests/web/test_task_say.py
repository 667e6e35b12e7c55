"""The task page's box (issue 30, point 2): its giver and owners write more to an open task, as
`POST /api/v1/tasks/ID/messages` does; others see no box and are refused; a form without its
token is refused; nothing refused is kept."""

from __future__ import annotations

from pathlib import Path

from tests.runs.support import get, script
from tests.support import Harness, eventually, items
from tests.web.support import ORIGIN, Browser, signed_in
from tests.web.test_work import give

ECHO = "otherwise: [{reply: 'heard {text} from {sender}'}]"


async def _shows(browser: Browser, path: str, text: str) -> bool:
    return text in (await browser.get(path)).text


async def _settled(parley: Harness, task_id: int, runs: int) -> bool:
    found = items((await get(parley.owner, f"/tasks/{task_id}"))["runs"])
    return len(found) == runs and all(run["state"] == "finished" for run in found)


async def test_the_task_page_takes_more_text_from_its_giver_and_owners_only(
    parley: Harness, tmp_path: Path
) -> None:
    await parley.hire("clerk", brain=script(tmp_path, "clerk", ECHO))
    ada, bo = await parley.add_person("ada"), await parley.add_person("bo")
    async with signed_in(parley, ada) as giver:
        task_id = await give(giver, "clerk", "count the spoons")
        assert await eventually(lambda: _settled(parley, task_id, 1))
        page = await giver.get(f"/tasks/{task_id}")
        said = await giver.post(f"/tasks/{task_id}/messages", {"text": "and the <forks>"})
        heard = "heard and the &lt;forks&gt; from ada"
        assert await eventually(lambda: _shows(giver, f"/tasks/{task_id}", heard))
        empty = await giver.post(f"/tasks/{task_id}/messages", {"text": "  "})
    async with signed_in(parley, bo) as other:
        theirs = await other.get(f"/tasks/{task_id}")
        refused = await other.post(f"/tasks/{task_id}/messages", {"text": "mine now"})
    async with signed_in(parley) as owner:
        owners = await owner.get(f"/tasks/{task_id}")
        tokenless = await owner.http.post(
            f"/tasks/{task_id}/messages", data={"text": "no token"}, headers={"Origin": ORIGIN}
        )
    box = f'action="/tasks/{task_id}/messages"'
    assert box in page.text and box in owners.text and box not in theirs.text
    assert (said.status_code, said.headers["location"]) == (303, f"/tasks/{task_id}")
    assert empty.status_code == 400 and "the text is empty" in empty.text
    assert refused.status_code == 403 and "only an owner" in refused.text
    assert tokenless.status_code == 403
    assert await _settled(parley, task_id, 2)
    bodies = [m["body"] for m in items((await get(parley.owner, f"/tasks/{task_id}"))["messages"])]
    assert "mine now" not in bodies and "no token" not in bodies


async def test_an_ended_task_shows_no_box(parley: Harness, tmp_path: Path) -> None:
    await parley.hire("clerk", brain=script(tmp_path, "clerk", "otherwise: [{complete: done}]"))
    async with signed_in(parley) as browser:
        task_id = await give(browser, "clerk", "count the spoons")
        assert await eventually(lambda: _shows(browser, f"/tasks/{task_id}", "state-done"))
        page = await browser.get(f"/tasks/{task_id}")
        late = await browser.post(f"/tasks/{task_id}/messages", {"text": "one more"})
    assert f'action="/tasks/{task_id}/messages"' not in page.text
    assert late.status_code == 409 and "it takes no more text" in late.text
