"""The web client against the protocol's documents: its wire types regenerated from the current
docs/asyncapi.yaml and the gateway's OpenAPI document, then `tsc --noEmit` over the whole client,
so a protocol change the client does not follow fails here; and the expression builder's unit
tests (`node --test`)."""

from __future__ import annotations

import json
import runpy
import shutil
import subprocess
from pathlib import Path

import jsonschema
from arena_engine.digits.faceoff import arrange
from arena_engine.matrix_games import Settings, write_replay
from arena_engine.matrix_games.episode import play_scripted
from arena_games.registry import STANDARD

from tests.games.play import play
from tests.web.conftest import REPO, WEB, require

NPM = shutil.which("npm")


def npm(*args: str) -> subprocess.CompletedProcess[str]:
    require(NPM is not None, "npm is missing: the web client cannot be checked")
    require((WEB / "node_modules").is_dir(), "the web client's packages: `make install`")
    assert NPM is not None
    return subprocess.run(
        [NPM, "run", "--silent", *args], cwd=WEB, capture_output=True, text=True, timeout=300
    )


def test_the_client_type_checks_against_types_generated_from_the_current_documents() -> None:
    runpy.run_path(str(WEB / "scripts" / "openapi.py"))["write"]()
    checked = npm("check")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    wire = (WEB / "src" / "gen" / "wire.ts").read_text()
    assert "export interface AckResults" in wire and "export interface Snapshot" in wire


def test_the_client_s_pure_parts_in_node() -> None:
    """The expression builder's guards and arithmetic, the Maze's view records put back
    together, the Digits Face-off's arrangements: `npm test` on the compiled modules."""
    # The Maze's records as its views make them, in a whole match of its bots (tests/maze.test.mjs).
    played = play(STANDARD.find("maze"))
    shown = {f"{v.seat}" if v.seat else "observer": m for v, m in played.views.items()}
    (WEB / ".test-build").mkdir(exist_ok=True)
    (WEB / ".test-build" / "maze-views.json").write_text(json.dumps(shown))
    # The Face-off's arrangements as the engine places them (tests/arrangement.test.mjs).
    arranged = [list(arrange(tuple(range(8)), index)) for index in range(384)]
    (WEB / ".test-build" / "digits-arrangements.json").write_text(json.dumps(arranged))
    tested = npm("test")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    assert "# fail 0" in tested.stdout


def test_matrix_replays_are_what_the_client_s_schema_says() -> None:
    """The client's Matrix replay types come from docs/schemas/matrix.replay.v1.json: the engine's
    replays (the reference's golden one, with every event kind, and one of a scripted episode)
    must validate against it, so the schema cannot drift from what the server sends."""
    schema = json.loads((REPO / "docs" / "schemas" / "matrix.replay.v1.json").read_text())
    validator = jsonschema.Draft7Validator(schema)
    golden = Path(REPO.parent / "shared" / "vectors" / "matrix-games" / "worst_case_text.replay")
    settings = Settings.from_json({"matrix": "chicken", "seed": 3, "beats": 2, "ticksPerBeat": 20})
    played = play_scripted(settings, ["counter", "tit-for-tat", "fixed-pick", "always-first"] * 2)
    docs = [json.loads(write_replay(played)), json.loads(write_replay(played, include_notes=False))]
    if golden.exists():
        docs.append(json.loads(golden.read_bytes()))
    for doc in docs:
        errors = [e.message for e in validator.iter_errors(doc)]
        assert not errors, errors[:3]
    kinds = {e["k"] for doc in docs for e in doc["events"]}
    assert {"order", "pickup", "beatclose", "end"} <= kinds
