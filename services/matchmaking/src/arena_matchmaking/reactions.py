"""What the service sends after a command is answered: pure, from the command and its answer.

Every follow-up command has an id derived from what caused it, so sending it again (after a
crash between appending the events and committing the command's offset, the command is
redelivered, answered again from the log, and its follow-ups are sent again) changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena_games.contract import Ghosts, Seat, SeatKind, SeatPlan, pack
from arena_games.credits import command_to_proto
from arena_games.registry import STANDARD, UnknownGameError
from arena_games.stakes import DuelOutcome, settle_stakes, stake_hold_id
from arena_runtime import topics
from arena_runtime.envelope import Command
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2, rating_pb2
from arena_runtime.schemas.rating import credits_stream
from arena_runtime.streams import Answer
from google.protobuf.any_pb2 import Any as AnyMessage
from google.protobuf.message import Message

from arena_matchmaking.duels import DUEL_PREFIX
from arena_matchmaking.errors import LobbyErrorCode
from arena_matchmaking.ghosts import GHOSTS_PREFIX
from arena_matchmaking.ids import match_stream, player_stream, queue_of, room_stream
from arena_matchmaking.players import AI_LEVEL_NAMES
from arena_matchmaking.room_settings import default_settings, game_of, side_by_side
from arena_matchmaking.rooms import ALL_ENDED, player_game

AI_NAMES = AI_LEVEL_NAMES


@dataclass(frozen=True, slots=True)
class FollowUp:
    """A command to send: its topic, stream, id and payload."""

    topic: str
    stream: str
    command_id: str
    payload: Message


def follow_ups(command: Command, answer: Answer, game: str = "") -> list[FollowUp]:
    """``game``: the game of the command's stream (a room's or a duel's; "" if none), whose
    ghost store a room's close or a duel's draw goes to."""
    if answer.rejection is not None:
        return _after_rejection(command, answer.rejection.code)
    sent: list[FollowUp] = []
    for event in answer.events:
        sent.extend(_after_event(event.payload, command.stream, game))
    return sent


def ghosts_of(game: str) -> Ghosts | None:
    """The ghost store of ``game`` (its ``GameModule.ghosts``), or None: none, or no such game."""
    try:
        return STANDARD.find(game).ghosts
    except UnknownGameError:
        return None


def _to_store(ghosts: Ghosts | None, command_id: str, command: Message | None) -> list[FollowUp]:
    """A command a game's hook made for its ghost store (none: nothing to send)."""
    if ghosts is None or command is None:
        return []
    return [FollowUp(topics.MATCHMAKING_COMMANDS, ghosts.stream, command_id, command)]


def _after_rejection(command: Command, code: str) -> list[FollowUp]:
    payload = command.payload
    if isinstance(payload, pb.OpenRoom) and code == LobbyErrorCode.CODE_TAKEN:
        attempt = payload.attempt + 1
        return [
            FollowUp(
                topics.MATCHMAKING_COMMANDS,
                player_stream(payload.host.player_id),
                f"{payload.create_command_id}:retry:{attempt}",
                pb.RetryRoomCode(create_command_id=payload.create_command_id, attempt=attempt),
            )
        ]
    return []


def _after_event(event: Message, stream: str, game: str) -> list[FollowUp]:
    if stream.startswith(GHOSTS_PREFIX):
        return _after_drawing(event, stream)
    match event:
        case pb.RoomRequested():
            return [
                FollowUp(
                    topics.MATCHMAKING_COMMANDS,
                    room_stream(event.code),
                    f"{event.create_command_id}:open:{event.attempt}",
                    pb.OpenRoom(
                        request_id=event.request_id,
                        host=event.host,
                        settings=event.settings,
                        create_command_id=event.create_command_id,
                        attempt=event.attempt,
                    ),
                )
            ]
        case pb.RoomMatchStarted() if side_by_side(event.settings):
            return _side_by_side(event)
        case pb.RoomMatchFinished() if event.reason == ALL_ENDED:
            # A side-by-side room's games are over: what its game's store keeps of it goes.
            ghosts = ghosts_of(game)
            code = stream.removeprefix("room-")
            closed = ghosts.close_room(code) if ghosts is not None else None
            return _to_store(ghosts, f"close:{event.match_id}", closed)
        case pb.RoomGameStarted():
            code = stream.removeprefix("room-")
            sent = [_create_match(event.match_id, [_human(event.player)], event.settings, code)]
            ghosts = ghosts_of(event.settings.game)
            if ghosts is not None:
                seated = ghosts.seat_room(code, event.players, event.match_ids, event.missed)
                sent.extend(_to_store(ghosts, f"room:{event.match_id}", seated))
            return sent
        case pb.RoomMatchStarted():
            plan = game_of(event.settings).seats
            seats = [_seat(plan, n, p) for n, p in enumerate(event.seats, 1)]
            return [_create_match(event.match_id, seats, event.settings, event.code)]
        case pb.PlayersPaired():
            seats = [_human(p) for p in event.players]
            game, mode = queue_of(stream)
            settings = default_settings(game)
            if mode == "ranked":  # queue-<game>-ranked (ids.queue_stream)
                settings.mode = match_pb2.MATCH_MODE_RANKED
            return [_create_match(event.match_id, seats, settings, "")]
        case pb.AiMatchRequested():
            level = AI_NAMES.get(event.level, "ai")
            ai = match_pb2.MatchSeat(
                player_id=f"ai-{level}",
                display_name=f"AI ({level})",
                kind=match_pb2.SEAT_KIND_AI,
                policy=event.policy or level,
            )
            return [_create_match(event.match_id, [_human(event.player), ai], event.settings, "")]
        case pb.SoloMatchRequested():
            return [_create_match(event.match_id, [_human(event.player)], event.settings, "")]
        case pb.DuelAccepted() if event.stake:
            duel = stream.removeprefix(DUEL_PREFIX)
            return [
                FollowUp(
                    topics.RATING_COMMANDS,
                    credits_stream(player),
                    stake_command_id(duel, player),
                    rating_pb2.HoldCredits(
                        hold_id=stake_hold_id(duel, player), amount=event.stake, reason="duel_stake"
                    ),
                )
                for player in event.players
            ]
        case pb.DuelAccepted():
            return _draw_duel(stream.removeprefix(DUEL_PREFIX), event.players, game)
        case pb.DuelStakeHeld() if event.all_held:
            duel = stream.removeprefix(DUEL_PREFIX)
            return _draw_duel(duel, event.players, game)
        case pb.DuelSettled():
            return _settle(stream.removeprefix(DUEL_PREFIX), event)
        case pb.DuelStarted():
            room = pb.RoomSettings(
                game=event.game, mode=match_pb2.MATCH_MODE_DUEL, settings=event.settings
            )
            return [
                _create_match(game, [_human(p)], room, "")
                for game, p in zip(event.match_ids, event.players, strict=True)
            ]
    return []


def _after_drawing(event: Message, stream: str) -> list[FollowUp]:
    """A ghost store's event: an army drawn for a match (a seat-0 command to it), or a duel's
    armies (which start the duel), as the store's game reads it."""
    module = STANDARD.ghost_store(stream)
    ghosts = module.ghosts if module is not None else None
    if ghosts is None:
        return []
    army = ghosts.army(event)
    if army is not None:
        match, filing = army
        return [
            FollowUp(topics.MATCH_COMMANDS, match_stream(match), filing.command_id, filing.command)
        ]
    drawn = ghosts.duel_armies(event)
    if drawn is not None:
        duel, armies = drawn
        return [_start_duel(duel, armies)]
    return []


def _start_duel(duel: str, settings: AnyMessage) -> FollowUp:
    return FollowUp(
        topics.MATCHMAKING_COMMANDS,
        f"{DUEL_PREFIX}{duel}",
        f"start:{duel}",
        pb.StartDuel(settings=settings),
    )


def stake_command_id(duel: str, player: str) -> str:
    return f"hold:{duel}:{player}"


def _draw_duel(duel: str, players: Sequence[str], game: str) -> list[FollowUp]:
    """A duel's armies, drawn by its game's ghost store; a game that keeps none starts the
    duel with its settings as offered."""
    ghosts = ghosts_of(game)
    if ghosts is None:
        try:
            return [_start_duel(duel, pack(STANDARD.find(game).wire.settings()))]
        except UnknownGameError:
            return []
    return _to_store(ghosts, f"draw:{duel}", ghosts.draw_duel(duel, players))


def _settle(duel: str, settled: pb.DuelSettled) -> list[FollowUp]:
    """The stakes' ledger commands (``settle_stakes``): released on a draw or a cancel, else
    the loser's captured and the winner credited as much."""
    if not settled.stake:
        return []
    outcome = DuelOutcome(
        settled.result, settled.winner or None, settled.loser or None, settled.reason
    )
    players = (settled.players[0], settled.players[1])
    return [
        FollowUp(
            topics.RATING_COMMANDS,
            credits_stream(player),
            f"settle:{duel}:{player}:{number}",
            command_to_proto(command),
        )
        for player, commands in settle_stakes(outcome, duel, settled.stake, players).items()
        for number, command in enumerate(commands)
    ]


def _side_by_side(event: pb.RoomMatchStarted) -> list[FollowUp]:
    """A side-by-side room's start: each player's own game, with the room's settings; and, for
    a game with a ghost store, what its ``seat_room`` files there (the room's players and games,
    whom its armies are drawn for)."""
    games = [player_game(event.match_id, p.player_id) for p in event.seats]
    sent = [
        _create_match(game, [_human(p)], event.settings, event.code)
        for game, p in zip(games, event.seats, strict=True)
    ]
    ghosts = ghosts_of(event.settings.game)
    if ghosts is not None:
        players = [p.player_id for p in event.seats]
        seated = ghosts.seat_room(event.code, players, games, ())
        sent.extend(_to_store(ghosts, f"room:{event.match_id}", seated))
    return sent


def _human(player: pb.LobbyPlayer) -> match_pb2.MatchSeat:
    return match_pb2.MatchSeat(
        player_id=player.player_id, display_name=player.display_name, kind=match_pb2.SEAT_KIND_HUMAN
    )


def _seat(plan: SeatPlan, number: int, player: pb.LobbyPlayer) -> match_pb2.MatchSeat:
    """A room's seat as the match knows it: a person, or a filled seat (an AI level of the
    game's plan is an AI seat, any other policy a scripted one)."""
    if not player.policy:
        return _human(player)
    kind = SeatKind.AI if player.policy in plan.ai_levels else SeatKind.SCRIPTED
    return Seat(number, player.player_id, player.display_name, kind, player.policy).to_proto()


def _create_match(
    match: str, seats: list[match_pb2.MatchSeat], settings: pb.RoomSettings, code: str
) -> FollowUp:
    """StartMatch{game, seats, mode, room_code, settings}."""
    start = match_pb2.StartMatch(
        match_id=match,
        game=settings.game,
        seats=seats,
        mode=settings.mode or match_pb2.MATCH_MODE_CASUAL,
        room_code=code,
    )
    if settings.HasField("settings"):
        start.settings.CopyFrom(settings.settings)
    return FollowUp(topics.MATCH_COMMANDS, match_stream(match), f"create:{match}", start)
