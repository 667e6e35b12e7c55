"""(to be written)"""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(include_in_schema=False)
