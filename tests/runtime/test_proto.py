"""proto/ is lint-clean (buf) and the committed generated code matches it: the runtime's and the
games' (each proto file is generated into exactly one of them)."""

from __future__ import annotations

import filecmp
import shutil
import subprocess
from pathlib import Path

import pytest
from arena_games import proto_build as games_proto_build
from arena_runtime import proto_build

ROOT = Path(__file__).resolve().parents[2]
BUF = ROOT / "tools" / "node_modules" / ".bin" / "buf"


def _tree(directory: Path) -> set[str]:
    return {
        str(p.relative_to(directory))
        for p in directory.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.parametrize("proto_set", games_proto_build.SETS, ids=lambda s: s.package)
def test_generated_code_is_up_to_date(tmp_path: Path, proto_set: proto_build.ProtoSet) -> None:
    fresh = tmp_path / "proto_gen"
    others = [s for s in games_proto_build.SETS if s is not proto_set]
    proto_build.generate(fresh, proto_set=proto_set, elsewhere=others)
    committed = proto_set.out_dir
    assert _tree(fresh) == _tree(committed), "run `make proto` and commit proto_gen/"
    stale = [
        name
        for name in sorted(_tree(fresh))
        if not filecmp.cmp(fresh / name, committed / name, shallow=False)
    ]
    assert not stale, f"stale generated files {stale}: run `make proto` and commit proto_gen/"


def test_every_proto_file_is_generated_into_exactly_one_package() -> None:
    files = [name for s in games_proto_build.SETS for name in s.files]
    on_disk = [str(p.relative_to(proto_build.PROTO_ROOT)) for p in proto_build.proto_files()]
    assert sorted(files) == sorted(on_disk) and len(set(files)) == len(files)


def test_a_file_importing_one_no_set_holds_is_refused(tmp_path: Path) -> None:
    # The runtime holds no game code: were the lobby to import a game's file again, its build
    # fails (the import would name a module the runtime does not have).
    protos = tmp_path / "proto"
    shutil.copytree(proto_build.PROTO_ROOT, protos)
    lobby = protos / "arena" / "v1" / "lobby.proto"
    lobby.write_text(
        lobby.read_text().replace(
            'import "arena/v1/match.proto";',
            'import "arena/v1/match.proto";\nimport "arena/v1/maths_warriors.proto";',
        )
        + "\nmessage Uses {\n  MatchRuleset ruleset = 1;\n}\n"
    )
    with pytest.raises(proto_build.ProtoBuildError, match="maths_warriors_pb2"):
        proto_build.generate(tmp_path / "out", protos)


def test_a_stale_copy_is_detected(tmp_path: Path) -> None:
    # The check above must be able to fail: a proto change yields different generated code.
    protos = tmp_path / "proto"
    shutil.copytree(proto_build.PROTO_ROOT, protos)
    source = (proto_build.PROTO_ROOT / "arena" / "v1" / "envelope.proto").read_text()
    (protos / "arena" / "v1" / "envelope.proto").write_text(
        source + "\nmessage Added {\n  string field = 1;\n}\n"
    )
    changed = tmp_path / "changed"
    proto_build.generate(changed, protos)
    name = "arena/v1/envelope_pb2.py"
    assert not filecmp.cmp(changed / name, proto_build.OUTPUT_DIR / name, shallow=False)


def test_generated_modules_import_each_other_inside_the_package() -> None:
    for proto_set in games_proto_build.SETS:
        for path in proto_set.out_dir.rglob("*_pb2.py*"):
            text = path.read_text()
            assert "\nfrom arena." not in text and "\nimport arena." not in text, path


def _buf() -> str:
    assert BUF.exists(), "buf is missing: run `make install` (npm ci --prefix tools)"
    return str(BUF)


def test_buf_lint() -> None:
    proc = subprocess.run(
        [_buf(), "lint", "proto"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_buf_lint_can_fail(tmp_path: Path) -> None:
    (tmp_path / "buf.yaml").write_text((proto_build.PROTO_ROOT / "buf.yaml").read_text())
    (tmp_path / "arena" / "v1").mkdir(parents=True)
    (tmp_path / "arena" / "v1" / "bad.proto").write_text(
        'syntax = "proto3";\npackage arena.v1;\nmessage bad_name {\n  string X = 1;\n}\n'
    )
    proc = subprocess.run([_buf(), "lint"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode != 0 and "bad_name" in proc.stdout


def test_no_breaking_change_against_the_published_schemas() -> None:
    baseline = proto_build.PROTO_ROOT / "baseline.binpb"
    proc = subprocess.run(
        [_buf(), "breaking", "proto", "--against", str(baseline)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_buf_breaking_can_fail(tmp_path: Path) -> None:
    changed = tmp_path / "proto"
    shutil.copytree(proto_build.PROTO_ROOT, changed)
    envelope = changed / "arena" / "v1" / "envelope.proto"
    envelope.write_text(
        envelope.read_text().replace("uint64 sequence = 3;", "string sequence = 3;")
    )
    proc = subprocess.run(
        [_buf(), "breaking", str(changed), "--against", str(changed / "baseline.binpb")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and "sequence" in proc.stdout
