"""Which projections exist, so ``arena serve`` runs them and ``arena rebuild`` replays them.

A service adds its projections either in code, ``registry.register(factory)``, or — so that
``arena rebuild`` finds them without importing every service by name — with an entry point in
its pyproject.toml::

    [project.entry-points."arena.projections"]
    leaderboard = "arena_rating.projections:leaderboard"

A factory takes the settings (topic names depend on ``ARENA_TOPIC_PREFIX``) and returns one
projection or a list of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from importlib.metadata import entry_points

from arena_runtime.config import Settings
from arena_runtime.sql.projection import Projection, ProjectionError, check_projection

ENTRY_POINT_GROUP = "arena.projections"

ProjectionFactory = Callable[[Settings], Projection | Sequence[Projection]]


class ProjectionRegistry:
    def __init__(self, *, entry_point_group: str | None = ENTRY_POINT_GROUP) -> None:
        self._factories: list[ProjectionFactory] = []
        self._group = entry_point_group

    def register(self, factory: ProjectionFactory) -> ProjectionFactory:
        """Add a factory; returns it, so this works as a decorator."""
        if factory not in self._factories:
            self._factories.append(factory)
        return factory

    def unregister(self, factory: ProjectionFactory) -> None:
        self._factories.remove(factory)

    def factories(self) -> list[ProjectionFactory]:
        found = list(self._factories)
        if self._group is not None:
            for ep in entry_points(group=self._group):
                factory = ep.load()
                if factory not in found:
                    found.append(factory)
        return found

    def projections(self, settings: Settings) -> list[Projection]:
        """Every registered projection, checked, with names unique."""
        result: list[Projection] = []
        for factory in self.factories():
            made = factory(settings)
            result.extend([made] if isinstance(made, Projection) else made)
        _check_unique(result)
        return result


def _check_unique(projections: Iterable[Projection]) -> None:
    names: set[str] = set()
    tables: dict[str, str] = {}
    for projection in projections:
        check_projection(projection)
        if projection.name in names:
            raise ProjectionError(f"two projections are named {projection.name!r}")
        names.add(projection.name)
        for table in projection.tables:
            owner = tables.setdefault(table.name, projection.name)
            if owner != projection.name:
                raise ProjectionError(
                    f"table {table.name!r} is owned by both {owner!r} and {projection.name!r}"
                )


def _default_registry() -> ProjectionRegistry:
    from arena_runtime.sql.stream_activity import stream_activity_projection

    made = ProjectionRegistry()
    made.register(stream_activity_projection)
    return made


#: The registry ``arena serve`` and ``arena rebuild`` use; the runtime's own projection is in it.
registry = _default_registry()
