"""Shared shapes of request bodies."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")
