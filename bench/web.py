"""The web page's server time: every page of the page (chat, work, team, links, a second page
of each list, filtered lists) at the issue's size (10,000 agents, 100,000 agent conversations),
signed in as an owner and as a member, timed in this process through ``httpx.ASGITransport``.

Run as ``.venv/bin/python bench/web.py [--backend sqlite|postgresql|both] [--fraction 1]
[--repeat 100] [--pages /,/tasks,...]``. Progress goes to stderr, the table to stdout; the exit
status is 1 when a page misses its target (p99 ≤ 50 ms) or answers an error.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import html
import re
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx

if not __package__:  # run as a script: make ``bench`` importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bulk import Filled, Size, fill, token_of
from bench.figures import Figures
from bench.harness import fresh_database, serving
from parley.store import Store

TARGET_MS = 50.0
ORIGIN = "http://parley"
OLDER = re.compile(r'<a href="([^"]*[?&](?:amp;)?before=[^"]*)"[^>]*>Older</a>')
TITLE = re.compile(r"<title>([^<]*)</title>")
LISTS = ["/tasks", "/runs", "/turns", "/agents", "/nodes", "/people", "/connections", "/channels",
         "/a2a-access"]  # fmt: skip
FILTERED = ["/tasks?status=open", "/agents?lifecycle=active", "/runs?state=finished"]


@dataclass(frozen=True)
class Line:
    page: str
    viewer: str  # "owner" or "member"
    status: int
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    note: str = ""  # what an error said

    @property
    def missed(self) -> bool:
        return self.status == 200 and self.p99_ms > TARGET_MS

    @property
    def error(self) -> bool:
        return self.status not in (200, 403, 404)  # 403: a page for owners only


def pages(filled: Filled) -> dict[str, str]:
    """Each page by its route, with real ids: a member's root and its agent, a conversation of
    that member."""
    root = filled.roots[0]
    member = filled.root_people[root]
    agent_id = next(agent for person, agent in filled.conversations if person == member)
    agent = filled.agent_names[agent_id - filled.first_agent_id]
    root_agent = filled.agent_names[filled.root_agents[root] - filled.first_agent_id]
    found = {"/": "/", "/chat/{agent}": f"/chat/{agent}"}
    found |= {"/tasks": "/tasks", "/tasks/{id}": f"/tasks/{root}", "/roots/{id}": f"/roots/{root}"}
    found |= {"/runs/{id}": f"/runs/{filled.root_runs[root]}"}  # the run inspector
    found |= {page: page for page in LISTS[1:4]} | {"/agents/{name}": f"/agents/{root_agent}"}
    found |= {"/nodes/{name}/exchanges": "/nodes/local/exchanges"}  # the node, its engram form
    return found | {page: page for page in LISTS[4:] + FILTERED}


@contextlib.asynccontextmanager
async def filled_store(
    backend: str, fraction: float, work: Path
) -> AsyncIterator[tuple[str, Filled]]:
    """A fresh store filled by ``bulk.py`` (closed again, for the app to open): its URL and
    what is in it."""
    async with fresh_database(backend, work) as url:
        store = await Store.open(url)
        try:
            started = time.perf_counter()
            filled = await fill(store, Size.of(fraction))
        finally:
            await store.close()
        rows = ", ".join(f"{n:,} {name}" for name, n in filled.rows.items())
        _progress(
            f"{backend} x{fraction}: filled in {time.perf_counter() - started:.0f} s ({rows})"
        )
        yield url, filled


@contextlib.asynccontextmanager
async def signed_in(transport: httpx.ASGITransport, token: str) -> AsyncIterator[httpx.AsyncClient]:
    """A browser's client with the session cookie of ``token``."""
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN, timeout=60) as client:
        answer = await client.post(
            "/signin", data={"token": token, "then": "/"}, headers={"Origin": ORIGIN}
        )
        if answer.status_code != 303 or "parley_session" not in client.cookies:
            raise RuntimeError(f"sign-in refused: {answer.status_code} {answer.text[:200]}")
        yield client


def older(page: str, body: str) -> str | None:
    """The list's second page: where its "Older" link goes."""
    found = OLDER.search(body)
    if found is None:
        return None
    link = html.unescape(found.group(1))
    return link if link.startswith("/") else page.split("?", 1)[0] + link


async def time_pages(
    browsers: dict[str, httpx.AsyncClient], paths: list[str], repeat: int
) -> list[Line]:
    """One untimed GET of each page per viewer (which also finds each list's second page), then
    ``repeat`` rounds over all of them, so that the machine's other load falls on all alike. A
    page that fails (a status, or an exception out of the app) is not timed further."""
    status: dict[tuple[str, str], tuple[int, str]] = {}
    timed: dict[tuple[str, str], list[float]] = {}
    for viewer, client in browsers.items():
        for path in paths:
            code, body = status[path, viewer] = await _get(client, path)
            if code != 200:
                continue
            timed[path, viewer] = []
            second = older(path, body) if path in LISTS else None
            if second is not None:
                status[second, viewer] = await _get(client, second)
                if status[second, viewer][0] == 200:
                    timed[second, viewer] = []
    for n in range(repeat):
        for (path, viewer), times in list(timed.items()):
            started = time.perf_counter()
            code, body = await _get(browsers[viewer], path)
            times.append(time.perf_counter() - started)
            if code != 200:
                status[path, viewer] = (code, f"round {n + 1}: {body}")
                del timed[path, viewer]
        if n % 10 == 9:
            _progress(f"  round {n + 1}/{repeat}")
    lines = []
    for path in dict.fromkeys(path for path, _ in status):  # a page's viewers side by side
        for viewer in browsers:
            if (path, viewer) in timed:
                figures = Figures.of(timed[path, viewer], sum(timed[path, viewer]), 1)
                lines.append(Line(path, viewer, 200, figures.p50_ms, figures.p99_ms))
            elif (path, viewer) in status:
                code, body = status[path, viewer]
                lines.append(Line(path, viewer, code, note=body if code not in (403, 404) else ""))
    return lines


async def _get(client: httpx.AsyncClient, path: str) -> tuple[int, str]:
    """The status and body of a GET; an exception out of the app is a 500 with its message."""
    try:
        answer = await client.get(path)
    except Exception as error:  # a page under construction: reported, the rest go on
        return 500, f"{type(error).__name__}: {error}"
    if answer.status_code != 200:
        title = TITLE.search(answer.text)
        return answer.status_code, (title.group(1) if title else answer.text[:120]).strip()
    return 200, answer.text


async def measure(backend: str, fraction: float, repeat: int, chosen: list[str]) -> list[Line]:
    with tempfile.TemporaryDirectory(prefix="parley-web-") as tmp:
        work = Path(tmp)
        async with filled_store(backend, fraction, work) as (url, filled):
            root = filled.roots[0]
            member = filled.root_people[root]
            paths = [
                path
                for route, path in pages(filled).items()
                if not chosen or route in chosen or route.split("?")[0] in chosen
            ]
            async with (
                serving(url, work, token_of(filled.owner.id)) as running,
                signed_in(running.transport, token_of(filled.owner.id)) as owner,
                signed_in(running.transport, token_of(member)) as as_member,
            ):
                _progress(f"{backend}: timing {len(paths)} pages x2 viewers, {repeat} rounds")
                return await time_pages({"owner": owner, "member": as_member}, paths, repeat)


def report(backend: str, size: Size, lines: list[Line]) -> bool:
    """The table of one backend; whether every page there met its target."""
    print(f"\n## {backend}: {size.label}\n")
    print(f"| page | as | p50 ms | p99 ms | target ≤ {TARGET_MS:.0f} ms |")
    print("|---|---|---:|---:|---|")
    for line in lines:
        if line.status == 200:
            verdict = "!" if line.missed else "met"
            print(
                f"| `{line.page}` | {line.viewer} | {line.p50_ms:.1f} | {line.p99_ms:.1f} |"
                f" {verdict} |"
            )
        elif line.status == 404:
            print(f"| `{line.page}` | {line.viewer} | - | - | not there |")
        elif line.status == 403:
            print(f"| `{line.page}` | {line.viewer} | - | - | refused (owners only) |")
        else:
            note = line.note.replace("|", "/")[:120]
            print(f"| `{line.page}` | {line.viewer} | - | - | ! error {line.status}: {note} |")
    return not any(line.missed or line.error for line in lines)


async def main(args: argparse.Namespace) -> int:
    backends = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    chosen = [p for p in args.pages.split(",") if p] if args.pages else []
    met = True
    for backend in backends:
        lines = await measure(backend, args.fraction, args.repeat, chosen)
        met &= report(backend, Size.of(args.fraction), lines)
    print(f"\ntarget: every page's p99 ≤ {TARGET_MS:.0f} ms — {'met' if met else 'NOT met'}")
    return 0 if met else 1


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="sqlite")
    parser.add_argument("--fraction", type=float, default=1.0, help="size, as the issue's x")
    parser.add_argument(
        "--repeat",
        type=int,
        default=100,
        help="timed GETs per page and viewer (with fewer than 100, p99 is the slowest one)",
    )
    parser.add_argument(
        "--pages", default="", help="only these pages, comma-separated (/tasks,/agents/{name})"
    )
    return parser.parse_args()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(_arguments())))
