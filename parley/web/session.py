"""Signing in to the page: a person's API token, once, for a signed cookie (HttpOnly,
SameSite=Strict, expiring) that names a sign-in kept in the store. Signing out deletes that
sign-in, so its cookie opens nothing after, wherever a copy of it is; reissuing the token
deletes every sign-in of its person. Each form carries a token derived from the sign-in, so
that another site cannot post in a person's name (cross-site request forgery), and a form token
of one sign-in is no good with another's cookie."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from itsdangerous import BadSignature, URLSafeTimedSerializer

from parley.clock import Clock
from parley.datafolder import DataFolder, write_secret
from parley.errors import Forbidden
from parley.people.accounts import authenticate
from parley.people.model import Person
from parley.store import Store
from parley.tokens import hash_token

COOKIE = "parley_session"
SALT = "parley-web-session"


@dataclass(frozen=True)
class SignedIn:
    """Who is behind a page's request, and the form token their forms carry."""

    person: Person
    form_token: str


class Sessions:
    """Makes and reads the page's cookies with the installation's own secret."""

    def __init__(self, secret: str, max_age_seconds: int, clock: Clock) -> None:
        self._secret = secret.encode()
        self._serializer = URLSafeTimedSerializer(secret, salt=SALT)
        self.max_age_seconds = max_age_seconds
        self._clock = clock

    async def sign_in(self, store: Store, token: str | None) -> str:
        """The cookie's value for a new sign-in with a person's token (Unauthorized if no one
        has it)."""
        person = await authenticate(store, token)  # Unauthorized without a token
        secret = secrets.token_urlsafe(32)
        now = self._clock.now()
        expires = now + timedelta(seconds=self.max_age_seconds)
        async with store.transaction() as tx:
            await tx.sign_ins.add(person.id, hash_token(secret), now, expires)
        return self._serializer.dumps(secret)

    async def signed_in(self, store: Store, cookie: str | None) -> SignedIn | None:
        """Who the cookie is for; None when absent, forged, expired or signed out."""
        secret_hash = self._secret_hash(cookie)
        if secret_hash is None:
            return None
        async with store.transaction() as tx:
            person = await tx.sign_ins.person(secret_hash, self._clock.now())
        if person is None:
            return None
        return SignedIn(person, self._form_token(secret_hash))

    async def sign_out(self, store: Store, cookie: str | None) -> None:
        """End the cookie's sign-in (nothing, for a cookie that is none)."""
        secret_hash = self._secret_hash(cookie)
        if secret_hash is not None:
            async with store.transaction() as tx:
                await tx.sign_ins.end(secret_hash)

    def check_form_token(self, signed_in: SignedIn, given: str | None) -> None:
        if not given or not hmac.compare_digest(given.encode(), signed_in.form_token.encode()):
            raise Forbidden("this form is not from Parley's page: its form token is missing or old")

    def _secret_hash(self, cookie: str | None) -> str | None:
        if not cookie:
            return None
        try:
            secret = self._serializer.loads(cookie, max_age=self.max_age_seconds)
        except BadSignature:  # SignatureExpired is one
            return None
        return hash_token(secret) if isinstance(secret, str) else None

    def _form_token(self, secret_hash: str) -> str:
        digest = hmac.new(self._secret, b"form|" + secret_hash.encode(), hashlib.sha256)
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
