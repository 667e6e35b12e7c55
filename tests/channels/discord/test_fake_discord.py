"""A real discord.py client against the fake: login, messages, threads, webhooks, slash commands,
token rotation, reconnects and rate limits, asserted on what the fake recorded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import aiohttp
import discord
import pytest

from tests.channels.discord.bot_harness import Bot, running
from tests.channels.discord.fake_discord import HANG_GUARD, FakeDiscord, pointed_at

MESSAGES = "/channels/{channel_id}/messages"


@pytest.fixture(autouse=True)
def _plain_clients_dial_the_fake(fake_discord: FakeDiscord) -> Iterator[None]:
    with pointed_at(fake_discord):
        yield


def _text_channel(bot: Bot, fake: FakeDiscord) -> discord.TextChannel:
    channel = bot.get_channel(fake.channel.id)
    assert isinstance(channel, discord.TextChannel)
    return channel


async def test_logs_in_over_the_gateway_and_sees_the_guild(fake_discord: FakeDiscord) -> None:
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord):
        assert bot.user is not None and bot.user.id == fake_discord.state.bot.id
        assert bot.application_id == fake_discord.state.application_id
        assert _text_channel(bot, fake_discord).name == "general"
    assert fake_discord.gateway.identifies == 1
    login = [(c.method, c.route, c.token, c.status) for c in fake_discord.state.calls[:2]]
    assert login == [
        ("GET", "/users/@me", fake_discord.token, 200),
        ("GET", "/oauth2/applications/@me", fake_discord.token, 200),
    ]


async def test_a_channel_added_while_connected_reaches_the_bot(fake_discord: FakeDiscord) -> None:
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord):
        added = await fake_discord.add_text_channel("agents")
        await bot.until(lambda: bot.get_channel(added.id) is not None)
        await bot.get_partial_messageable(added.id).send("first")
    assert fake_discord.state.texts(added.id) == ["first"]


async def test_sees_a_users_message_and_replies(fake_discord: FakeDiscord) -> None:
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord):
        said = await fake_discord.user_says(fake_discord.channel.id, "ada", "hello bot")
        heard = await bot.message_where(lambda m: m.id == said.id)
        assert (heard.content, heard.author.name, heard.webhook_id) == ("hello bot", "ada", None)

        reply = await heard.reply("hello ada")
        # Discord echoes the bot's own message back over the gateway, as it does for all.
        echoed = await bot.message_where(lambda m: m.id == reply.id)
        assert echoed.author == bot.user
        assert echoed.reference is not None and echoed.reference.message_id == said.id

    recorded = fake_discord.state.messages[fake_discord.channel.id]
    assert [(m.author.username, m.content) for m in recorded] == [
        ("ada", "hello bot"),
        ("parley-bot", "hello ada"),
    ]
    assert recorded[1].reply_to == said.id


async def test_without_the_message_content_intent_text_is_blank(fake_discord: FakeDiscord) -> None:
    bot = Bot(message_content=False)
    async with running(bot, fake_discord.token, fake_discord):
        said = await fake_discord.user_says(fake_discord.channel.id, "ada", "secret")
        heard = await bot.message_where(lambda m: m.id == said.id)
    assert heard.content == ""


async def test_creates_threads_posts_in_them_archives_and_deletes(
    fake_discord: FakeDiscord,
) -> None:
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord):
        channel = _text_channel(bot, fake_discord)
        thread = await channel.create_thread(name="task 7", type=discord.ChannelType.public_thread)
        await thread.send("working on it")
        said = await fake_discord.user_says(thread.id, "ada", "in the thread")
        heard = await bot.message_where(lambda m: m.id == said.id)
        assert heard.channel.id == thread.id and bot.get_channel(thread.id) is not None

        starter = await channel.send("start here")
        from_message = await starter.create_thread(name="from a message")
        assert from_message.id == starter.id

        # discord.py drops a thread from its cache when THREAD_UPDATE says it is archived,
        # and when THREAD_DELETE says it is gone.
        await thread.edit(archived=True)
        await bot.until(lambda: bot.get_channel(thread.id) is None)
        await bot.until(lambda: bot.get_channel(from_message.id) is not None)
        await from_message.delete()
        await bot.until(lambda: bot.get_channel(from_message.id) is None)

    fake = fake_discord.state
    assert fake.channels[thread.id].archived
    assert [(t.name, t.parent_id) for t in fake.threads()] == [("task 7", fake_discord.channel.id)]
    assert fake.texts(thread.id) == ["working on it", "in the thread"]
    assert from_message.id in fake.deleted_channels
    assert fake.texts(fake_discord.channel.id) == ["start here"]


async def test_posting_in_an_archived_thread_reopens_it(fake_discord: FakeDiscord) -> None:
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord):
        thread = await _text_channel(bot, fake_discord).create_thread(name="old")
        await thread.edit(archived=True)
        await thread.send("back again")
    assert not fake_discord.state.channels[thread.id].archived


async def test_a_webhook_persona_posts_and_is_flagged_as_a_webhook(
    fake_discord: FakeDiscord,
) -> None:
    bot = Bot()
    avatar = "https://example.invalid/scribe.png"
    async with running(bot, fake_discord.token, fake_discord):
        channel = _text_channel(bot, fake_discord)
        webhook = await channel.create_webhook(name="parley")
        thread = await channel.create_thread(name="minutes")
        sent = await webhook.send("minutes are up", username="scribe", avatar_url=avatar, wait=True)
        in_thread = await webhook.send("and here", username="scribe", thread=thread, wait=True)
        heard = await bot.message_where(lambda m: m.id == sent.id)
        listed = await channel.webhooks()

    assert heard.webhook_id == webhook.id and heard.author.name == "scribe"
    assert [w.id for w in listed] == [webhook.id]
    recorded = fake_discord.state.messages[fake_discord.channel.id][-1]
    assert (recorded.webhook_id, recorded.persona_username, recorded.persona_avatar_url) == (
        webhook.id,
        "scribe",
        avatar,
    )
    assert fake_discord.state.texts(thread.id) == ["and here"]
    assert in_thread.channel.id == thread.id
    # Executing a webhook carries its own token in the path, never the bot's.
    executes = fake_discord.state.calls_to("POST", "/webhooks/{webhook_id}/{webhook_token}")
    assert [c.token for c in executes] == [None, None]


async def test_foreign_webhook_and_system_messages_reach_the_bot_flagged(
    fake_discord: FakeDiscord,
) -> None:
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord):
        hooked = await fake_discord.user_says(
            fake_discord.channel.id, "someone's hook", "ping", webhook_id=4242
        )
        system = await fake_discord.user_says(fake_discord.channel.id, "ada", "", type=7)
        from_hook = await bot.message_where(lambda m: m.id == hooked.id)
        joined = await bot.message_where(lambda m: m.id == system.id)
    assert from_hook.webhook_id == 4242 and from_hook.author.name == "someone's hook"
    assert joined.type is discord.MessageType.new_member and joined.is_system()


async def test_answers_a_slash_command_with_a_callback_and_a_followup(
    fake_discord: FakeDiscord,
) -> None:
    bot = Bot()

    @bot.tree.command(name="ask", description="Ask the agents")
    async def ask(interaction: discord.Interaction, question: str, urgent: bool) -> None:
        await interaction.response.send_message(f"asked: {question} ({urgent})")
        await interaction.followup.send("more soon")

    async with running(bot, fake_discord.token, fake_discord):
        synced = await bot.tree.sync()
        assert [c.name for c in synced] == ["ask"]
        interaction = await fake_discord.user_runs_command(
            fake_discord.channel.id, "ada", "ask", {"question": "why", "urgent": True}
        )
        await fake_discord.wait_until(lambda: len(fake_discord.state.replies) == 2)

    callback, followup = fake_discord.state.replies
    assert (callback.interaction_id, callback.kind, callback.type) == (
        interaction.id,
        "callback",
        4,
    )
    assert callback.data["content"] == "asked: why (True)"
    assert (followup.kind, followup.data["content"]) == ("followup", "more soon")
    answers = fake_discord.state.messages[fake_discord.channel.id]
    assert [(m.content, m.webhook_id) for m in answers] == [
        ("asked: why (True)", fake_discord.state.application_id),
        ("more soon", fake_discord.state.application_id),
    ]


async def test_guild_commands_sync_to_the_guild(fake_discord: FakeDiscord) -> None:
    bot = Bot()
    guild = discord.Object(fake_discord.guild.id)

    @bot.tree.command(name="focus", description="Bind this thread", guild=guild)
    async def focus(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("focused", ephemeral=True)

    async with running(bot, fake_discord.token, fake_discord):
        await bot.tree.sync(guild=guild)
        await fake_discord.user_runs_command(fake_discord.channel.id, "ada", "focus")
        await fake_discord.wait_until(lambda: len(fake_discord.state.replies) == 1)
    (command,) = fake_discord.state.commands.values()
    assert command.guild_id == fake_discord.guild.id
    assert fake_discord.state.replies[0].data["flags"] == 64
    # An ephemeral answer is shown to its user only: nothing lands in the channel.
    assert fake_discord.state.texts(fake_discord.channel.id) == []


async def test_rotation_invalidates_the_old_token_at_once(fake_discord: FakeDiscord) -> None:
    old = fake_discord.token
    bot = Bot()
    async with running(bot, old, fake_discord):
        new = await fake_discord.rotate_token(end_sessions=False)
        with pytest.raises(discord.HTTPException) as refused:
            await _text_channel(bot, fake_discord).send("with the old token")
    assert refused.value.status == 401

    refused_bot = Bot()
    try:
        with pytest.raises(discord.LoginFailure):
            await refused_bot.login(old)
    finally:
        await refused_bot.close()  # its HTTP session, which a refused login leaves open

    renewed = Bot()
    async with running(renewed, new, fake_discord):
        await _text_channel(renewed, fake_discord).send("with the new token")
    last = fake_discord.state.calls_to("POST", MESSAGES)
    assert [(c.token, c.status) for c in last] == [(old, 401), (new, 200)]
    assert fake_discord.state.texts(fake_discord.channel.id) == ["with the new token"]


async def test_rotation_ends_the_old_tokens_gateway_session(fake_discord: FakeDiscord) -> None:
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord) as connection:
        await fake_discord.rotate_token()
        with pytest.raises(discord.ConnectionClosed) as closed:
            await asyncio.wait_for(connection, HANG_GUARD)
    assert closed.value.code == 4004


async def test_identify_with_a_wrong_token_closes_the_gateway_with_4004(
    fake_discord: FakeDiscord,
) -> None:
    async with (
        aiohttp.ClientSession() as session,
        session.ws_connect(fake_discord.gateway.url) as socket,
    ):
        hello = await socket.receive_json()
        await socket.send_json({"op": 2, "d": {"token": "wrong", "intents": 1}})
        closing = await socket.receive()
    assert hello["op"] == 10
    assert (closing.type, closing.data) == (aiohttp.WSMsgType.CLOSE, 4004)


async def test_resumes_after_the_gateway_drops_and_gets_what_it_missed(
    fake_discord: FakeDiscord,
) -> None:
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord):
        await fake_discord.drop_gateway()
        said = await fake_discord.user_says(fake_discord.channel.id, "ada", "while you were out")
        heard = await bot.message_where(lambda m: m.id == said.id)
    assert heard.content == "while you were out"
    assert (fake_discord.gateway.identifies, fake_discord.gateway.resumes) == (1, 1)


async def test_identifies_again_when_resume_is_refused(fake_discord: FakeDiscord) -> None:
    fake_discord.refuse_resume = True
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord):
        await fake_discord.drop_gateway()
        await fake_discord.wait_until(lambda: fake_discord.gateway.identifies == 2)
        said = await fake_discord.user_says(fake_discord.channel.id, "ada", "welcome back")
        heard = await bot.message_where(lambda m: m.id == said.id)
    assert heard.content == "welcome back"
    assert fake_discord.gateway.resumes == 0


async def test_backs_off_on_429_then_succeeds(fake_discord: FakeDiscord) -> None:
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord):
        fake_discord.fail_next("POST", MESSAGES, status=429, times=2, retry_after=0.01)
        await _text_channel(bot, fake_discord).send("eventually")
    assert [c.status for c in fake_discord.state.calls_to("POST", MESSAGES)] == [429, 429, 200]
    assert fake_discord.state.texts(fake_discord.channel.id) == ["eventually"]


async def test_retries_a_server_error(fake_discord: FakeDiscord) -> None:
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord):
        fake_discord.fail_next("POST", MESSAGES, status=502)
        await _text_channel(bot, fake_discord).send("after a hiccup")
    assert [c.status for c in fake_discord.state.calls_to("POST", MESSAGES)] == [502, 200]


@pytest.mark.parametrize(("status", "error"), [(403, discord.Forbidden), (404, discord.NotFound)])
async def test_permanent_errors_are_not_retried(
    fake_discord: FakeDiscord, status: int, error: type[discord.HTTPException]
) -> None:
    bot = Bot()
    async with running(bot, fake_discord.token, fake_discord):
        path = f"/channels/{fake_discord.channel.id}/messages"
        fake_discord.fail_next("POST", path, status=status)
        with pytest.raises(error):
            await _text_channel(bot, fake_discord).send("refused")
    assert [c.status for c in fake_discord.state.calls_to("POST", MESSAGES)] == [status]
    assert fake_discord.state.texts(fake_discord.channel.id) == []


async def test_rest_answers_bad_input_with_discord_errors(fake_discord: FakeDiscord) -> None:
    headers = {"Authorization": f"Bot {fake_discord.token}", "Content-Type": "application/json"}
    base = fake_discord.url + "/api/v10"
    async with aiohttp.ClientSession(headers=headers) as http:
        empty = await http.post(f"{base}/channels/{fake_discord.channel.id}/messages", data="{}")
        unknown = await http.post(f"{base}/channels/1/messages", data=json.dumps({"content": "x"}))
        unspoken = await http.get(f"{base}/guilds/{fake_discord.guild.id}/audit-logs")
        not_an_id = await http.get(f"{base}/channels/general")
        gateway = await http.get(f"{base}/gateway/bot")
        answers = [
            (empty.status, (await empty.json())["code"]),
            (unknown.status, (await unknown.json())["code"]),
            (unspoken.status, (await unspoken.json())["code"]),
            (not_an_id.status, (await not_an_id.json())["code"]),
        ]
        assert (await gateway.json())["url"] == fake_discord.gateway.url
    assert answers == [(400, 50006), (404, 10003), (404, 0), (400, 50035)]
    assert [c.status for c in fake_discord.state.calls] == [400, 404, 404, 400, 200]
