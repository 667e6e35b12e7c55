"""Signing in to the page: a person's API token, once, for a signed cookie (HttpOnly,
SameSite=Strict, expiring) that names the token's hash. Reissuing the token ends every
cookie made from the old one, as it ends the old token. Each form carries a token derived from
the cookie, so that another site cannot post in a person's name (cross-site request forgery)."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from pathlib import Path

from itsdangerous import BadSignature, URLSafeTimedSerializer

from parley.datafolder import DataFolder, write_secret
from parley.errors import Forbidden
from parley.people.accounts import authenticate
from parley.people.model import Person
from parley.people.tokens import hash_token
from parley.store import Store

COOKIE = "parley_session"
SALT = "parley-web-session"


@dataclass(frozen=True)
class SignedIn:
    """Who is behind a page's request, and the form token their forms carry."""

    person: Person
    form_token: str


class Sessions:
    """Makes and reads the page's cookies with the installation's own secret."""

    def __init__(self, secret: str, max_age_seconds: int) -> None:
        self._secret = secret.encode()
        self._serializer = URLSafeTimedSerializer(secret, salt=SALT)
        self.max_age_seconds = max_age_seconds

    async def sign_in(self, store: Store, token: str | None) -> str:
        """The cookie's value for a person's token (Unauthorized if no one has it)."""
        await authenticate(store, token)  # Unauthorized without a token
        assert token is not None
        return self._serializer.dumps(hash_token(token))

    async def signed_in(self, store: Store, cookie: str | None) -> SignedIn | None:
        """Who the cookie is for; None when absent, forged, expired, or its token reissued."""
        if not cookie:
            return None
        try:
            token_hash = self._serializer.loads(cookie, max_age=self.max_age_seconds)
        except BadSignature:  # SignatureExpired is one
            return None
        if not isinstance(token_hash, str):
            return None
        async with store.transaction() as tx:
            person = await tx.people.by_token_hash(token_hash)
        if person is None:
            return None
        return SignedIn(person, self._form_token(token_hash))

    def check_form_token(self, signed_in: SignedIn, given: str | None) -> None:
        if not given or not hmac.compare_digest(given.encode(), signed_in.form_token.encode()):
            raise Forbidden("this form is not from Parley's page: its form token is missing or old")

    def _form_token(self, token_hash: str) -> str:
        digest = hmac.new(self._secret, b"form|" + token_hash.encode(), hashlib.sha256)
        return digest.hexdigest()[:40]


def load_or_create_web_secret(data_dir: Path) -> str:
    """The key the page's cookies are signed with, made once per installation (0600)."""
    folder = DataFolder(data_dir)
    path = folder.web_secret
    if not path.exists():
        folder.create()
        with contextlib.suppress(FileExistsError):  # another process made it first: theirs
            write_secret(path, secrets.token_urlsafe(48), exclusive=True)
    return path.read_text().strip()
