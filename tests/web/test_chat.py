"""The chat pages: what a person says goes to the agent, the reply shows, Stop stops; a person
sees only their own conversation; a run's stream and the live part refuse what is not theirs."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx

from parley.text import MAX_TEXT
from tests.runs.test_cut_short import first_chunk
from tests.served import Served
from tests.support import Harness, eventually
from tests.web.support import ORIGIN, signed_in

ECHO = 'otherwise:\n  - reply: "You said: {text}"\n'
SLOW = "otherwise:\n  - reply: thinking\n  - sleep: 30\n"


async def hire_scripted(parley: Harness, name: str, rules: str, folder: Path) -> None:
    path = folder / f"{name}.yaml"
    path.write_text(rules)
    await parley.hire(name, brain=f"scripted:{path}")


async def test_said_on_the_page_is_answered_on_the_page(parley: Harness, tmp_path: Path) -> None:
    await hire_scripted(parley, "echo", ECHO, tmp_path)
    async with signed_in(parley) as browser:
        sent = await browser.post("/chat/echo", {"text": "hello <b>world</b>"})
        assert sent.status_code == 303 and sent.headers["location"] == "/chat/echo"

        async def answered() -> bool:
            return (
                "You said: hello &lt;b&gt;world&lt;/b&gt;" in (await browser.get("/chat/echo")).text
            )

        assert await eventually(answered)
        home = await browser.get("/")
        chat = await browser.get("/chat/echo")
    assert 'href="/chat/echo"' in home.text
    assert "<b>world</b>" not in chat.text  # escaped, not markup


async def test_stop_stops_the_turn_and_marks_it(parley: Harness, tmp_path: Path) -> None:
    await hire_scripted(parley, "slow", SLOW, tmp_path)
    async with signed_in(parley) as browser:
        await browser.post("/chat/slow", {"text": "take your time"})

        async def running() -> bool:
            runs = (await parley.owner.get("/api/v1/runs", params={"agent": "slow"})).json()
            return [run["state"] for run in runs["items"]] == ["running"]

        assert await eventually(running)
        assert 'action="/chat/slow/stop"' in (await browser.get("/chat/slow")).text
        stopped = await browser.post("/chat/slow/stop")
        page = await browser.get(stopped.headers["location"])
        again = await browser.post("/chat/slow/stop")
        after = await browser.get("/chat/slow")
    assert "Stopped 1 turn(s)." in page.text
    assert 'class="state state-stopped"' in page.text and "stopped by owner" in page.text
    assert again.status_code == 303 and "Nothing was running." in after.text
    runs = (await parley.owner.get("/api/v1/runs", params={"agent": "slow"})).json()["items"]
    assert [run["state"] for run in runs] == ["stopped"]


async def test_a_person_sees_only_their_own_conversation(parley: Harness, tmp_path: Path) -> None:
    await hire_scripted(parley, "echo", ECHO, tmp_path)
    await parley.owner.post("/api/v1/conversations/echo/messages", json={"text": "owner only"})
    token = await parley.add_person("mia")
    async with signed_in(parley, token) as browser:
        page = await browser.get("/chat/echo")
        home = await browser.get("/")
    assert page.status_code == 200
    assert "owner only" not in page.text and "Nothing said yet." in page.text
    assert "Your conversations" in home.text and "owner only" not in home.text


async def test_bad_text_is_refused_and_nothing_is_said(parley: Harness, tmp_path: Path) -> None:
    await hire_scripted(parley, "echo", ECHO, tmp_path)
    async with signed_in(parley) as browser:
        empty = await browser.post("/chat/echo", {"text": ""})
        nul = await browser.post("/chat/echo", {"text": "a\x00b"})
        long = await browser.post("/chat/echo", {"text": "x" * (MAX_TEXT + 1)})
        nobody = await browser.post("/chat/nobody", {"text": "hi"})
        huge = await browser.http.post(
            "/chat/echo",
            content=b"text=" + b"x" * 2_000_000,
            headers={"Origin": ORIGIN, "Content-Type": "application/x-www-form-urlencoded"},
        )
    assert [empty.status_code, nul.status_code, long.status_code] == [400, 400, 400]
    assert "NUL" in nul.text and "<h1>Not understood</h1>" in empty.text
    assert nobody.status_code == 404 and "no agent named" in nobody.text
    assert huge.status_code == 413
    assert (await parley.owner.get("/api/v1/conversations")).json()["items"] == []


def test_a_live_part_and_a_run_stream_refuse_what_is_not_theirs(served: Served) -> None:
    owner = httpx.Client(
        base_url=served.url, headers={"Authorization": f"Bearer {served.owner_token}"}
    )
    owner.post("/api/v1/agents", json={"name": "slowpoke", "node": "local"})
    said = owner.post("/api/v1/conversations/slowpoke/messages", json={"text": "hi"}).json()
    mia = owner.post("/api/v1/people", json={"name": "mia", "role": "member"}).json()["token"]
    with httpx.Client(base_url=served.url) as browser:
        browser.post("/signin", data={"token": mia}, headers={"Origin": served.url})
        stream = browser.get(f"/runs/{said['run_id']}/stream")
        with browser.stream("GET", "/chat/slowpoke/live") as live:
            first = next(live.iter_lines())
            assert live.headers["content-type"].startswith("text/event-stream")
    assert stream.status_code == 404 and "no run" in stream.text
    assert first == "event: part"
    owner.close()


async def test_the_home_page_lists_a_bounded_first_page_and_opens_any_chat_by_name(
    parley: Harness,
) -> None:
    for number in range(55):
        await parley.hire(f"a{number:02d}")
    async with signed_in(parley) as browser:
        home = await browser.get("/")
        opened = await browser.http.get("/chat", params={"agent": " a54 "})
        unnamed = await browser.get("/chat?agent=")
    assert home.text.count('<li><a href="/chat/a') == 50  # the first 50 by name
    assert 'href="/chat/a49"' in home.text and 'href="/chat/a50"' not in home.text
    assert 'href="/agents?lifecycle=active"' in home.text
    assert opened.status_code == 303 and opened.headers["location"] == "/chat/a54"
    assert unnamed.status_code == 400 and "name the agent" in unnamed.text


async def test_a_stopped_turn_s_words_stay_on_the_page_marked(
    parley: Harness, tmp_path: Path
) -> None:
    await hire_scripted(parley, "slow", SLOW, tmp_path)
    async with signed_in(parley) as browser:
        await browser.post("/chat/slow", {"text": "take your time"})
        runs = (await parley.owner.get("/api/v1/runs", params={"agent": "slow"})).json()
        assert await first_chunk(parley, runs["items"][0]["id"]) == "thinking"
        await browser.post("/chat/slow/stop")

        async def marked() -> str | None:
            page = (await browser.get("/chat/slow")).text
            return page if "what it had said so far is kept" in page else None

        page = await eventually_found(marked)
    assert page is not None
    reply = page.split('class="message kind-reply from-agent"', 1)[1].split("</li>", 1)[0]
    assert '<div class="body">thinking</div>' in reply
    assert (
        '<p class="ended cut-short"><span class="state state-stopped">stopped</span>'
        " — what it had said so far is kept</p>"
    ) in reply


async def test_a_refused_turn_says_on_the_page_that_its_reply_was_not_kept(
    parley: Harness, tmp_path: Path
) -> None:
    rules = "otherwise: [{reply: 'on it'}, {send: {to: nobody, text: hi}}]"
    await hire_scripted(parley, "eager", rules, tmp_path)
    async with signed_in(parley) as browser:
        await browser.post("/chat/eager", {"text": "please"})

        # The page reads its messages and its runs in two statements: on PostgreSQL the run's
        # failure can show before the notice written with it does, so both are waited for.
        async def told() -> str | None:
            page = (await browser.get("/chat/eager")).text
            notice = "eager could not finish this turn: " in page
            return page if notice and "its reply was not kept" in page else None

        page = await eventually_found(told)
    assert page is not None
    assert "kind-reply" not in page  # the reply it streamed is not on the page


async def eventually_found(find: Callable[[], Awaitable[str | None]]) -> str | None:
    found: list[str] = []

    async def check() -> bool:
        if (value := await find()) is not None:
            found.append(value)
        return bool(found)

    return found[-1] if await eventually(check) else None


async def test_a_failed_turn_s_traceback_is_shown_once_folded(
    parley: Harness, tmp_path: Path
) -> None:
    failing = tmp_path / "failing.py"
    failing.write_text(
        "import sys\n"
        "print('Traceback (most recent call last):', file=sys.stderr)\n"
        "for n in range(40):\n"
        "    print(f'  File \"deep.py\", line {n}, in level_{n}', file=sys.stderr)\n"
        "print('RuntimeError: the widget broke', file=sys.stderr)\n"
        "sys.exit(3)\n"
    )
    await parley.hire("fragile", brain=f"command:{sys.executable} {failing}")
    async with signed_in(parley) as browser:
        await browser.post("/chat/fragile", {"text": "try"})

        async def told() -> str | None:
            page = (await browser.get("/chat/fragile")).text
            return page if "could not finish this turn" in page and "state-failed" in page else None

        page = await eventually_found(told)
    assert page is not None
    assert page.count("RuntimeError: the widget broke") == 1  # once, in the notice
    assert page.count("line 39, in level_39") == 1
    assert '<details id="notice-' in page and "why is in its notice" in page


async def test_the_chat_list_shows_each_last_message_and_what_runs_or_failed(
    parley: Harness, tmp_path: Path
) -> None:
    await hire_scripted(parley, "echo", ECHO, tmp_path)
    await hire_scripted(parley, "slow", SLOW, tmp_path)
    await parley.hire("broken", brain=f"command:{sys.executable} -c 'raise SystemExit(2)'")
    async with signed_in(parley) as browser:
        for agent in ("echo", "slow", "broken"):
            await browser.post(f"/chat/{agent}", {"text": f"hello {agent}"})

        async def settled() -> str | None:
            page = (await browser.get("/")).text
            rows = _glances(page)
            done = "state-failed" in rows.get("broken", "") and "state-running" in rows.get(
                "slow", ""
            )
            return page if done and "You said: hello echo" in rows.get("echo", "") else None

        page = await eventually_found(settled)
    assert page is not None
    rows = _glances(page)
    assert "state-running" not in rows["echo"] and "state-failed" not in rows["echo"]
    assert "<strong>echo:</strong> You said: hello echo" in rows["echo"]  # its last message
    assert "hello slow" in rows["slow"]  # the reply is not kept until the turn ends
    assert "state-failed" in rows["broken"]


def _glances(page: str) -> dict[str, str]:
    """Each conversation's line on the home page, by agent."""
    found = {}
    for row in page.split('<li class="glance">')[1:]:
        agent = row.split('href="/chat/')[1].split('"')[0]
        found[agent] = row.split("</li>")[0]
    return found
