"""`arena admin void GAME_ID --reason TEXT [--by NAME]`: an operator voids a game.

It sends the game's ``VoidGame`` command (who and why) to the match's stream on
``arena.commands.match`` (command id ``void:<game id>``, so sending it twice voids once); the
match service records ``GameVoided`` in the game, and the rating service, reading it from the log,
takes back every rating change the game caused (compensating events, the log never edited).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from arena_runtime.config import Settings

MAX_ID = 200
#: The engine's bound on a void's texts (``arena_engine.digits.game.MAX_VOID_TEXT``).
MAX_TEXT = 500


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    admin = sub.add_parser("admin", help="operator commands (void a game)")
    actions = admin.add_subparsers(dest="action", required=True)
    void = actions.add_parser(
        "void", help="void a game: out of leaderboards and prizes, its rating changes taken back"
    )
    void.add_argument("game_id", help="the game's match id (without the match- prefix)")
    void.add_argument("--reason", required=True, help="why (recorded in the game's events)")
    void.add_argument("--by", default=None, help="who voids it (default: the login running this)")
    void.set_defaults(func=run_void)


class VoidInputError(ValueError):
    """A game id or text the void command refuses (nothing is sent)."""


def void_command_payload(game_id: str, by: str, reason: str) -> tuple[str, str, str]:
    """The checked (stream, by, why) of a void; raises VoidInputError."""
    game_id = game_id.strip().removeprefix("match-")
    if not game_id or len(game_id) > MAX_ID or any(c.isspace() for c in game_id):
        raise VoidInputError("bad_game_id: 1-200 characters, no spaces")
    for name, text in (("by", by), ("reason", reason)):
        if not text.strip() or len(text) > MAX_TEXT:
            raise VoidInputError(f"bad_{name}: 1-{MAX_TEXT} characters")
    return f"match-{game_id}", by.strip(), reason.strip()


def run_void(args: argparse.Namespace) -> int:
    from arena_runtime.config import ConfigError, load_settings

    try:
        stream, by, why = void_command_payload(
            args.game_id, args.by or getpass.getuser(), args.reason
        )
    except VoidInputError as exc:
        print(f"arena admin void: {exc}", file=sys.stderr)
        return 2
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"arena admin void: {exc}", file=sys.stderr)
        return 2
    command_id = asyncio.run(_send(settings, stream, by, why))
    print(f"sent {command_id} to {stream}: the rating follows from the log")
    return 0


async def _send(settings: Settings, stream: str, by: str, why: str) -> str:
    from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb
    from arena_games.registry import READING
    from arena_runtime import topics
    from arena_runtime.envelope import new_command
    from arena_runtime.eventlog.factory import open_event_log

    command = new_command(
        stream,
        pb.VoidGame(by=by, why=why),
        command_id=f"void:{stream.removeprefix('match-')}",
        schemas=READING.schemas,
    )
    async with open_event_log(settings) as log:
        await topics.ensure_topics(log, settings.partitions)
        await log.append(topics.MATCH_COMMANDS, [READING.command_record(command)])
    return command.command_id
