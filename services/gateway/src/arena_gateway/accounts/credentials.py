"""What a username and a password may be, and Argon2id hashing of passwords.

Usernames: 3-20 letters, digits and underscores, starting with a letter. Their lower case names
the account's stream, so ``Alice`` and ``alice`` are one account. Names that start with
``guest_`` (any case) are reserved for the gateway's ``Guest_XXXX`` guests.
Passwords: 8-128 characters, at most 512 bytes in UTF-8 (Argon2 hashes any length; the bound
only keeps one request's hashing cost bounded).
"""

from __future__ import annotations

import asyncio
import functools
import re

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from arena_gateway.accounts.errors import AccountError, AccountErrorCode

MIN_USERNAME = 3
MAX_USERNAME = 20
USERNAME = re.compile(rf"[A-Za-z][A-Za-z0-9_]{{{MIN_USERNAME - 1},{MAX_USERNAME - 1}}}")
RESERVED_PREFIX = "guest_"
#: Every username accepted, as one regular expression for the OpenAPI document (JSON Schema
#: patterns have no case-insensitive flag, hence a class per letter of the reserved prefix).
ACCEPTED_USERNAME = (
    "^(?!"
    + "".join(f"[{c.upper()}{c}]" if c.isalpha() else c for c in RESERVED_PREFIX)
    + f"){USERNAME.pattern}$"
)
MIN_PASSWORD = 8
MAX_PASSWORD = 128
MAX_PASSWORD_BYTES = 512

_hasher = PasswordHasher()  # Argon2id with the library's (RFC 9106 low-memory) parameters


@functools.cache
def _dummy_hash() -> str:
    """Verified against when the username is unknown, so that answer costs what a wrong password
    does. Made at the first verification, known account or not (not at import: a whole Argon2
    hash on the gateway's start path)."""
    return _hasher.hash("no account has this password")


def check_username(username: str) -> str:
    """The username as typed, or the typed refusal."""
    if not USERNAME.fullmatch(username):
        raise AccountError(
            AccountErrorCode.INVALID_USERNAME,
            "a username is 3-20 letters, digits or _ and starts with a letter",
        )
    if username.lower().startswith(RESERVED_PREFIX):
        raise AccountError(
            AccountErrorCode.USERNAME_RESERVED, "names starting with Guest_ are for guests"
        )
    return username


def check_password(password: str) -> str:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD or (
        len(password.encode()) > MAX_PASSWORD_BYTES
    ):
        raise AccountError(
            AccountErrorCode.INVALID_PASSWORD,
            f"a password is {MIN_PASSWORD}-{MAX_PASSWORD} characters",
        )
    return password


async def hash_password(password: str) -> str:
    """Argon2id in a worker thread: hashing takes tens of milliseconds of CPU."""
    return await asyncio.to_thread(_hasher.hash, password)


async def verify_password(password_hash: str | None, password: str) -> bool:
    """True if ``password`` matches; an unknown account (None) costs the same and is False."""

    def verify() -> bool:
        dummy = _dummy_hash()
        try:
            return _hasher.verify(password_hash or dummy, password) and (password_hash is not None)
        except (VerificationError, InvalidHashError):
            return False

    return await asyncio.to_thread(verify)
