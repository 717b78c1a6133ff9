"""Player moves (Strength, Mind, Skip) and their plain-data (wire / vector) form."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from .errors import ErrorCode, MathsWarriorsError


@dataclass(frozen=True)
class DieToken:
    """A die in a Mind expression, with the value the player saw (tamper-checked)."""

    die: str
    value: int


#: A Mind-expression token: a die, an operator or a parenthesis (or, invalidly, a literal).
MindToken: TypeAlias = DieToken | str | int


@dataclass(frozen=True)
class Strength:
    player: int
    attackers: tuple[str, ...]
    target: str


@dataclass(frozen=True)
class Mind:
    player: int
    target: str
    tokens: tuple[MindToken, ...]

    def dice(self) -> list[str]:
        return [t.die for t in self.tokens if isinstance(t, DieToken)]


@dataclass(frozen=True)
class Skip:
    player: int


Move: TypeAlias = Strength | Mind | Skip


def _invalid(message: str) -> MathsWarriorsError:
    return MathsWarriorsError(ErrorCode.INVALID_COMMAND, message)


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid(f"{what} must be an integer")
    return value


def token_from_data(token: Any) -> MindToken:
    if isinstance(token, Mapping):
        if set(token) != {"die", "value"} or not isinstance(token["die"], str):
            raise _invalid(f"bad die token {token!r}")
        return DieToken(token["die"], _int(token["value"], "die value"))
    if isinstance(token, str):
        return token
    return _int(token, "token")


def token_to_data(token: MindToken) -> Any:
    if isinstance(token, DieToken):
        return {"die": token.die, "value": token.value}
    return token


def move_from_dict(data: Mapping[str, Any]) -> Move:
    """Parse the vectors' move shape; a shape error raises ``invalid_command``."""
    if not isinstance(data, Mapping):
        raise _invalid("a move is an object")
    player = _int(data.get("player"), "player")
    kind = data.get("kind")
    if kind == "skip":
        return Skip(player)
    target = data.get("target")
    if not isinstance(target, str):
        raise _invalid("target must be a die name")
    if kind == "strength":
        attacker = data.get("attacker", data.get("attackers"))
        attackers: Sequence[Any] = [attacker] if isinstance(attacker, str) else attacker or []
        if not isinstance(attackers, Sequence) or not all(isinstance(a, str) for a in attackers):
            raise _invalid("attacker must be a die name")
        return Strength(player, tuple(attackers), target)
    if kind == "mind":
        tokens = data.get("tokens")
        if not isinstance(tokens, Sequence) or isinstance(tokens, str):
            raise _invalid("tokens must be a list")
        return Mind(player, target, tuple(token_from_data(t) for t in tokens))
    raise _invalid(f"unknown move kind {kind!r}")


def move_to_dict(move: Move) -> dict[str, Any]:
    if isinstance(move, Skip):
        return {"player": move.player, "kind": "skip"}
    if isinstance(move, Strength):
        attacker: Any = move.attackers[0] if len(move.attackers) == 1 else list(move.attackers)
        return {
            "player": move.player,
            "kind": "strength",
            "attacker": attacker,
            "target": move.target,
        }
    return {
        "player": move.player,
        "kind": "mind",
        "target": move.target,
        "tokens": [token_to_data(t) for t in move.tokens],
    }
