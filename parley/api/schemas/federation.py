"""The peer-facing bodies: the handshake and a batch of frames."""

from __future__ import annotations

from pydantic import BaseModel, Field

from parley.api.schemas.base import Body, example
from parley.federation.frames import Frame


class Batch(Body):
    model_config = example(
        frames=[
            {
                "type": "text",
                "thread_id": "9f1c2d3e4b5a69788796a5b4c3d2e1f0",
                "seq": 1,
                "message_id": "m-5b1e0c9a",
                "from_role": "scribe",
                "to_role": "clerk",
                "body": "What time is it?",
            }
        ]
    )

    frames: list[Frame] = Field(min_length=1)


class HandshakeIn(Body):
    model_config = example(
        secret="Zk3…the invite's secret", url="https://parley.example.org", token="ppt_…"
    )

    secret: str = Field(min_length=1, max_length=200)
    url: str = Field(min_length=1, max_length=2000)
    token: str = Field(min_length=1, max_length=200)


class HandshakeOut(BaseModel):
    token: str = Field(description="the token the inviter issued for the acceptor")
