"""The one MetaData every table of the store belongs to."""

from __future__ import annotations

from sqlalchemy import MetaData

metadata = MetaData()
