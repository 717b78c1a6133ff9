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
    #: The settings name no registered game, a seat count not the game's, or another game's
    #: settings message. A game's own refusals keep the game's codes (docs/games.md).
    UNKNOWN_GAME = "unknown_game"
    INVALID_SEATS = "invalid_seats"
    INVALID_SETTINGS = "invalid_settings"
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
    # Rooms of any number of seats (FillSeat, StartRoom).
    NOT_HOST = "not_host"
    ROOM_NOT_WAITING = "room_not_waiting"
    INVALID_SEAT = "invalid_seat"
    SEAT_TAKEN = "seat_taken"
    INVALID_POLICY = "invalid_policy"
    #: StartRoom with empty seats in a game with no default fill, or too few people seated.
    SEATS_EMPTY = "seats_empty"
    #: A guest joining a room whose host admits accounts only (a game's ``guests_allowed`` setting).
    GUESTS_NOT_ALLOWED = "guests_not_allowed"
    #: One live match per player: in a room's game, an AI game or a quick match already.
    ALREADY_IN_MATCH = "already_in_match"
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
    # Duels (a one-seat game's duel mode: GameModule.duels).
    DUEL_EXISTS = "duel_exists"
    UNKNOWN_DUEL = "unknown_duel"
    DUEL_ANSWERED = "duel_answered"
    DUEL_NOT_ACCEPTED = "duel_not_accepted"
    NOT_CHALLENGED = "not_challenged"
    INVALID_STAKE = "invalid_stake"
    # A command sent to a stream that does not take it.
    UNKNOWN_COMMAND = "unknown_command"


class LobbyError(Exception):
    """A refused lobby request; decide turns it into a recorded rejection."""

    def __init__(self, code: LobbyErrorCode | str, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else str(code))
        self.code = code
        self.message = message

    def rejection(self) -> Rejection:
        return Rejection(str(self.code), self.message)
