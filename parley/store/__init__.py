"""The store, the only package that knows SQLAlchemy: SQLite by default, PostgreSQL for many."""

from parley.store.store import Store, Tx

__all__ = ["Store", "Tx"]
