"""The Maze's settings: what an organiser may choose, with defaults and accepted ranges.

A match records the values it started with (``MatchStarted``), so a changed default never
changes a match under way. The seed's fixed numbers are constants, not settings.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Final

from .errors import ErrorCode, MazeError

#: Fixed by the seed: the FIFO's size, the view radii, the vision effect, the finish window.
QUEUE_CAPACITY: Final = 16
NORMAL_RADIUS: Final = 3
VISION_RADIUS: Final = 6
VISION_MOVES: Final = 10
FINISH_WINDOW_MS: Final = 200

#: field -> (lowest, highest). ``time_limit_ms`` may also be None (no limit).
RANGES: Final[dict[str, tuple[int, int]]] = {
    "width": (5, 41),
    "height": (5, 41),
    "cooldown_ms": (0, 600_000),
    "countdown_ms": (0, 86_400_000),
    "vision_pairs": (0, 20),
    "loops_percent": (1, 100),
    "time_limit_ms": (1_000, 86_400_000),
}


@dataclass(frozen=True, slots=True)
class MazeSettings:
    """One match's rules. Construction validates (``invalid_setting``).

    ``width``, ``height``, ``vision_pairs`` and ``loops_percent`` shape a generated maze and are
    ignored when a match starts from an explicit setup; the timing settings always apply.
    """

    width: int = 15
    height: int = 15
    cooldown_ms: int = 150
    countdown_ms: int = 3_000
    vision_pairs: int = 2
    loops_percent: int = 10
    time_limit_ms: int | None = 600_000

    def __post_init__(self) -> None:
        for name, (low, high) in RANGES.items():
            value = getattr(self, name)
            if value is None and name == "time_limit_ms":
                continue
            if isinstance(value, bool) or not isinstance(value, int):
                raise MazeError(ErrorCode.INVALID_SETTING, f"{name} must be an integer")
            if not low <= value <= high:
                raise MazeError(ErrorCode.INVALID_SETTING, f"{name} must be in {low}..{high}")

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MazeSettings:
        """Settings by name; unknown names are refused, missing ones take the defaults."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise MazeError(ErrorCode.INVALID_SETTING, f"unknown setting(s): {unknown}")
        return cls(**data)


DEFAULT_SETTINGS: Final = MazeSettings()
