"""Who may play ranked (issue 5, docs/online-play.md): two players signed in with two different
accounts. The gateway says in each ``LobbyPlayer.kind`` who is signed in; a guest, the same
account twice, or the AI makes a ranked request ``ranked_requires_accounts``."""

from __future__ import annotations

from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as pb
from arena_runtime.proto_gen.arena.v1 import match_pb2

from arena_matchmaking.errors import LobbyError
from arena_matchmaking.errors import LobbyErrorCode as Code

MESSAGE = "Ranked matches require two different accounts"


def check_ranked(mode: int, *players: pb.LobbyPlayer) -> None:
    """Refuse a ranked request unless every player named is a distinct account."""
    if mode != match_pb2.MATCH_MODE_RANKED:
        return
    accounts = {p.player_id for p in players if p.kind == pb.PLAYER_KIND_ACCOUNT}
    if len(accounts) != len(players):
        raise LobbyError(Code.RANKED_REQUIRES_ACCOUNTS, MESSAGE)


def refuse_ranked(mode: int) -> None:
    """For games against the AI, which is no account."""
    if mode == match_pb2.MATCH_MODE_RANKED:
        raise LobbyError(Code.RANKED_REQUIRES_ACCOUNTS, MESSAGE)
