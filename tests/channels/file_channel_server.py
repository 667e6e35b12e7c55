"""A real Parley server process with one more channel adapter, ``file``: it appends each post
to ``posts.jsonl`` in a folder and is away (transiently) while ``away`` exists there. Run as
``python -m tests.channels.file_channel_server DATA_DIR PORT FOLDER``; the restart test kills
it outright and starts it again."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import uvicorn

from parley.app import create_app
from parley.channels.model import ConversationRef
from parley.clock import SystemClock
from parley.errors import Unavailable
from parley.settings import Settings
from parley.startup import running


class FileChannel:
    def __init__(self, folder: Path) -> None:
        self._folder = folder

    async def post(
        self, ref: ConversationRef, text: str, persona: str | None, idempotency_key: str
    ) -> str:
        if (self._folder / "away").exists():
            raise Unavailable("the file channel is away")
        line = {"conversation": ref.conversation_id, "text": text, "key": idempotency_key}
        with (self._folder / "posts.jsonl").open("a") as posts:
            posts.write(json.dumps(line) + "\n")
        return idempotency_key

    async def create_thread(
        self, parent: ConversationRef, name: str, idempotency_key: str
    ) -> ConversationRef:
        raise Unavailable("the file channel makes no threads")


async def serve(data_dir: Path, port: int, folder: Path) -> None:
    settings = Settings(data_dir=data_dir, port=port, heartbeat_seconds=3600, sweep_seconds=3600)
    async with running(settings, SystemClock(), channels={"file": FileChannel(folder)}) as context:
        config = uvicorn.Config(
            create_app(settings, context=context), host="127.0.0.1", port=port, log_level="warning"
        )
        await uvicorn.Server(config).serve()


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])))
