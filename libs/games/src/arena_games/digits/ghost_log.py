"""Digits' ghost store as a stream (``ghosts-digits``): pure decide and apply over the store,
the ``store`` of the module's :class:`~arena_games.contract.Ghosts` that matchmaking keeps.

Matchmaking reads every ``ShopClosing`` on ``arena.match.events`` and sends ``SaveGhost`` here
(id ``ghost:<match>:<round>``). Deciding it files the slate (``GhostFiled``, an entry of the
store's log) and, for a game that waits for the store's army (ranked, casual, daily), draws that
army from the store as it stood before the filing (``ArmyDrawn``: the army records the store's
position and the seed, drawn from the command id), which the service then sends to the match as
``DrawArmy`` (id ``army:<match>:<round>``). A room's slates are filed for its players (a room
draws no army from the store); a duel's armies were drawn at acceptance; the tutorial's and a
trial's slates are never saved. ``SetGhostSharing`` records an owner's preference.

The stream's events are the store's log, so the store survives a restart as the stream does: the
runner replays the stream (as every matchmaking stream) and the first decision builds the pools
in bulk from the entries (``GhostStore.from_log``); later entries are added one by one. The fold
keeps the entries (the store needs them all anyway) and builds the store lazily, so a replay
never builds an index per event, and a fold the runner puts back after a lost race rebuilds it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from arena_runtime.proto_gen.arena.v1 import rating_pb2
from arena_runtime.streams import Rejection
from google.protobuf.any_pb2 import Any as AnyMessage
from google.protobuf.message import Message

from arena_games.contract import Filing, GameError, pack
from arena_games.digits import ghost_store as gs
from arena_games.digits import wire
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as dg

#: Digits' ghost store; its partition's owner decides every filing.
GHOST_STREAM = f"ghosts-{wire.GAME}"
UNKNOWN_COMMAND = "unknown_command"
INVALID_PLAYER = "invalid_player"
INVALID_SETTINGS = "invalid_settings"
#: A player never rated yet (Digits' ladder starts there).
START_RATING = 1000
DRAWN_FROM_STORE = gs.DRAWN_FROM_STORE
#: More entries than this behind the store: rebuilt in bulk rather than added one by one.
BULK_AFTER = 10_000
BAD_GHOST = "bad_ghost"


def save_command_id(match_id: str, round_no: int) -> str:
    return f"ghost:{match_id}:{round_no}"


def army_command_id(match_id: str, round_no: int) -> str:
    return f"army:{match_id}:{round_no}"


#: The seed an army is drawn with, from the SaveGhost's (DrawDuel's) id (recorded in the army).
draw_seed = gs.draw_seed


@dataclass(slots=True)
class _Built:
    """The store built from the first ``store.position`` entries (None: to build)."""

    store: gs.GhostStore | None = None


@dataclass(frozen=True, slots=True)
class GhostLog:
    """The stream's fold: the store's entries so far (append-only, shared between folds) and the
    store built from them on demand."""

    stream: str
    entries: list[gs.Entry] = field(default_factory=list)
    length: int = 0
    built: _Built = field(default_factory=_Built)
    #: Room code -> its players in join order, each one's game and missed rounds
    #: (GhostRoomSeated).
    rooms: Mapping[str, tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...]]] = field(
        default_factory=dict
    )

    def store(self) -> gs.GhostStore:
        """The store after this fold's entries."""
        entries, built = self.entries, self.built
        if len(entries) > self.length:  # a fold put back after a lost race: its tail goes
            del entries[self.length :]
            built.store = None
        store = built.store
        if (
            store is None
            or store.position > self.length
            or self.length - store.position > BULK_AFTER
        ):
            store = built.store = gs.GhostStore.from_log(entries[: self.length])
        for entry in entries[store.position : self.length]:
            store.apply(entry)
        return store


def initial_ghosts(stream: str) -> GhostLog:
    return GhostLog(stream)


def apply_ghosts(log: GhostLog, event: Message) -> GhostLog:
    if isinstance(event, dg.GhostRoomSeated):
        missed = tuple(event.missed) or (0,) * len(event.players)
        seated = (tuple(event.players), tuple(event.match_ids), missed)
        return replace(log, rooms={**log.rooms, event.room_code: seated})
    entry = gs.entry_of(event)
    if entry is None:
        return log
    entries = log.entries
    if len(entries) > log.length:  # a tentative tail the runner put back
        del entries[log.length :]
        log.built.store = None
    entries.append(entry)
    return replace(log, length=log.length + 1)


def decide_ghosts(log: GhostLog, command: Message, *, command_id: str) -> list[Message] | Rejection:
    try:
        return _decide(log, command, command_id)
    except GameError as exc:
        return exc.rejection()
    except gs.GhostError as exc:
        return Rejection(exc.code, f"not a ghost: {exc.code}")
    except ValueError as exc:  # a slate that is not one (wire.slate_of)
        return Rejection(BAD_GHOST, f"not a ghost: {exc}")


def _decide(log: GhostLog, command: Message, command_id: str) -> list[Message]:
    match command:
        case dg.SaveGhost():
            return _save(log, command, command_id)
        case dg.DrawDuel():
            if len(command.players) != 2 or len(command.ratings) not in (0, 2):
                raise GameError(INVALID_PLAYER, "a duel's two players")
            store = log.store()
            players = (command.players[0], command.players[1])
            ratings = (
                (command.ratings[0], command.ratings[1])
                if command.ratings
                else (
                    store.last_rating(players[0], START_RATING),
                    store.last_rating(players[1], START_RATING),
                )
            )
            armies = store.duel(ratings, players, draw_seed(command_id))
            return [
                dg.DuelArmiesDrawn(
                    duel_id=command.duel_id, armies=armies, players=players, ratings=ratings
                )
            ]
        case dg.SeatGhostRoom():
            count = len(command.players)
            if (
                not command.room_code
                or len(command.match_ids) != count
                or len(command.missed) not in (0, count)
            ):
                raise GameError(INVALID_SETTINGS, "a room's players, each with a game")
            missed = tuple(command.missed) or (0,) * count
            seated = (tuple(command.players), tuple(command.match_ids), missed)
            if log.rooms.get(command.room_code) == seated:
                return []
            return [
                dg.GhostRoomSeated(
                    room_code=command.room_code,
                    players=command.players,
                    match_ids=command.match_ids,
                    missed=missed,
                )
            ]
        case dg.SetGhostSharing():
            if not command.player_id:
                raise GameError(INVALID_PLAYER, "no player id")
            try:
                sharing = gs.Sharing(command.sharing)
            except ValueError:
                raise GameError(
                    INVALID_SETTINGS,
                    f"sharing is login, anonymous or none, not {command.sharing!r}",
                ) from None
            # Recorded even when unchanged: the setting's answer is its event (the gateway
            # waits for one), and the store's fold of the same value again changes nothing.
            return [dg.GhostSharingSet(player_id=command.player_id, sharing=sharing.value)]
        case dg.WithdrawGhosts():
            given = [v for v in (command.match_id, command.room_code, command.day) if v]
            if len(given) != 1:
                raise GameError(INVALID_SETTINGS, "one of match_id, room_code, day")
            return [
                dg.GhostsWithdrawn(
                    match_id=command.match_id, room_code=command.room_code, day=command.day
                )
            ]
    raise GameError(UNKNOWN_COMMAND, f"the ghost store does not take {type(command).__name__}")


def _save(log: GhostLog, command: dg.SaveGhost, command_id: str) -> list[Message]:
    closing = command.closing
    if not command.match_id or not closing.player_id:
        raise GameError(INVALID_PLAYER, "a ghost names its game and its owner")
    pool = gs.pool_of(closing.mode, command.saved_ms, closing.room_code)
    if pool is None:
        return []  # the tutorial's and a trial's slates are never saved
    store = log.store()
    if store.filed(command.match_id, closing.round):
        return []  # a repeat whose answer was forgotten: filed (and drawn) once
    rating = (
        command.rating
        if command.HasField("rating")
        else store.last_rating(closing.player_id, START_RATING)
    )
    filed = dg.GhostFiled(
        match_id=command.match_id,
        closing=closing,
        rating=rating,
        saved_ms=command.saved_ms,
    )
    gs.check(gs.entry_of(filed))  # a bad slate or record is refused here, before anything
    # A selection (ranked, casual, daily) or a room's turn once its round is all filed; the same
    # function `arena verify` re-decides them with.
    out: list[Message] = list(gs.decide_draws(store, log.rooms, filed, command_id))
    day = gs.day_of(command.saved_ms)
    if any(p.startswith("daily:") and p < gs.daily_pool(day) for p in store.pools):
        out.append(dg.GhostsWithdrawn(day=day))  # the days before are over: their pools go
    out.append(filed)
    return out


@dataclass(frozen=True, slots=True)
class GhostLogStore:
    """The ghost store's stream as the contract's :class:`~arena_games.contract.GhostStore`."""

    def initial(self, stream: str) -> GhostLog:
        return initial_ghosts(stream)

    def apply(self, state: GhostLog, event: Message) -> GhostLog:
        return apply_ghosts(state, event)

    def decide(
        self, state: GhostLog, command: Message, command_id: str
    ) -> list[Message] | Rejection:
        return decide_ghosts(state, command, command_id=command_id)


STORE = GhostLogStore()


# -- what matchmaking sends for the store (the hooks of the module's Ghosts) -----------------

#: The events filed in the store: a shop's close (a slate), a voided game (its slates go).
FILES: tuple[type[Message], ...] = (dg.ShopClosing, dg.GameVoided, rating_pb2.MatchVoided)


def file(
    event: Message, match_id: str, time_ms: int, rating: Callable[[str], int | None]
) -> Filing | None:
    """A ShopClosing becomes SaveGhost (id ``ghost:<match>:<round>``, so a redelivered event
    files nothing twice), frozen with its owner's ladder rating if they have one; a voided
    game's ghosts are withdrawn (``void:<match>``)."""
    if isinstance(event, dg.ShopClosing):
        if event.mode in gs.NEVER_SAVED:
            return None  # the tutorial's and a trial's slates: nothing to file, no army to draw
        save = dg.SaveGhost(match_id=match_id, closing=event, saved_ms=time_ms)
        rated = rating(event.player_id)
        if rated is not None:
            save.rating = rated
        return Filing(save_command_id(match_id, event.round), save)
    if isinstance(event, dg.GameVoided):
        return Filing(f"void:{match_id}", dg.WithdrawGhosts(match_id=match_id))
    if isinstance(event, rating_pb2.MatchVoided) and event.game == wire.GAME:
        return Filing(f"void:{event.match_id}", dg.WithdrawGhosts(match_id=event.match_id))
    return None


def seat_room(
    room_code: str, players: Sequence[str], match_ids: Sequence[str], missed: Sequence[int]
) -> Message:
    """A side-by-side room's players and games, whom the room's armies are drawn for."""
    return dg.SeatGhostRoom(
        room_code=room_code, players=players, match_ids=match_ids, missed=missed
    )


def close_room(room_code: str) -> Message:
    """A side-by-side room is over: its pool leaves the store."""
    return dg.WithdrawGhosts(room_code=room_code)


def draw_duel(duel_id: str, players: Sequence[str]) -> Message:
    return dg.DrawDuel(duel_id=duel_id, players=players)


def army(event: Message) -> tuple[str, Filing] | None:
    """The store's army for the round whose shop closed (ArmyDrawn): DrawArmy to the match."""
    if not isinstance(event, dg.ArmyDrawn):
        return None
    draw = dg.DrawArmy(round=event.round, army=event.army)
    return event.match_id, Filing(army_command_id(event.match_id, event.round), draw)


def duel_armies(event: Message) -> tuple[str, AnyMessage] | None:
    """A duel's armies (DuelArmiesDrawn), as the settings both games add."""
    if not isinstance(event, dg.DuelArmiesDrawn):
        return None
    return event.duel_id, pack(dg.DigitsSettings(opponents=event.armies))
