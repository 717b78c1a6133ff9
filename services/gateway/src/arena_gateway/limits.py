"""What the gateway refuses before anything reaches a service: too many messages, too large a
message, a foreign Origin, and expressions outside the token and operator whitelist.

Each refusal is a :class:`GatewayError` with its own code; the connection and the game go on.
The rate limit lives in the shared cache (Redis when distributed), so a player's budget is one
budget however many connections or gateway instances they use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from arena_runtime.cache import Cache

from arena_gateway.protocol import ErrorCode, GatewayError

#: The rules' online limit on a Mind expression (tournament reference §4.1).
MAX_TOKENS = 64
DIE_NAMES = frozenset({"D4", "D6", "D8", "D10", "D12", "D20"})
#: Operators and parentheses, with the typographic signs a keyboard may send.
SYMBOLS = {"+": "+", "-": "-", "*": "*", "/": "/", "(": "(", ")": ")", "×": "*", "÷": "/", "−": "-"}
MAX_DIE_VALUE = 20


@dataclass(frozen=True, slots=True)
class DieToken:
    die: str
    value: int


Token = DieToken | str


def check_tokens(raw: Sequence[Any]) -> list[Token]:
    """The whitelisted form of a Mind expression, or the typed refusal of the whole expression.

    A die is ``{"die": "D4".."D20", "value": 1..20}``; a symbol is one of ``+ - * / ( )`` (or
    ``× ÷ −``). Anything else voids the expression (``invalid_token``), as the reference server
    did; more than 64 tokens is ``expression_too_long``. Whether the arithmetic is right is the
    engine's business, not the gateway's.
    """
    if len(raw) > MAX_TOKENS:
        raise GatewayError(
            ErrorCode.EXPRESSION_TOO_LONG, f"{len(raw)} tokens; at most {MAX_TOKENS}"
        )
    tokens: list[Token] = []
    for index, item in enumerate(raw):
        if isinstance(item, str) and item in SYMBOLS:
            tokens.append(SYMBOLS[item])
        elif (
            isinstance(item, dict)
            and set(item) == {"die", "value"}
            and item["die"] in DIE_NAMES
            and type(item["value"]) is int
            and 1 <= item["value"] <= MAX_DIE_VALUE
        ):
            tokens.append(DieToken(item["die"], item["value"]))
        else:
            raise GatewayError(
                ErrorCode.INVALID_TOKEN, f"token {index} is not a die or one of + - * / ( )"
            )
    return tokens


def check_die(name: str, what: str) -> str:
    if name not in DIE_NAMES:
        raise GatewayError(ErrorCode.INVALID_TOKEN, f"{what} must be one of D4 D6 D8 D10 D12 D20")
    return name


class RateLimiter:
    """``rate`` messages a second per player, with a burst of one second's worth."""

    def __init__(self, cache: Cache, rate: float) -> None:
        self.cache = cache
        self.rate = rate
        self.burst = max(1.0, rate)

    async def check(self, player_id: str) -> None:
        if not await self.cache.allow(f"ws-msg:{player_id}", self.rate, self.burst):
            raise GatewayError(
                ErrorCode.RATE_LIMITED, f"more than {self.rate:g} messages a second; dropped"
            )


def parse_origins(setting: str) -> frozenset[str]:
    return frozenset(o.strip().rstrip("/") for o in setting.split(",") if o.strip())


def origin_allowed(origin: str | None, allowed: frozenset[str]) -> bool:
    """A browser always sends Origin: it must be on the list (or the list holds ``*``). Clients
    that send none (servers, tools) are not browsers, whom the check protects, and pass."""
    if origin is None:
        return True
    return "*" in allowed or origin.rstrip("/") in allowed
