"""A lobby made of a game's settings functions: the shape every game's lobby has.

A game writes ``defaults``, ``check``, ``from_form`` and ``to_form`` for its own settings message
and JSON form; :class:`FormLobby` makes them the contract's :class:`~arena_games.contract.Lobby`,
refusing another game's settings with one typed error and accepting any pydantic model with the
form's fields (the gateway's, a test's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from google.protobuf.message import Message
from pydantic import BaseModel

from arena_games.contract import SettingsError

INVALID_SETTINGS = "invalid_settings"

S = TypeVar("S", bound=Message)


@dataclass(frozen=True)
class FormLobby(Generic[S]):
    #: The game's name as players read it, in the refusal of another game's settings.
    title: str
    settings: type[S]
    form: type[BaseModel]
    make_defaults: Callable[[], S]
    checked: Callable[[S | None], S]
    from_own_form: Callable[[Any], S]
    to_own_form: Callable[[Message], dict[str, Any]]
    #: Mode -> the settings' seed fields every player of that mode shares, which the services
    #: fill (Digits' daily challenge: the day's ``shop_seed``).
    shared_seeds: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: A side-by-side room (a one-seat game in mode room): the settings its players' games are
    #: started with, from the room's settings, a seed drawn for the room and its start (ms).
    room_start: Callable[[Any, int, int], Message] | None = None
    #: The day (YYYY-MM-DD) of an instant (ms) in the game's calendar, for its daily mode
    #: (Digits: Paris time); None: the game has no daily mode.
    day_of: Callable[[int], str] | None = None
    #: A side-by-side room already playing: the settings of a game joining it at ``now_ms``
    #: (from the room's started settings), or None when no round is left to play.
    late_join: Callable[[Any, int], Message | None] | None = None

    def defaults(self) -> Message:
        return self.make_defaults()

    def check(self, settings: Message | None) -> Message:
        if settings is None:
            return self.checked(None)
        if not isinstance(settings, self.settings):
            raise SettingsError(INVALID_SETTINGS, f"not {self.title} settings")
        return self.checked(settings)

    def from_form(self, form: BaseModel) -> Message:
        if not isinstance(form, self.form):
            form = self.form.model_validate(form.model_dump())
        return self.from_own_form(form)

    def to_form(self, settings: Message) -> dict[str, Any]:
        return self.to_own_form(settings)
