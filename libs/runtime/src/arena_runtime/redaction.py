"""Secrets out of text: what every log line and every echoed setting goes through.

A secret is a session token, a password, or a credential in a URL. They reach text in a few
shapes, each blanked here whatever carries it: a WebSocket frame's payload (dumped by websockets
at DEBUG), a query string (``/v1/ws?token=...``, logged by uvicorn), a URL's password
(``postgresql+asyncpg://arena:...@db``), an ``Authorization`` or ``Cookie`` header (dumped at
DEBUG), and a field, JSON member or ``name=value`` pair named like a secret (a structured log
field).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

REDACTED = "[redacted]"
#: Names of fields, JSON members and query parameters whose values are secrets.
#: (Not "key": aiokafka logs Kafka's protocol fields, api_key=3 among them, at DEBUG.)
SECRET_NAMES = r"[\w-]*(?:token|password|passwd|secret|authorization|cookie|credential)[\w-]*"
_SECRET_NAME = re.compile(rf"(?i){SECRET_NAMES}")
_PATTERNS: list[tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]] = [
    # The payload of a WebSocket data frame, dumped by websockets at DEBUG ("< TEXT '...' [83
    # bytes]"): an auth or reconnect frame holds a token, and a long frame is shown cut in the
    # middle, a token's tail without its name. Only the kind and the length are kept.
    (
        re.compile(r"^([<>] (?:TEXT|BINARY|CONT)) .*(\[\d+ bytes(?:, continued)?\])$", re.DOTALL),
        rf"\g<1> {REDACTED} \g<2>",
    ),
    # Every query-string value: /v1/ws?token=..., whatever a future route takes.
    (re.compile(r"([?&][^=&\s\"'#?]*=)[^&\s\"'#]*"), rf"\g<1>{REDACTED}"),
    # The password of a URL: postgresql+asyncpg://user:secret@host, redis://:secret@host.
    # To the last @ of the address, so an unescaped @ in the password hides nothing.
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@]*:)[^\s/]*@"), rf"\g<1>{REDACTED}@"),
    # ... and of an address without a scheme: user:secret@kafka:9092.
    (re.compile(r"((?<![\w/:.@-])[\w.%+-]+:)[^@\s/:]+@(?=[\w.-])"), rf"\g<1>{REDACTED}@"),
    # A Cookie or Set-Cookie header dumped at DEBUG (the browser's session cookie), all of it.
    (re.compile(r"(?im)^([<>] )?((?:set-)?cookie:\s*).*$"), rf"\g<1>\g<2>{REDACTED}"),
    # Authorization: Bearer <token> (and Basic), in headers dumped at DEBUG.
    (re.compile(r"(?i)\b(bearer|basic)\s+[\w.~+/=-]+"), rf"\g<1> {REDACTED}"),
    # "token": "..." in JSON or a repr (a WebSocket frame dumped at DEBUG), token=... in text:
    # a quoted value to its closing quote, a bare one to the next separator.
    (
        re.compile(rf"(?i)([\"']?{SECRET_NAMES}[\"']?\s*[:=]\s*)(\"[^\"]*|'[^']*|[^\"'\s,}}&]+)"),
        lambda m: m[1] + (m[2][0] if m[2][0] in "\"'" else "") + REDACTED,
    ),
]


def redact(text: str) -> str:
    """``text`` with every secret it holds replaced by ``[redacted]``."""
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: REDACTED if _is_secret(k, v) else _redacted(v) for k, v in value.items()}
    if type(value) in (list, tuple):
        return type(value)(_redacted(v) for v in value)
    return value


def _is_secret(name: object, value: Any) -> bool:
    return isinstance(name, str) and bool(_SECRET_NAME.fullmatch(name)) and value is not None


def redact_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """A log record's fields with every secret blanked (a field named like one, whole)."""
    redacted = _redacted(fields)
    assert isinstance(redacted, dict)
    return redacted
