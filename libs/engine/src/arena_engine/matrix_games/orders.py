"""Orders: the one intent a seat submits per beat, plus its recorded text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from arena_engine.matrix_games.constants import MAX_NOTES_RUNES, MAX_SAY_RUNES, SEATS
from arena_engine.matrix_games.errors import OrderError

GATHER: Final = "gather"
DENY: Final = "deny"
HUNT: Final = "hunt"
AVOID: Final = "avoid"
HOLD: Final = "hold"
INTENTS: Final = (GATHER, DENY, HUNT, AVOID, HOLD)
#: Integer codes the kernel switches on.
INTENT_CODE: Final = {name: i for i, name in enumerate(INTENTS)}
SOURCES: Final = ("llm", "jev", "retry", "fallback", "scripted", "player")

# Nim's strutils.strip whitespace set; Python's str.strip would also eat Unicode spaces.
_NIM_WHITESPACE: Final = " \t\v\r\n\f"


def clean_text(text: str, limit: int) -> str:
    """Recorded form of free text: newlines folded to spaces, stripped, and over-cap text cut
    to ``limit - 1`` code points plus an ellipsis (rune boundaries, never bytes)."""
    flat = text.replace("\r", " ").replace("\n", " ").strip(_NIM_WHITESPACE)
    if len(flat) <= limit:
        return flat
    return flat[: max(0, limit - 1)] + "\u2026"


@dataclass(frozen=True, slots=True)
class Order:
    """One seat's decision for one beat. ``token``/``target`` are -1 when the intent has none."""

    intent: str = HOLD
    token: int = -1
    target: int = -1
    source: str = "scripted"
    say: str = ""
    notes: str = ""
    latency_ms: int = 0

    def cleaned(self) -> Order:
        say = clean_text(self.say, MAX_SAY_RUNES)
        notes = clean_text(self.notes, MAX_NOTES_RUNES)
        if say == self.say and notes == self.notes:
            return self
        return Order(self.intent, self.token, self.target, self.source, say, notes, self.latency_ms)

    def to_json(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "token": self.token,
            "target": self.target,
            "source": self.source,
            "say": self.say,
            "notes": self.notes,
            "latencyMs": self.latency_ms,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Order:
        try:
            return cls(
                intent=str(data["intent"]),
                token=int(data.get("token", -1)),
                target=int(data.get("target", -1)),
                source=str(data.get("source", "scripted")),
                say=str(data.get("say", "")),
                notes=str(data.get("notes", "")),
                latency_ms=int(data.get("latencyMs", 0)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise OrderError("malformed_order", f"malformed order {data!r}: {exc}") from exc


def validate_order(order: Order, seat: int, k: int) -> None:
    """Reject an order a seat may not give: unknown intent, bad token, bad target, bad types."""
    if order.intent not in INTENT_CODE:
        raise OrderError("unknown_intent", f"unknown intent {order.intent!r}")
    for name in ("token", "target", "latency_ms"):
        value = getattr(order, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise OrderError("malformed_order", f"{name} must be an integer")
    if not isinstance(order.say, str) or not isinstance(order.notes, str):
        raise OrderError("malformed_order", "say and notes must be strings")
    if order.intent in (GATHER, DENY):
        if not 0 <= order.token < k:
            raise OrderError("token_out_of_range", f"{order.intent} needs a token in 0..{k - 1}")
        if order.target != -1:
            raise OrderError("unexpected_target", f"{order.intent} takes no target")
    elif order.intent in (HUNT, AVOID):
        if not 0 <= order.target < SEATS or order.target == seat:
            raise OrderError("invalid_target", f"{order.intent} needs another seat's slot")
        if order.token != -1:
            raise OrderError("unexpected_token", f"{order.intent} takes no token")
    elif order.token != -1 or order.target != -1:
        raise OrderError("unexpected_argument", "hold takes no token and no target")
    if order.source not in SOURCES:
        raise OrderError("unknown_source", f"unknown order source {order.source!r}")


def gather(token: int, **kw: Any) -> Order:
    return Order(GATHER, token, -1, **kw)


def hunt(target: int, **kw: Any) -> Order:
    return Order(HUNT, -1, target, **kw)


def hold(**kw: Any) -> Order:
    return Order(HOLD, -1, -1, **kw)
