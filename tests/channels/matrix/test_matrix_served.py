"""``parley serve`` as a separate process, pointed at the fake homeserver by its settings alone
(a ``parley.toml``, as an operator points it at a self-hosted homeserver): set up with the CLI,
a person's message in a room reaches the agent over /sync, and its answer comes back there; the
account's state reads connected, its token never shown."""

from __future__ import annotations

from pathlib import Path

from tests.channels.fake_loop import FakeOnItsOwnLoop
from tests.channels.matrix.fake_matrix import BOT, FakeMatrix
from tests.cli.test_serve import cli
from tests.cli.test_server_killed import server


def test_a_served_parley_speaks_to_the_homeserver_its_settings_name(tmp_path: Path) -> None:
    driver = FakeOnItsOwnLoop(FakeMatrix())
    with driver.running() as fake:
        (tmp_path / "parley.toml").write_text(
            "[channels.matrix]\n"
            f'homeserver_url = "{fake.url}"\n'
            "accounts_poll_seconds = 0.2\nsync_timeout_seconds = 0.5\n"
        )
        (tmp_path / "matrix-token").write_text(f"{fake.token}\n")
        with server(tmp_path) as served:
            served.cli("agent", "hire", "scribe", "--node", "local")
            served.cli(
                "channel", "account", "add", "matrix", BOT,
                "--default-agent", "scribe", "--token-file", str(tmp_path / "matrix-token"),
            )  # fmt: skip
            linked = cli(tmp_path, served.port, "channel", "identity", "link", "matrix", BOT,
                         fake.user("ada"), "owner")  # fmt: skip
            assert linked.returncode == 0, linked.stderr
            # past its first sync (whose history it skips): what is said now is heard
            driver.until(lambda: any(c.route == "sync" and c.since for c in fake.calls))
            room = fake.room.room_id
            driver.do(lambda: fake.user_says(room, "ada", "hello from afar"))
            driver.until(lambda: any("I heard: hello from afar" in t for t in fake.texts(room)))
            listed = cli(tmp_path, served.port, "channel", "account", "list")
            (account,) = served.cli("channel", "account", "list")
    assert (account["channel"], account["state"], account["has_token"]) == (
        "matrix",
        "connected",
        True,
    )
    assert account["last_outbound_at"] is not None
    assert fake.token not in listed.stdout + listed.stderr
