"""A quick-match queue stream (``queue-<game>-<mode>``): pure decide and apply.

Players are paired in arrival order: a newcomer who finds someone waiting is paired with the
player who has waited longest, who takes seat 1.

The queues are the registry's: a game has one per mode (``GameModule.modes``) when its match is
two people paired (``SeatPlan``: two seats, both people may take): Maths Warriors and the Maze.
A game of more seats, or of one, is played from rooms or its own flows.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from arena_games.registry import STANDARD, Registry
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_matchmaking.context import LobbyContext, Player, live_match
from arena_matchmaking.errors import LobbyError
from arena_matchmaking.errors import LobbyErrorCode as Code
from arena_matchmaking.ids import match_id, queue_stream
from arena_matchmaking.ranked import check_ranked


def queued_games(registry: Registry = STANDARD) -> dict[str, frozenset[str]]:
    """Game name -> the modes that have a quick-match queue."""
    return {
        game.name: game.modes
        for game in registry
        if game.seats.seats == QUEUE_SEATS and game.seats.max_humans == QUEUE_SEATS
    }


#: A queue pairs two players.
QUEUE_SEATS = 2
GAMES = queued_games()
MODES = {
    match_pb2.MATCH_MODE_UNSPECIFIED: "casual",
    match_pb2.MATCH_MODE_CASUAL: "casual",
    match_pb2.MATCH_MODE_RANKED: "ranked",
}


@dataclass(frozen=True)
class Queue:
    stream: str
    #: Waiting players, longest-waiting first.
    waiting: tuple[Player, ...] = ()

    def has(self, player_id: str) -> bool:
        return any(p.player_id == player_id for p in self.waiting)


def initial_queue(stream: str) -> Queue:
    return Queue(stream)


def apply_queue(queue: Queue, event: Message) -> Queue:
    match event:
        case pb.PlayerQueued():
            return replace(queue, waiting=(*queue.waiting, Player.from_proto(event.player)))
        case pb.PlayerDequeued():
            gone = {event.player_id}
        case pb.PlayersPaired():
            gone = {p.player_id for p in event.players}
        case _:
            return queue
    return replace(queue, waiting=tuple(p for p in queue.waiting if p.player_id not in gone))


def decide_queue(
    queue: Queue, command: Message, context: LobbyContext, *, command_id: str
) -> list[Message] | Rejection:
    try:
        return _decide(queue, command, context, command_id)
    except LobbyError as exc:
        return exc.rejection()


def _decide(
    queue: Queue, command: Message, context: LobbyContext, command_id: str
) -> list[Message]:
    match command:
        case pb.Enqueue():
            mode = MODES.get(command.mode)
            if mode is None or mode not in GAMES.get(command.game, ()):
                raise LobbyError(Code.UNKNOWN_QUEUE, f"no queue for {command.game!r}")
            if queue_stream(command.game, mode) != queue.stream:
                raise LobbyError(Code.UNKNOWN_QUEUE, f"{command.game} {mode} is not {queue.stream}")
            check_ranked(command.mode, command.player)
            player = Player.from_proto(command.player)
            if not player.player_id:
                raise LobbyError(Code.INVALID_PLAYER, "no player id")
            elsewhere = context.player_queues.get(player.player_id, queue.stream)
            if queue.has(player.player_id) or elsewhere != queue.stream:
                raise LobbyError(Code.ALREADY_QUEUED, f"already waiting in {elsewhere}")
            room = context.player_rooms.get(player.player_id)
            if room is not None:
                raise LobbyError(Code.ALREADY_IN_ROOM, f"already in room {room}")
            match = (
                live_match(context, player.player_id)
                if STANDARD.find(command.game).exclusive
                else None
            )
            if match is not None:
                raise LobbyError(Code.ALREADY_IN_MATCH, f"playing match {match}")
            events: list[Message] = [pb.PlayerQueued(player=command.player)]
            if queue.waiting:
                first = queue.waiting[0]
                events.append(
                    pb.PlayersPaired(
                        match_id=match_id(queue.stream, command_id),
                        players=[first.to_proto(), player.to_proto()],
                    )
                )
            return events
        case pb.Dequeue():
            if not queue.has(command.player_id):
                raise LobbyError(Code.NOT_QUEUED, "not waiting in this queue")
            return [pb.PlayerDequeued(player_id=command.player_id)]
    raise LobbyError(Code.UNKNOWN_COMMAND, f"a queue does not take {type(command).__name__}")
