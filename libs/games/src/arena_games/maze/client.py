"""The WebSocket messages the Maze accepts (docs/protocol.md, "The Maze") and their commands.

``maze_move`` (``dir`` N, E, S or W) and ``maze_drop``; a resignation is the game-neutral
``resign``. The types carry the game's name because the gateway reads every game's messages
through one union on ``type``. Everything the rules decide (walls, cooldowns, the countdown) is
the rules' business, not the client's: a shape error is all that can be refused here.
"""

from __future__ import annotations

from typing import Annotated, Literal

from google.protobuf.message import Message
from pydantic import BaseModel, ConfigDict, Field

from arena_games.contract import ClientError
from arena_games.maze import wire
from arena_games.maze.pushes import PUSH_MODELS
from arena_games.proto_gen.arena.games.maze.v1 import maze_pb2 as pb

MessageId = Annotated[str, Field(min_length=1, max_length=64)]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: MessageId


class MazeMove(_Message):
    type: Literal["maze_move"]
    dir: Literal["N", "E", "S", "W"]


class MazeDrop(_Message):
    type: Literal["maze_drop"]


MESSAGES: tuple[type[BaseModel], ...] = (MazeMove, MazeDrop)


def command(message: BaseModel, player_id: str) -> Message:
    """The command of a player's message."""
    if isinstance(message, MazeMove):
        return pb.Move(player_id=player_id, dir=wire.DIRECTION[message.dir])
    if isinstance(message, MazeDrop):
        return pb.Drop(player_id=player_id)
    raise ClientError("bad_message", f"{getattr(message, 'type', message)} is not a Maze command")


class MazeClient:
    pushes = frozenset(
        {"maze_match", "maze_view", "maze_refused", "opponent_disconnected", "opponent_reconnected"}
    )
    push_models = PUSH_MODELS
    messages = MESSAGES
    relayed: tuple[type[BaseModel], ...] = ()

    def command(self, message: BaseModel, player_id: str) -> Message:
        return command(message, player_id)
