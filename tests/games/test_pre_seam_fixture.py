"""The log written before the game seam (tests/fixtures/pre_seam) read through the seam.

Every record decodes with the registry the seam builds (legacy types upcast: CreateMatch as
StartMatch, MatchCreated as MatchOpened, GameEnded as a MatchEnded carrying it, the lobby's
version-1 settings as version 2). And the new code writes exactly what the upcasters produce:
deciding every match command of the fixture again through the game's module, with the inputs
the log recorded, gives the logged events back (what ``arena verify`` does, game-neutrally).
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections import defaultdict
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from arena_games.contract import (
    Inputs,
    MatchInfo,
    Seat,
    ServiceSettings,
    match_id_of,
    unpack,
)
from arena_games.maths_warriors import wire
from arena_games.proto_gen.arena.v1 import maths_warriors_pb2 as mw
from arena_games.registry import STANDARD
from arena_match.verify import Report
from arena_match.verify import _batches as verify_batches
from arena_runtime.envelope import Codec, Command, Event, Schemas
from arena_runtime.proto_gen.arena.v1 import lobby_pb2 as lobby
from arena_runtime.proto_gen.arena.v1 import match_pb2
from arena_runtime.schemas import accounts, rating
from arena_runtime.schemas import lobby as lobby_schemas
from arena_runtime.schemas import match as match_schemas
from arena_runtime.streams import REJECTED_TYPE, Rejection
from google.protobuf.message import Message

from tests.fixtures.pre_seam.record import dump_tables
from tests.processes.arena_process import arena_env, free_port, run_to_exit

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "pre_seam" / "events.db"
RATING_MIGRATIONS = (
    Path(__file__).resolve().parents[2] / "services/rating/src/arena_rating/migrations"
)


def seam_codec() -> Codec:
    schemas = Schemas()
    accounts.register(schemas)
    rating.register(schemas)
    STANDARD.register_schemas(schemas)
    return Codec(schemas)


def pre_seam_codec() -> Codec:
    """The registry the services used before the seam: the legacy types as types of their own
    (and the lobby at version 2, as the seam reads it)."""
    schemas = Schemas()
    accounts.register(schemas)
    rating.register(schemas)
    match_schemas.register(schemas)
    lobby_schemas.register(schemas)
    schemas.add_messages(
        (mw.CreateMatch, *wire.COMMANDS, *wire.TIMERS, mw.MatchCreated, *wire.EVENTS)
    )
    for message in wire.ROOM_SETTINGS_MESSAGES:
        schemas.add_legacy(message, version=1, upcast=wire._lobby_v2)
    return Codec(schemas)


def raw_records() -> Iterator[bytes]:
    with closing(sqlite3.connect(FIXTURE)) as db:
        topics = dict(db.execute("SELECT id, name FROM topics"))
        assert topics, "the fixture has no topics"
        for (value,) in db.execute("SELECT value FROM records ORDER BY id"):
            yield value


def decode_all(codec: Codec) -> tuple[list[Event], list[Command]]:
    events, commands = [], []
    for value in raw_records():
        try:
            events.append(codec.decode_event(value))
        except Exception:
            commands.append(codec.decode_command(value))
    return events, commands


@pytest.fixture(scope="module")
def seam() -> tuple[list[Event], list[Command]]:
    return decode_all(seam_codec())


@pytest.fixture(scope="module")
def legacy() -> tuple[list[Event], list[Command]]:
    return decode_all(pre_seam_codec())


def test_every_record_reads_through_the_seam(seam: tuple[list[Event], list[Command]]) -> None:
    events, commands = seam
    assert len(events) + len(commands) == sum(1 for _ in raw_records())
    types = {e.type for e in events} | {c.type for c in commands}
    for legacy_type in ("arena.v1.CreateMatch", "arena.v1.MatchCreated", "arena.v1.GameEnded"):
        assert legacy_type not in types
    assert {"arena.v1.StartMatch", "arena.v1.MatchOpened", "arena.v1.MatchEnded"} <= types
    # The log itself is unchanged: what was written is still said.
    written = {(e.type, e.schema_version) for e in events if e.stream.startswith("room-")}
    assert ("arena.v1.RoomOpened", 1) in written


def test_legacy_match_records_upcast_to_what_they_said(
    seam: tuple[list[Event], list[Command]], legacy: tuple[list[Event], list[Command]]
) -> None:
    new, old = seam[0], legacy[0]
    assert [e.event_id for e in new] == [e.event_id for e in old]
    checked = 0
    for now, then in zip(new, old, strict=True):
        if isinstance(then.payload, mw.MatchCreated):
            opened, created = now.payload, then.payload
            assert isinstance(opened, match_pb2.MatchOpened) and opened.game == "maths-warriors"
            settings = unpack(opened.settings, mw.MathsWarriorsSettings)
            assert settings.game_seconds == created.game_seconds
            assert settings.ruleset == created.ruleset and settings.preview == created.preview
            assert opened.service.reconnect_ms == created.reconnect_ms
            for seat, was in zip(opened.seats, created.seats, strict=True):
                assert seat.player_id == was.player_id and seat.kind == was.kind
                assert seat.policy == wire.AI_LEVELS.get(was.ai_level, "")
            checked += 1
        if isinstance(then.payload, mw.GameEnded):
            ended = now.payload
            assert isinstance(ended, match_pb2.MatchEnded)
            assert unpack(ended.detail, mw.GameEnded) == then.payload
            assert (
                ended.match_id == match_id_of(then.stream) and ended.reason == then.payload.reason
            )
            winner = [s.seat for s in ended.seats if s.rank == 1]
            assert winner == [then.payload.winner]
            checked += 1
    assert checked == 14  # 7 matches: opened and ended


def test_lobby_settings_of_version_one_read_as_the_game_neutral_version_two(
    seam: tuple[list[Event], list[Command]], legacy: tuple[list[Event], list[Command]]
) -> None:
    """A room's settings (v1 in the log) read as v2 with the same values the match that room
    started was created with (the legacy CreateMatch carries them in its own fields)."""
    events = seam[0]
    created = {
        c.payload.match_id: c.payload for c in legacy[1] if isinstance(c.payload, mw.CreateMatch)
    }
    compared = 0
    for event in events:
        payload = event.payload
        if not hasattr(payload, "settings") or not isinstance(payload.settings, lobby.RoomSettings):
            continue
        assert event.schema_version == 1
        settings = payload.settings
        assert (settings.game, settings.seats) == ("maths-warriors", 2)
        game = unpack(settings.settings, mw.MathsWarriorsSettings)
        if isinstance(payload, lobby.RoomMatchStarted | lobby.AiMatchRequested):
            match = created[payload.match_id]
            assert (game.game_seconds, game.move_seconds) == (
                match.game_seconds,
                match.move_seconds,
            )
            assert game.ruleset == match.ruleset and game.preview == match.preview
            assert settings.mode == match.mode
            compared += 1
        if isinstance(payload, lobby.AiMatchRequested):
            assert payload.policy == wire.AI_LEVELS[payload.level]
    assert compared == 6  # five room matches (a rematch among them) and the AI game


def test_deciding_every_match_command_again_through_the_game_gives_the_log(
    seam: tuple[list[Event], list[Command]],
) -> None:
    events, commands = seam
    by_stream: dict[str, list[Event]] = defaultdict(list)
    for event in events:
        if event.stream.startswith("match-"):
            by_stream[event.stream].append(event)
    sent = {(c.stream, c.command_id): c for c in commands if c.stream.startswith("match-")}
    decided = 0
    for stream, logged in by_stream.items():
        decided += _verify(stream, logged, sent)
    assert decided == 58  # 62 answered commands, less 3 presence changes and 1 refusal


def _ms(event: Event) -> int:
    return int(event.time.timestamp() * 1000)


def _recorded(batch: list[Event], name: str) -> int:
    for event in batch:
        payload = event.payload
        if isinstance(payload, match_pb2.MatchEnded):
            continue
        fields = payload.DESCRIPTOR.fields_by_name
        if name in fields and (not fields[name].has_presence or payload.HasField(name)):
            return int(getattr(payload, name))
    return 0


def _verify(stream: str, events: list[Event], sent: dict[tuple[str, str], Command]) -> int:
    """A game-neutral re-decision of one match through its game's module (what the phase-2
    match service and ``arena verify`` do); presence commands are the service's and skipped."""
    module: Any = None
    state: Any = None
    info: MatchInfo | None = None
    decided = 0
    for batch in verify_batches(events, Report()):
        command = sent[(stream, batch[0].causation_id)].payload
        inputs = Inputs(_ms(batch[0]), _recorded(batch, "seed"), _recorded(batch, "ai_seed"))
        logged = [e.payload for e in batch]
        outcome: list[Message] | Rejection
        if isinstance(command, match_pb2.StartMatch):
            module = STANDARD.find(command.game)
            opened = logged[0]
            info = MatchInfo(
                command.match_id,
                command.game,
                tuple(Seat.from_proto(n, s) for n, s in enumerate(command.seats, start=1)),
            )
            played = module.rules.settings(unpack(command.settings, module.wire.settings))
            assert not isinstance(played, Rejection)
            assert unpack(opened.settings, module.wire.settings) == played
            service = ServiceSettings(opened.service.reconnect_ms, opened.service.ai_think_ms)
            state = module.rules.initial(info, played, service)
            outcome = [opened, *module.rules.start(state, inputs)]  # type: ignore[list-item]
        elif batch[0].type == REJECTED_TYPE or isinstance(
            command, match_pb2.PlayerDisconnected | match_pb2.PlayerReconnected
        ):
            continue  # the match service's own answers (presence, refusals of unknown senders)
        else:
            assert module is not None and info is not None
            if isinstance(command, match_pb2.Resign):
                seat = info.seat_of(command.player_id)
                assert seat is not None
                outcome = module.rules.forfeit(state, seat, inputs)
            elif isinstance(command, match_pb2.ReconnectExpired):
                outcome = module.rules.forfeit(state, command.seat, inputs)
            elif isinstance(command, module.wire.timers):
                outcome = module.rules.decide(state, 0, command, inputs)
            else:
                seat = info.seat_of(command.player_id)
                assert seat is not None
                outcome = module.rules.decide(state, seat, command, inputs)
        assert not isinstance(outcome, Rejection), (stream, command, outcome)
        for event in batch:
            if not isinstance(event.payload, match_pb2.MatchOpened):
                payload = event.payload
                if isinstance(payload, match_pb2.MatchEnded):
                    payload = unpack(payload.detail, module.wire.final)
                state = module.rules.apply(state, payload, _ms(event))
        if outcome and isinstance(outcome[-1], module.wire.final):
            result = module.rules.result(state)
            assert result is not None
            outcome[-1] = result.to_proto(info.match_id, info.game, outcome[-1])  # type: ignore[union-attr]
        assert outcome == logged, (stream, command)
        decided += 1
    return decided


#: What the migration to any number of seats (rating_0002_any_seats) does to the recorded rows.
SEAT_COLUMNS = {f"seat{n}_{c}" for n in (1, 2) for c in ("id", "name", "ai")}


def migrated_from(recorded: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The tables recorded before the seam as the migration leaves them, said independently of
    its SQL: the seat columns become one ``match_seats`` row per seat (the winner ranked 1, the
    other 2), a history row gains its player's rank and the match's two seats, the statistics
    boards and the season tables start empty, every other row stays as it was."""
    tables = {name: rows for name, rows in recorded.items() if name != "alembic_version"}
    tables["match_index"] = [
        {k: v for k, v in row.items() if k not in SEAT_COLUMNS} for row in recorded["match_index"]
    ]
    tables["match_seats"] = sorted(
        (
            {
                "match_id": row["match_id"],
                "seat": n,
                "player_id": row[f"seat{n}_id"],
                "display_name": row[f"seat{n}_name"],
                "kind": "ai" if row[f"seat{n}_ai"] else "human",
                "rank": None if row["status"] != "over" else 1 if row["winner"] == n else 2,
            }
            for row in recorded["match_index"]
            for n in (1, 2)
        ),
        key=lambda r: (r["match_id"], r["seat"]),
    )
    tables["rating_history"] = [
        row | {"rank": 1 if row["result"] == "win" else 2, "seats": 2}
        for row in recorded["rating_history"]
    ]
    tables["game_statistics"] = []
    # rating_0003_seasons: Digits' per-combat standings and seasons, empty for a log without Digits.
    tables |= {"unit_standings": [], "season_standings": [], "season_games": []}
    # rating_0004_credits: the credits ledgers, empty too.
    tables["credit_movements"] = []
    # rating_0005_ghost_sharing: the owners' sharing preferences and the stream they come from.
    tables |= {"ghost_sharing": [], "ghost_streams": []}
    return tables


@pytest.mark.slow
def test_arena_verify_and_rebuild_reproduce_the_fixture(tmp_path: Path) -> None:
    """Today's code reads the old log. The projection database recorded with it migrates to
    any number of seats, moving its rows (the migrated tables are the recorded ones, seat
    columns turned into seat rows); ``arena verify --strict`` passes; and ``arena rebuild``,
    which replays the old log through the seam, gives exactly the migrated tables: "the same
    tables" across a schema migration is the migrated old rows == the rebuilt new rows."""
    data = tmp_path / "data"
    data.mkdir()
    for name in ("events.db", "projections.sqlite3"):
        shutil.copyfile(FIXTURE.parent / name, data / name)
    env = arena_env(data, free_port())
    recorded = json.loads((FIXTURE.parent / "tables.json").read_text())
    assert dump_tables(data / "projections.sqlite3") == recorded
    migrated = run_to_exit(["migrate"], env, timeout=600)
    assert migrated.returncode == 0, migrated.stdout + migrated.stderr
    before = dump_tables(data / "projections.sqlite3")
    versions = {r["version_num"] for r in before.pop("alembic_version")}
    # The rating branch at its head (its newest migration), so past rating_0002_any_seats, the
    # migration to any seats.
    head = max(p.stem for p in RATING_MIGRATIONS.glob("rating_*.py"))
    assert head in versions and "rating_0001_readmodels" not in versions
    assert before == migrated_from(recorded)
    assert len(before["match_seats"]) == 14

    verified = run_to_exit(["verify", "--strict"], env, timeout=600)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "7 matches" in verified.stdout
    rebuilt = run_to_exit(["rebuild"], env, timeout=600)
    assert rebuilt.returncode == 0, rebuilt.stdout + rebuilt.stderr
    after = dump_tables(data / "projections.sqlite3")
    assert {r["version_num"] for r in after.pop("alembic_version")} == versions
    # A projection born after the fixture (the ghost-sharing preferences) has read the log now:
    # its offsets are new rows; every other row is what the migration made.
    recorded_projections = {r["projection"] for r in before["projection_offsets"]}
    after["projection_offsets"] = [
        r for r in after["projection_offsets"] if r["projection"] in recorded_projections
    ]
    assert after == before
