from __future__ import annotations

from pathlib import Path

from tests.runs.support import get, say_and_wait, script
from tests.support import Harness, oldest_first


async def test_a_scripted_agent_replies_in_the_conversation(
    parley: Harness, tmp_path: Path
) -> None:
    brain = script(
        tmp_path,
        "greeter",
        """
        rules:
          - when: {text: "hello"}
            do:
              - reply: "hi {sender}, you said {text}"
    """,
    )
    await parley.hire("greeter", brain=brain)
    end = await say_and_wait(parley, "greeter", "hello there")
    assert end["state"] == "finished", end
    assert end["output"] == "hi owner, you said hello there"
    shown = await get(parley.owner, "/conversations/greeter")
    assert [m["body"] for m in oldest_first(shown["messages"])] == [
        "hello there",
        "hi owner, you said hello there",
    ]
