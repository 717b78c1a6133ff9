"""The rulings as pure functions: who starts, who wins on time, and whether a move is legal."""

from __future__ import annotations

from dataclasses import dataclass

from .dice import DIE_NAMES, Dice, Die, Roller, count_active, other
from .errors import ErrorCode, Rejection
from .expression import ExpressionError, Token, evaluate_integer
from .moves import DieToken, Mind, Move, Skip, Strength
from .ruleset import AllEqualStart, FirstPlayerCompare, FirstPlayerPenalty, Ruleset, TimeoutWinner
from .state import GameState, Status

MAX_TOKENS = 64


@dataclass(frozen=True)
class FirstPlayer:
    player: int
    #: The tiebreaker rolls (one D20 each, repeated on a tie) when the roll-off option decided.
    rolloff: tuple[tuple[int, int], ...] = ()


def first_player(
    dice1: Dice, dice2: Dice, ruleset: Ruleset, roller: Roller | None = None
) -> FirstPlayer:
    """Compare the dice; the lower value at the first difference moves first."""
    if ruleset.first_player_compare is FirstPlayerCompare.SORTED_VALUES:
        a: list[int] = sorted(v for v in dice1 if v is not None)
        b: list[int] = sorted(v for v in dice2 if v is not None)
    else:
        a = [v for v in dice1 if v is not None]
        b = [v for v in dice2 if v is not None]
    for x, y in zip(a, b, strict=False):
        if x != y:
            return FirstPlayer(1 if x < y else 2)
    if ruleset.all_equal_start is AllEqualStart.PLAYER1:
        return FirstPlayer(1)
    if roller is None:
        raise ValueError("the roll-off start needs a seed")
    # Roll-off: one D20 each, repeated until they differ; the higher roll starts.
    rolls: list[tuple[int, int]] = []
    while True:
        r1, r2 = roller.roll(20), roller.roll(20)
        rolls.append((r1, r2))
        if r1 != r2:
            return FirstPlayer(1 if r1 > r2 else 2, tuple(rolls))


def timeout_winner(remaining1: int, remaining2: int, first: int, ruleset: Ruleset) -> int:
    """§8.2: fewer OWN dice wins (or, as an option, fewer opponent dice); a tie: the non-starter."""
    if remaining1 == remaining2:
        return other(first)
    player1_has_fewer = remaining1 < remaining2
    if ruleset.timeout_winner is TimeoutWinner.FEWER_OWN_DICE:
        return 1 if player1_has_fewer else 2
    return 2 if player1_has_fewer else 1


def penalty_applies(state: GameState, mover: int) -> bool:
    """The first player attacking the opponent's last die."""
    return mover == state.first and count_active(state.dice(other(mover))) == 1


def strength_allows(attacker: int, target: int, strict: bool) -> bool:
    return attacker > target if strict else attacker >= target


@dataclass(frozen=True)
class Resolution:
    """What a legal move does: the die it captures and the mover's dice it rerolls."""

    captured: Die | None
    used: tuple[Die, ...]


def _reject(code: ErrorCode, message: str = "") -> Rejection:
    return Rejection(code, message or code.value.replace("_", " "))


def check_move(state: GameState, move: Move) -> Resolution | Rejection:
    """Legality of ``move``; the first broken rule, in the vectors' order, is the one reported."""
    if state.status is Status.NEW:
        return _reject(ErrorCode.NOT_STARTED)
    if state.status is Status.OVER:
        return _reject(ErrorCode.GAME_OVER)
    if move.player != state.to_move:
        return _reject(ErrorCode.NOT_YOUR_TURN)
    if isinstance(move, Skip):
        return Resolution(None, ())
    if isinstance(move, Mind) and len(move.tokens) > MAX_TOKENS:
        return _reject(ErrorCode.EXPRESSION_TOO_LONG, f"more than {MAX_TOKENS} tokens")
    attackers = list(move.attackers) if isinstance(move, Strength) else move.dice()
    for name in [*attackers, move.target]:
        if name not in DIE_NAMES:
            return _reject(ErrorCode.UNKNOWN_DIE, f"no die {name!r}")
    own, theirs = state.dice(move.player), state.dice(other(move.player))
    for name in attackers:
        if own[Die(name).position] is None:
            return _reject(ErrorCode.ATTACKER_CAPTURED, f"your {name} is captured")
    target = Die(move.target)
    target_value = theirs[target.position]
    if target_value is None:
        return _reject(ErrorCode.TARGET_CAPTURED, f"their {target} is captured")
    strict = penalty_applies(state, move.player)
    if isinstance(move, Strength):
        if len(attackers) != 1:
            return _reject(ErrorCode.STRENGTH_NEEDS_ONE_DIE)
        attacker = Die(attackers[0])
        value = own[attacker.position]
        assert value is not None
        if not strength_allows(value, target_value, strict):
            sign = ">" if strict else ">="
            return _reject(ErrorCode.THRESHOLD_NOT_MET, f"needs {sign} {target_value}")
        return Resolution(target, (attacker,))
    if len(attackers) < 2:
        return _reject(ErrorCode.MIND_NEEDS_TWO_DICE)
    if len(set(attackers)) != len(attackers):
        return _reject(ErrorCode.DIE_USED_TWICE)
    tokens: list[Token] = []
    for token in move.tokens:
        if isinstance(token, DieToken):
            if own[Die(token.die).position] != token.value:
                return _reject(ErrorCode.VALUE_MISMATCH, f"{token.die} does not show {token.value}")
            tokens.append(token.value)
        elif isinstance(token, str):
            tokens.append(token)
        else:
            tokens.append("literal")  # only dice may appear in a Mind attack: malformed
    try:
        result = evaluate_integer(tokens)
    except ExpressionError as exc:
        return Rejection(exc.code, exc.message)
    if result != target_value:
        return _reject(ErrorCode.NOT_EQUAL_TARGET, f"{result} is not {target_value}")
    if strict and state.ruleset.first_player_penalty is FirstPlayerPenalty.STRENGTH_AND_MIND:
        return _reject(ErrorCode.FIRST_PLAYER_PENALTY, "the last die cannot be taken by Mind")
    return Resolution(target, tuple(Die(name) for name in attackers))
