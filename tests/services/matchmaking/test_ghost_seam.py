"""Matchmaking keeps ghost stores through the registry (``GameModule.ghosts``), not Digits':
a second game that keeps armies is one more registration (docs/games.md)."""

from __future__ import annotations

from dataclasses import replace

from arena_games import digits
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as dg
from arena_games.registry import Registry
from arena_matchmaking.ghosts import apply_ghosts, decide_ghosts, initial_ghosts
from arena_runtime.streams import Rejection


def test_a_second_game_keeping_armies_gets_its_store_from_the_registry() -> None:
    assert digits.MODULE.ghosts is not None
    other = replace(
        digits.MODULE,
        name="digits-two",
        ghosts=replace(digits.MODULE.ghosts, stream="ghosts-digits-two"),
    )
    registry = Registry()
    registry.register(digits.MODULE)
    registry.register(other)
    assert registry.ghost_games() == ("digits", "digits-two")

    log = initial_ghosts("ghosts-digits-two", registry)
    sharing = dg.SetGhostSharing(player_id="p_ann", sharing="none")
    decided = decide_ghosts(log, sharing, command_id="c1")
    assert decided == [dg.GhostSharingSet(player_id="p_ann", sharing="none")]
    log = apply_ghosts(log, decided[0])

    # The game's own refusals come through; a stream no game keeps refuses everything.
    bad = decide_ghosts(log, dg.SetGhostSharing(player_id="", sharing="none"), command_id="c2")
    assert isinstance(bad, Rejection) and bad.code == "invalid_player"
    nobody = decide_ghosts(initial_ghosts("ghosts-nobody", registry), sharing, command_id="c3")
    assert isinstance(nobody, Rejection) and nobody.code == "unknown_command"
