"""What every model brain must do, checked against a fake provider speaking its real protocol.

Each provider's test module subclasses ``BrainContract`` and says how to build its brain and how
to read its wire format; the behaviour checked is the same.
"""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from bench.ports import free_port
from parley.brains.brain import Brain, Said
from parley.brains.model_brain import MAX_REQUESTS
from parley.errors import Conflict, Unavailable
from tests.brains.fakes import Fake, Reply, ToolCall
from tests.brains.support import Chunks, RecordingActions, a_turn

Body = dict[str, Any]
SEND_BOB = ToolCall("send", {"to": "bob", "text": "what are the Q3 numbers?"})


class BrainContract:
    provider: ClassVar[str]
    model: ClassVar[str]
    # The URL path a base URL gets for this provider's SDK ("/v1" for OpenAI, "" for Anthropic).
    url_suffix: ClassVar[str]

    def brain(self, base_url: str, api_key: str | None = "sk-test") -> Brain:
        raise NotImplementedError

    # How this provider's request bodies say things.
    def system_of(self, body: Body) -> str:
        raise NotImplementedError

    def conversation_of(self, body: Body) -> list[tuple[str, str]]:
        """(role, text) of each user or assistant text, with "user"/"assistant" roles."""
        raise NotImplementedError

    def tools_of(self, body: Body) -> dict[str, Body]:
        """Each offered tool's name and its parameters' JSON schema."""
        raise NotImplementedError

    def tool_results_of(self, body: Body) -> list[str]:
        raise NotImplementedError

    async def test_text_streams_in_chunks_and_is_the_reply(self, fake: Fake) -> None:
        fake.script.replies = [Reply(text="Hello Carol, I will ask Bob.")]
        chunks = Chunks()
        outcome = await self.brain(fake.url).think(a_turn(), RecordingActions(), chunks)
        assert len(chunks.pieces) > 1
        assert "".join(chunks.pieces) == "Hello Carol, I will ask Bob."
        assert outcome.reply == "Hello Carol, I will ask Bob."
        [body] = fake.script.bodies
        assert body["model"] == self.model and body["stream"] is True

    async def test_sends_engram_root_history_and_new_text(self, fake: Fake) -> None:
        fake.script.replies = [Reply(text="ok")]
        history = [Said("carol", "hi"), Said("alice", "hello carol"), Said("bob", "numbers soon")]
        turn = a_turn(history=history, was_stopped=True)
        await self.brain(fake.url).think(turn, RecordingActions(), Chunks())
        [body] = fake.script.bodies
        system = self.system_of(body)
        assert "You are Alice, a careful researcher." in system
        assert "carol's conversation in #research" in system
        assert "bob prefers short answers" in system
        conversation = self.conversation_of(body)
        assert conversation[:3] == [
            ("user", "carol: hi"),
            ("assistant", "hello carol"),
            ("user", "bob: numbers soon"),
        ]
        role, last = conversation[-1]
        assert role == "user"
        assert "previous turn was stopped by a person" in last
        assert "carol: please ask bob for the numbers" in last

    async def test_offers_the_runs_tools_with_their_parameters(self, fake: Fake) -> None:
        fake.script.replies = [Reply(text="ok")]
        turn = a_turn(tools=("send", "spawn", "report"))
        await self.brain(fake.url).think(turn, RecordingActions(), Chunks())
        tools = self.tools_of(fake.script.bodies[0])
        assert sorted(tools) == ["report", "send", "spawn"]
        assert tools["send"]["required"] == ["to", "text"]
        assert tools["spawn"]["properties"]["thread"]["type"] == "boolean"
        assert tools["spawn"]["required"] == ["agent", "text"]

    async def test_says_which_places_every_member_reads(self, fake: Fake) -> None:
        # Whatever the turn answers for (here a person's own conversation), what
        # it puts into a subtask, its memory or a node question is shared.
        fake.script.replies = [Reply(text="ok"), Reply(text="ok")]
        await self.brain(fake.url).think(a_turn(), RecordingActions(), Chunks())
        node_session = a_turn(tools=("send", "remember", "ask_node"))
        await self.brain(fake.url).think(node_session, RecordingActions(), Chunks())
        agents, nodes = (self.system_of(body) for body in fake.script.bodies)
        assert (
            "Shared places: a subtask's text, your memory and questions to a node are read by"
            " every member of this installation, whoever this turn answers for." in agents
        )
        assert "Shared places: your memory and questions to a node are read by every" in nodes
        assert "remember(note): add a note to your own long-term memory, which every" in agents

    async def test_a_tool_call_acts_and_its_result_goes_back(self, fake: Fake) -> None:
        fake.script.replies = [Reply(text="Asking Bob.", calls=(SEND_BOB,)), Reply(text="Asked.")]
        actions = RecordingActions()
        outcome = await self.brain(fake.url).think(a_turn(), actions, Chunks())
        assert actions.calls == [("send", {"to": "bob", "text": "what are the Q3 numbers?"})]
        assert self.tool_results_of(fake.script.bodies[1]) == ["send done (#1)"]
        assert ("assistant", "Asking Bob.") in self.conversation_of(fake.script.bodies[1])
        assert outcome.reply == "Asked."

    async def test_a_refused_action_is_told_to_the_model_and_the_turn_goes_on(
        self, fake: Fake
    ) -> None:
        report = ToolCall("report", {"text": "bob is retired"})
        fake.script.replies = [
            Reply(calls=(SEND_BOB,)),
            Reply(calls=(report,)),
            Reply(text="Told Carol."),
        ]
        actions = RecordingActions(refusals={"send": Conflict("agent bob is retired")})
        outcome = await self.brain(fake.url).think(a_turn(), actions, Chunks())
        assert self.tool_results_of(fake.script.bodies[1]) == ["refused: agent bob is retired"]
        assert [name for name, _ in actions.calls] == ["send", "report"]
        assert outcome.reply == "Told Carol."

    async def test_tools_outside_the_run_are_refused_without_acting(self, fake: Fake) -> None:
        calls = (ToolCall("ask_node", {"node": "n1", "text": "hi"}), ToolCall("send", {"to": 3}))
        fake.script.replies = [Reply(calls=calls), Reply(text="ok")]
        actions = RecordingActions()
        await self.brain(fake.url).think(a_turn(tools=("send",)), actions, Chunks())
        assert actions.calls == []
        first, second = self.tool_results_of(fake.script.bodies[1])
        assert first == "refused: there is no tool 'ask_node'; the tools are send"
        assert second == "refused: send needs text"

    async def test_a_tool_call_with_a_nul_byte_is_refused_without_acting(self, fake: Fake) -> None:
        nul = ToolCall("send", {"to": "bob", "text": "a\x00b"})
        fake.script.replies = [Reply(calls=(nul,)), Reply(text="ok")]
        actions = RecordingActions()
        await self.brain(fake.url).think(a_turn(), actions, Chunks())
        assert actions.calls == []
        assert self.tool_results_of(fake.script.bodies[1]) == [
            "refused: send: text contains a NUL byte (\\x00); Parley keeps no text with one"
        ]

    async def test_a_model_that_never_stops_calling_tools_is_cut_off(self, fake: Fake) -> None:
        step = [Reply(text=f"step {i}", calls=(SEND_BOB,)) for i in range(MAX_REQUESTS + 5)]
        fake.script.replies = step
        actions = RecordingActions()
        outcome = await self.brain(fake.url).think(a_turn(), actions, Chunks())
        assert len(fake.script.bodies) == MAX_REQUESTS
        assert len(actions.calls) == MAX_REQUESTS
        assert outcome.reply == f"step {MAX_REQUESTS - 1}"

    async def test_a_server_error_is_unavailable_naming_provider_url_and_model(
        self, fake: Fake
    ) -> None:
        fake.script.replies = [Reply(text="the GPUs are on fire", status=500)]
        with pytest.raises(Unavailable) as raised:
            await self.brain(fake.url).think(a_turn(), RecordingActions(), Chunks())
        message = raised.value.message
        for words in (self.provider, fake.url, repr(self.model), "HTTP 500", "GPUs are on fire"):
            assert words in message

    async def test_a_refused_key_quoted_back_by_the_provider_is_redacted(self, fake: Fake) -> None:
        key = "local-key-3f9a1c77e2"  # no known shape: only the configured value gives it away
        fake.script.replies = [Reply(text="Incorrect API key provided: {key}", status=401)]
        with pytest.raises(Unavailable) as raised:
            await self.brain(fake.url, key).think(a_turn(), RecordingActions(), Chunks())
        assert key in str(fake.script.headers[0])  # it was sent, and quoted back
        message = raised.value.message
        assert "HTTP 401" in message and "Incorrect API key provided: [redacted]" in message
        assert key not in message

    async def test_a_garbled_answer_is_unavailable(self, fake: Fake) -> None:
        fake.script.replies = [Reply(raw="<html>Please log in to the proxy</html>")]
        with pytest.raises(Unavailable, match=self.provider):
            await self.brain(fake.url).think(a_turn(), RecordingActions(), Chunks())

    async def test_an_unreachable_server_is_unavailable(self) -> None:
        url = f"http://127.0.0.1:{free_port()}{self.url_suffix}"
        with pytest.raises(Unavailable) as raised:
            await self.brain(url).think(a_turn(), RecordingActions(), Chunks())
        assert url in raised.value.message
        assert "connect" in raised.value.message.lower()
