"""A store that cannot be opened says why in the operator's words, with what to do."""

from __future__ import annotations

import pytest
from sqlalchemy import make_url

from parley.errors import Unavailable
from parley.store.store import Store


async def test_a_missing_postgresql_database_says_how_to_make_it(postgres_url: str) -> None:
    missing = postgres_url.rsplit("/", 1)[0] + "/parley_no_such_database"
    with pytest.raises(Unavailable) as raised:
        await Store.open(missing)
    said = str(raised.value)
    assert 'database "parley_no_such_database" does not exist' in said
    user = make_url(missing).username
    assert said.endswith(f"createdb -O {user} parley_no_such_database")
    assert "sqlalche.me" not in said and "Background on this error" not in said
