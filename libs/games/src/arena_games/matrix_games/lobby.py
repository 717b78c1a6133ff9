"""Matrix Games' settings as rooms and queues know them: defaults, checks, the JSON form.

Every setting is the reference's config value (docs/rules/matrix-games.md), checked by the
engine's ranges and its cross-field rule, so a refusal carries the engine's code:
``setting_out_of_range``, ``settings_inconsistent`` (the connect wait plus three seconds plus two
decision timeouts must fit in the play deadline, 60 % of the episode timeout) or
``unknown_variant``. The variant is recorded by its canonical name. A seed is kept when the host
gives one; otherwise the match service draws it at the start (it is in ``Inputs``) and records
it in ``EpisodeStarted``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from arena_engine.matrix_games import VARIANTS, MatrixGamesError
from arena_engine.matrix_games.settings import SEED_MAX, SEED_MIN
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from pydantic import BaseModel, ConfigDict, Field

from arena_games.contract import SettingsError
from arena_games.lobby_form import FormLobby
from arena_games.matrix_games import wire
from arena_games.proto_gen.arena.games.matrix_games.v1 import matrix_games_pb2 as pb

#: A setting's value as a form may carry it (the rules check the range).
Count = Annotated[int, Field(ge=0, le=2**31 - 1)]


class SettingsForm(BaseModel):
    """A Matrix Games room's settings as a client sends them; omitted: the default."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Any case; the names are listed in the form's schema (clients offer them as choices).
    variant: Annotated[str, Field(max_length=64, examples=list(VARIANTS))] | None = None
    seed: Annotated[int, Field(ge=SEED_MIN, le=SEED_MAX)] | None = None
    beats: Count | None = None
    ticks_per_beat: Count | None = None
    token_cap: Count | None = None
    token_respawn_ticks: Count | None = None
    beam_range: Count | None = None
    freeze_ticks: Count | None = None
    step_cooldown_ticks: Count | None = None
    beam_reset_cooldown: Count | None = None
    beam_miss_cooldown: Count | None = None
    view_radius: Count | None = None
    decision_timeout_seconds: Count | None = None
    min_beat_seconds: Count | None = None
    episode_timeout_seconds: Count | None = None
    player_connect_timeout_seconds: Count | None = None


def check(settings: pb.MatrixGamesSettings | None) -> pb.MatrixGamesSettings:
    """The settings with every default filled in (the seed only if given), or a SettingsError
    naming the first bad value."""
    settings = settings or pb.MatrixGamesSettings()
    try:
        played = wire.engine_settings(settings)
        played = replace(played, matrix=played.variant.name)
    except MatrixGamesError as exc:
        raise SettingsError(exc.code, str(exc)) from None
    return wire.settings_message(played, seed=settings.HasField("seed"))


def defaults() -> pb.MatrixGamesSettings:
    return check(None)


def from_form(form: SettingsForm) -> pb.MatrixGamesSettings:
    """The settings message of a client's form, checked."""
    given = {name: value for name, value in form.model_dump().items() if value is not None}
    return check(pb.MatrixGamesSettings(**given))


def to_form(settings: Message) -> dict[str, Any]:
    """The JSON form of a settings message (what a room shows its players)."""
    assert isinstance(settings, pb.MatrixGamesSettings)
    form = MessageToDict(settings, preserving_proto_field_name=True)
    if "seed" in form:  # int64 is a string in protobuf's JSON mapping; the form says a number
        form["seed"] = int(form["seed"])
    return form


LOBBY = FormLobby(
    "Matrix Games", pb.MatrixGamesSettings, SettingsForm, defaults, check, from_form, to_form
)
