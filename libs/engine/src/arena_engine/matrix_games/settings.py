"""Rule settings: defaults, accepted ranges and validation (camelCase keys on the wire)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Final

from arena_engine.matrix_games.constants import SEATS
from arena_engine.matrix_games.errors import SettingsError
from arena_engine.matrix_games.variants import DEFAULT_VARIANT, Variant, variant_named

# Seeds are 64-bit integers in the reference (a negative one is reinterpreted as unsigned).
SEED_MIN: Final = -(2**63)
SEED_MAX: Final = 2**63 - 1

#: field name -> (wire key, lowest, highest). The ranges are the reference's manifest schema,
#: which also bounds the four settings its ``validate()`` leaves unchecked.
RANGES: Final[dict[str, tuple[str, int, int]]] = {
    "num_agents": ("num_agents", SEATS, SEATS),
    "seed": ("seed", SEED_MIN, SEED_MAX),
    "beats": ("beats", 1, 24),
    "ticks_per_beat": ("ticksPerBeat", 10, 120),
    "token_cap": ("tokenCap", 2, 16),
    "token_respawn_ticks": ("tokenRespawnTicks", 5, 200),
    "beam_range": ("beamRange", 1, 8),
    "freeze_ticks": ("freezeTicks", 0, 60),
    "step_cooldown_ticks": ("stepCooldownTicks", 1, 10),
    "beam_reset_cooldown": ("beamResetCooldown", 0, 120),
    "beam_miss_cooldown": ("beamMissCooldown", 0, 60),
    "view_radius": ("viewRadius", 1, 24),
    "llm_timeout_seconds": ("llmTimeoutSeconds", 1, 120),
    "min_beat_seconds": ("minBeatSeconds", 0, 120),
    "episode_timeout_seconds": ("episodeTimeoutSeconds", 60, 6000),
    "player_connect_timeout_seconds": ("playerConnectTimeoutSeconds", 0, 600),
    "shutdown_grace_seconds": ("shutdownGraceSeconds", 0, 120),
}

REGISTRATION_GRACE_SECONDS: Final = 3
PLAY_DEADLINE_FRACTION: Final = 0.6


@dataclass(frozen=True, slots=True)
class Settings:
    """One episode's rules. Construction validates; an invalid value raises SettingsError."""

    matrix: str = DEFAULT_VARIANT
    seed: int = 0
    num_agents: int = SEATS
    beats: int = 12
    ticks_per_beat: int = 50
    token_cap: int = 8
    token_respawn_ticks: int = 45
    beam_range: int = 4
    freeze_ticks: int = 12
    step_cooldown_ticks: int = 3
    beam_reset_cooldown: int = 25
    beam_miss_cooldown: int = 6
    view_radius: int = 7
    llm_timeout_seconds: int = 20
    min_beat_seconds: int = 17
    episode_timeout_seconds: int = 1200
    player_connect_timeout_seconds: int = 180
    shutdown_grace_seconds: int = 20

    def __post_init__(self) -> None:
        if not isinstance(self.matrix, str):
            raise SettingsError("invalid_setting", "matrix must be a variant name (string)")
        variant_named(self.matrix)
        for name, (key, low, high) in RANGES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise SettingsError("invalid_setting", f"{key} must be an integer, got {value!r}")
            if not low <= value <= high:
                raise SettingsError(
                    "setting_out_of_range", f"{key} must be in {low}..{high}, got {value}"
                )
        # Startup plus one beat's worst case (two decision batches) must fit the play deadline.
        worst = (
            self.player_connect_timeout_seconds
            + REGISTRATION_GRACE_SECONDS
            + 2 * self.llm_timeout_seconds
        )
        if worst > PLAY_DEADLINE_FRACTION * self.episode_timeout_seconds:
            raise SettingsError(
                "settings_inconsistent",
                "playerConnectTimeoutSeconds + 3 + 2 x llmTimeoutSeconds must not exceed "
                f"0.6 x episodeTimeoutSeconds ({worst} > "
                f"{PLAY_DEADLINE_FRACTION * self.episode_timeout_seconds:g})",
            )

    @property
    def variant(self) -> Variant:
        return variant_named(self.matrix)

    @property
    def max_ticks(self) -> int:
        return self.beats * self.ticks_per_beat

    @property
    def play_deadline_seconds(self) -> float:
        return PLAY_DEADLINE_FRACTION * self.episode_timeout_seconds

    @classmethod
    def from_json(cls, config: dict[str, Any]) -> Settings:
        """Settings from reference-style config keys; unknown keys are rejected."""
        by_key = {key: name for name, (key, _, _) in RANGES.items()}
        by_key["matrix"] = "matrix"
        kwargs: dict[str, Any] = {}
        for key, value in config.items():
            name = by_key.get(key)
            if name is None:
                raise SettingsError("unknown_setting", f"unknown setting {key!r}")
            kwargs[name] = value
        return cls(**kwargs)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            key = "matrix" if f.name == "matrix" else RANGES[f.name][0]
            out[key] = getattr(self, f.name)
        return out
