"""Values describing people."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum


class Role(StrEnum):
    OWNER = "owner"
    MEMBER = "member"


@dataclass(frozen=True)
class Person:
    id: int
    name: str
    role: Role
    created_at: datetime

    @property
    def is_owner(self) -> bool:
        return self.role is Role.OWNER
