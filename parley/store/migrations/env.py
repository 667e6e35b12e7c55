"""Alembic environment: always given a live connection by ``parley.store.migrate``."""

from __future__ import annotations

from alembic import context

from parley.store.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations through parley.store.migrate, which passes a connection")

context.configure(
    connection=connection,
    target_metadata=metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
