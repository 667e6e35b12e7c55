"""The fake homeserver itself, spoken to by a plain mautrix client (no Parley): it checks the
token, dedups transaction ids per token, long-polls, and fails as planned."""

from __future__ import annotations

import aiohttp
import pytest
from mautrix.api import HTTPAPI
from mautrix.client import ClientAPI
from mautrix.errors import MForbidden, MUnknownToken
from mautrix.types import EventType, RoomID, SyncToken, TextMessageEventContent, UserID

from tests.channels.matrix.fake_matrix import BOT, FakeMatrix


async def client_of(fake: FakeMatrix, session: aiohttp.ClientSession, token: str) -> ClientAPI:
    return ClientAPI(UserID(BOT), api=HTTPAPI(fake.url, token, client_session=session))


async def test_it_checks_the_token_and_dedups_transactions(fake_matrix: FakeMatrix) -> None:
    room = RoomID(fake_matrix.room.room_id)
    text = TextMessageEventContent(body="hi")
    async with aiohttp.ClientSession() as session:
        bad = await client_of(fake_matrix, session, "wrong")
        with pytest.raises(MUnknownToken):
            await bad.whoami()
        good = await client_of(fake_matrix, session, fake_matrix.token)
        assert (await good.whoami()).user_id == BOT
        first = await good.send_message_event(room, EventType.ROOM_MESSAGE, text, txn_id="t1")
        again = await good.send_message_event(room, EventType.ROOM_MESSAGE, text, txn_id="t1")
        assert first == again and fake_matrix.texts(room) == ["hi"]
        fake_matrix.kick(room)
        with pytest.raises(MForbidden):
            await good.send_message_event(room, EventType.ROOM_MESSAGE, text, txn_id="t2")


async def test_it_long_polls_and_shows_what_changed(fake_matrix: FakeMatrix) -> None:
    room = fake_matrix.room.room_id
    async with aiohttp.ClientSession() as session:
        good = await client_of(fake_matrix, session, fake_matrix.token)
        initial = await good.sync(timeout=0)
        assert room in initial["rooms"]["join"]
        nothing = await good.sync(since=SyncToken(initial["next_batch"]), timeout=10)
        assert nothing["rooms"] == {}
        await fake_matrix.user_says(room, "ada", "hello")
        news = await good.sync(since=SyncToken(nothing["next_batch"]), timeout=1000)
        (event,) = news["rooms"]["join"][room]["timeline"]["events"]
        assert (event["sender"], event["content"]["body"]) == (fake_matrix.user("ada"), "hello")
