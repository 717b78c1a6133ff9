"""A duel stream (``duel-<id>``): a challenge between two accounts to a one-seat game played
by both, the same game (the same seeds, and the same armies for a game with a ghost store), to
a deadline. Pure decide and apply.

``ChallengeDuel`` (the sender picks a fresh id) → ``DuelOffered``; the challenged player's
``AcceptDuel`` → ``DuelAccepted`` (the deadline, 24 h after, and the seeds both games share,
drawn from the duel id); matchmaking then asks the game's ghost store for the armies (its
``ghosts.draw_duel``) and, with them, sends ``StartDuel`` → ``DuelStarted`` (both games'
StartMatch follow); each game's end comes back as ``DuelGameEnded`` → ``DuelGameRecorded``,
and the second one decides the duel (the game's ``duels.outcome``) → ``DuelSettled``, whose
ledger commands settle the stakes (``settle_stakes``: held at acceptance, released on a draw
or a cancel, otherwise the loser's captured and credited to the winner).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from arena_games.contract import pack
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.schemas import lobby as lobby_schemas
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_matchmaking.context import LobbyContext
from arena_matchmaking.errors import LobbyError
from arena_matchmaking.errors import LobbyErrorCode as Code
from arena_matchmaking.room_settings import MODES, checked_settings, game_of

DUEL_PREFIX = "duel-"
#: A duel's games end this long after its acceptance (each game stops itself then).
DUEL_MS = 24 * 3_600_000
#: The most a duel may stake.
MAX_STAKE = 10_000
#: The match id of a player's game in a duel (the runtime's, so the read API finds it too).
duel_game = lobby_schemas.duel_game


def _seed(duel_id: str, label: str) -> int:
    digest = hashlib.sha256(f"duel:{duel_id}:{label}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(frozen=True)
class Duel:
    duel_id: str
    offered: pb.DuelOffered | None = None
    accepted: pb.DuelAccepted | None = None
    declined: bool = False
    #: Players whose stake is held.
    held: frozenset[str] = frozenset()
    started: pb.DuelStarted | None = None
    #: Match id -> its game's end as recorded.
    sides: Mapping[str, pb.DuelSide] = field(default_factory=dict)
    settled: pb.DuelSettled | None = None


def initial_duel(stream: str) -> Duel:
    return Duel(stream.removeprefix(DUEL_PREFIX))


def apply_duel(duel: Duel, event: Message) -> Duel:
    match event:
        case pb.DuelOffered():
            return replace(duel, offered=event)
        case pb.DuelAccepted():
            return replace(duel, accepted=event)
        case pb.DuelDeclined():
            return replace(duel, declined=True)
        case pb.DuelStakeHeld():
            return replace(duel, held=duel.held | {event.player_id})
        case pb.DuelStarted():
            return replace(duel, started=event)
        case pb.DuelGameRecorded():
            return replace(duel, sides={**duel.sides, event.match_id: event.side})
        case pb.DuelSettled():
            return replace(duel, settled=event)
    return duel


def decide_duel(
    duel: Duel, command: Message, context: LobbyContext, *, command_id: str
) -> list[Message] | Rejection:
    try:
        return _decide(duel, command, context)
    except LobbyError as exc:
        return exc.rejection()


def _decide(duel: Duel, command: Message, context: LobbyContext) -> list[Message]:
    match command:
        case pb.ChallengeDuel():
            if duel.offered is not None:
                raise LobbyError(Code.DUEL_EXISTS, f"duel {duel.duel_id} exists")
            return [_offer(duel, command)]
        case pb.AcceptDuel():
            offered = _open(duel)
            if command.player_id != offered.opponent.player_id:
                raise LobbyError(Code.NOT_CHALLENGED, "only the challenged player accepts")
            players = [offered.challenger.player_id, offered.opponent.player_id]
            return [
                pb.DuelAccepted(
                    player_id=command.player_id,
                    accepted_ms=context.now_ms,
                    deadline_ms=context.now_ms + DUEL_MS,
                    player_seed=_seed(duel.duel_id, "player"),
                    shop_seed=_seed(duel.duel_id, "shop"),
                    players=players,
                    stake=offered.stake,
                )
            ]
        case pb.DuelStakeAnswer():
            return _stake(duel, command)
        case pb.DeclineDuel():
            offered = _open(duel)
            if command.player_id not in (
                offered.challenger.player_id,
                offered.opponent.player_id,
            ):
                raise LobbyError(Code.NOT_CHALLENGED, "only the duel's players decline it")
            return [pb.DuelDeclined(player_id=command.player_id)]
        case pb.StartDuel():
            if duel.accepted is None or duel.offered is None:
                raise LobbyError(Code.DUEL_NOT_ACCEPTED, "the duel is not accepted")
            if duel.started is not None or duel.settled is not None:
                return []  # a repeat, or cancelled meanwhile
            return [_start(duel, duel.offered, duel.accepted, command)]
        case pb.DuelGameEnded():
            return _ended(duel, command)
    raise LobbyError(Code.UNKNOWN_COMMAND, f"a duel does not take {type(command).__name__}")


def _offer(duel: Duel, command: pb.ChallengeDuel) -> pb.DuelOffered:
    challenger, opponent = command.challenger, command.opponent
    if not challenger.player_id or not opponent.player_id:
        raise LobbyError(Code.INVALID_PLAYER, "a duel names both players")
    if challenger.player_id == opponent.player_id:
        raise LobbyError(Code.INVALID_PLAYER, "a duel is between two players")
    if {challenger.kind, opponent.kind} != {pb.PLAYER_KIND_ACCOUNT}:
        raise LobbyError(Code.RANKED_REQUIRES_ACCOUNTS, "duels are between accounts")
    if command.stake > MAX_STAKE:
        raise LobbyError(Code.INVALID_STAKE, f"a stake is 0..{MAX_STAKE}")
    settings = checked_settings(command.settings)
    game = game_of(settings)
    if MODES.get(settings.mode) != "duel" or game.seats.seats != 1 or game.duels is None:
        raise LobbyError(Code.MODE_NOT_AVAILABLE, "a duel is a one-seat game's duel mode")
    return pb.DuelOffered(
        duel_id=duel.duel_id,
        challenger=challenger,
        opponent=opponent,
        stake=command.stake,
        settings=settings,
    )


def _stake(duel: Duel, command: pb.DuelStakeAnswer) -> list[Message]:
    """The ledger's answer to a player's stake: held (both: the armies are drawn next), or
    refused (the duel is cancelled; the other stake, if held, is released)."""
    accepted = duel.accepted
    if accepted is None or command.player_id not in accepted.players:
        raise LobbyError(Code.DUEL_NOT_ACCEPTED, "no stake of this player is asked for")
    if duel.settled is not None or duel.started is not None or command.player_id in duel.held:
        return []  # a repeat, or too late to matter
    if not command.held:
        return [
            pb.DuelSettled(
                result="cancelled",
                reason="stake_refused",
                stake=accepted.stake,
                players=accepted.players,
            )
        ]
    all_held = duel.held | {command.player_id} >= set(accepted.players)
    return [
        pb.DuelStakeHeld(player_id=command.player_id, all_held=all_held, players=accepted.players)
    ]


def _open(duel: Duel) -> pb.DuelOffered:
    if duel.offered is None:
        raise LobbyError(Code.UNKNOWN_DUEL, f"no duel {duel.duel_id}")
    if duel.accepted is not None or duel.declined:
        raise LobbyError(Code.DUEL_ANSWERED, "the duel was answered")
    return duel.offered


def _start(
    duel: Duel, offered: pb.DuelOffered, accepted: pb.DuelAccepted, command: pb.StartDuel
) -> pb.DuelStarted:
    """Both games: the room settings' game settings with the armies drawn, the shared seeds
    and the deadline (checked by the game's lobby)."""
    game = game_of(offered.settings)
    played = game.wire.settings()
    offered.settings.settings.Unpack(played)
    drawn = game.wire.settings()
    if not command.settings.Unpack(drawn):
        raise LobbyError(Code.INVALID_SETTINGS, f"not {game.name} settings")
    played.MergeFrom(drawn)
    played.player_seed = accepted.player_seed  # type: ignore[attr-defined]
    played.shop_seed = accepted.shop_seed  # type: ignore[attr-defined]
    played.ends_ms = accepted.deadline_ms  # type: ignore[attr-defined]
    players = [offered.challenger, offered.opponent]
    return pb.DuelStarted(
        match_ids=[duel_game(duel.duel_id, p.player_id) for p in players],
        settings=pack(game.lobby.check(played)),
        players=players,
        game=game.name,
    )


def _ended(duel: Duel, command: pb.DuelGameEnded) -> list[Message]:
    started, offered = duel.started, duel.offered
    if started is None or offered is None or command.match_id not in started.match_ids:
        raise LobbyError(Code.UNKNOWN_DUEL, "not a game of this duel")
    if command.match_id in duel.sides or duel.settled is not None:
        return []  # a repeat
    events: list[Message] = [pb.DuelGameRecorded(match_id=command.match_id, side=command.side)]
    sides = {**duel.sides, command.match_id: command.side}
    if len(sides) < len(started.match_ids):
        return events
    duels = game_of(offered.settings).duels
    assert duels is not None  # offered only for a game with duels
    a, b = (sides[m] for m in started.match_ids)
    outcome = duels.outcome(a, b)
    events.append(
        pb.DuelSettled(
            result=outcome.result,
            winner=outcome.winner or "",
            loser=outcome.loser or "",
            reason=outcome.reason,
            decided_by=outcome.decided_by or "",
            stake=offered.stake,
            players=[p.player_id for p in started.players],
        )
    )
    return events
