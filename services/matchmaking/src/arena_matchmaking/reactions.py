"""What the service sends after a command is answered: pure, from the command and its answer.

Every follow-up command has an id derived from what caused it, so sending it again (after a
crash between appending the events and committing the command's offset, the command is
redelivered, answered again from the log, and its follow-ups are sent again) changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arena_games.contract import Seat, SeatKind, SeatPlan, pack
from arena_games.credits import command_to_proto
from arena_games.digits import wire as digits_wire
from arena_games.digits.duels import DuelOutcome, settle_stakes, stake_hold_id
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as dg
from arena_runtime import topics
from arena_runtime.envelope import Command
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2, rating_pb2
from arena_runtime.schemas.rating import credits_stream
from arena_runtime.streams import Answer
from google.protobuf.message import Message

from arena_matchmaking.duels import DUEL_PREFIX
from arena_matchmaking.errors import LobbyErrorCode
from arena_matchmaking.ghosts import army_command_id, ghost_stream
from arena_matchmaking.ids import match_stream, player_stream, queue_of, room_stream
from arena_matchmaking.room_settings import default_settings, game_of, side_by_side
from arena_matchmaking.rooms import ALL_ENDED, player_game

AI_NAMES = {
    match_pb2.AI_LEVEL_EASY: "easy",
    match_pb2.AI_LEVEL_MEDIUM: "medium",
    match_pb2.AI_LEVEL_HARD: "hard",
    match_pb2.AI_LEVEL_IMPOSSIBLE: "impossible",
}


@dataclass(frozen=True, slots=True)
class FollowUp:
    """A command to send: its topic, stream, id and payload."""

    topic: str
    stream: str
    command_id: str
    payload: Message


def follow_ups(command: Command, answer: Answer) -> list[FollowUp]:
    if answer.rejection is not None:
        return _after_rejection(command, answer.rejection.code)
    sent: list[FollowUp] = []
    for event in answer.events:
        sent.extend(_after_event(event.payload, command.stream))
    return sent


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


def _after_event(event: Message, stream: str) -> list[FollowUp]:
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
            # A side-by-side room's games are over: its pool leaves the ghost store.
            code = stream.removeprefix("room-")
            return [
                FollowUp(
                    topics.MATCHMAKING_COMMANDS,
                    ghost_stream(digits_wire.GAME),
                    f"close:{event.match_id}",
                    dg.WithdrawGhosts(room_code=code),
                )
            ]
        case pb.RoomGameStarted():
            code = stream.removeprefix("room-")
            sent = [_create_match(event.match_id, [_human(event.player)], event.settings, code)]
            if event.settings.game == digits_wire.GAME:
                seated = dg.SeatGhostRoom(
                    room_code=code,
                    players=event.players,
                    match_ids=event.match_ids,
                    missed=event.missed,
                )
                sent.append(
                    FollowUp(
                        topics.MATCHMAKING_COMMANDS,
                        ghost_stream(digits_wire.GAME),
                        f"room:{event.match_id}",
                        seated,
                    )
                )
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
            return [_draw_duel(stream.removeprefix(DUEL_PREFIX), event.players)]
        case pb.DuelStakeHeld() if event.all_held:
            duel = stream.removeprefix(DUEL_PREFIX)
            return [_draw_duel(duel, event.players)]
        case pb.DuelSettled():
            return _settle(stream.removeprefix(DUEL_PREFIX), event)
        case dg.DuelArmiesDrawn():
            armies = pack(dg.DigitsSettings(opponents=event.armies))
            return [
                FollowUp(
                    topics.MATCHMAKING_COMMANDS,
                    f"{DUEL_PREFIX}{event.duel_id}",
                    f"start:{event.duel_id}",
                    pb.StartDuel(settings=armies),
                )
            ]
        case pb.DuelStarted():
            room = pb.RoomSettings(
                game=event.game, mode=match_pb2.MATCH_MODE_DUEL, settings=event.settings
            )
            return [
                _create_match(game, [_human(p)], room, "")
                for game, p in zip(event.match_ids, event.players, strict=True)
            ]
        case dg.ArmyDrawn():
            # The ghost store's army for the round whose shop closed: a seat-0 command.
            return [
                FollowUp(
                    topics.MATCH_COMMANDS,
                    match_stream(event.match_id),
                    army_command_id(event.match_id, event.round),
                    dg.DrawArmy(round=event.round, army=event.army),
                )
            ]
    return []


def stake_command_id(duel: str, player: str) -> str:
    return f"hold:{duel}:{player}"


def _draw_duel(duel: str, players: Sequence[str]) -> FollowUp:
    return FollowUp(
        topics.MATCHMAKING_COMMANDS,
        ghost_stream(digits_wire.GAME),
        f"draw:{duel}",
        dg.DrawDuel(duel_id=duel, players=players),
    )


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
    a game with a ghost store (Digits), the room's players and games, whom its armies are drawn
    for."""
    games = [player_game(event.match_id, p.player_id) for p in event.seats]
    sent = [
        _create_match(game, [_human(p)], event.settings, event.code)
        for game, p in zip(games, event.seats, strict=True)
    ]
    if event.settings.game == digits_wire.GAME:
        players = [p.player_id for p in event.seats]
        sent.append(
            FollowUp(
                topics.MATCHMAKING_COMMANDS,
                ghost_stream(digits_wire.GAME),
                f"room:{event.match_id}",
                dg.SeatGhostRoom(room_code=event.code, players=players, match_ids=games),
            )
        )
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
