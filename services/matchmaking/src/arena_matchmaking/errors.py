"""Rejection codes of the matchmaking commands (recorded in ``CommandRejected.code``)."""

from __future__ import annotations

from enum import StrEnum

from arena_runtime.streams import Rejection


class LobbyErrorCode(StrEnum):
    # Settings of a room or an AI game.
    INVALID_GAME_CLOCK = "invalid_game_clock"
    INVALID_MOVE_CLOCK = "invalid_move_clock"
    INVALID_RULESET = "invalid_ruleset"
    MODE_NOT_AVAILABLE = "mode_not_available"
    INVALID_AI_LEVEL = "invalid_ai_level"
    # Who is asking.
    INVALID_PLAYER = "invalid_player"
    # Rooms.
    ROOM_CAP_REACHED = "room_cap_reached"
    ALREADY_IN_ROOM = "already_in_room"
    CODE_TAKEN = "code_taken"
    ROOM_NOT_FOUND = "room_not_found"
    ROOM_FULL = "room_full"
    CANNOT_JOIN_OWN_ROOM = "cannot_join_own_room"
    NOT_IN_ROOM = "not_in_room"
    MATCH_IN_PROGRESS = "match_in_progress"
    UNKNOWN_REQUEST = "unknown_request"
    # Rematches.
    REMATCH_NOT_AVAILABLE = "rematch_not_available"
    REMATCH_ALREADY_REQUESTED = "rematch_already_requested"
    NO_REMATCH_REQUESTED = "no_rematch_requested"
    CANNOT_ANSWER_OWN_REMATCH = "cannot_answer_own_rematch"
    # Queues.
    UNKNOWN_QUEUE = "unknown_queue"
    ALREADY_QUEUED = "already_queued"
    NOT_QUEUED = "not_queued"
    # Ranked play (issue 5).
    RANKED_REQUIRES_ACCOUNTS = "ranked_requires_accounts"
    # A command sent to a stream that does not take it.
    UNKNOWN_COMMAND = "unknown_command"


class LobbyError(Exception):
    """A refused lobby request; decide turns it into a recorded rejection."""

    def __init__(self, code: LobbyErrorCode, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else str(code))
        self.code = code
        self.message = message

    def rejection(self) -> Rejection:
        return Rejection(str(self.code), self.message)
