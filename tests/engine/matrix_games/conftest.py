from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def golden_bytes(shared_dir: Path) -> bytes:
    return (shared_dir / "vectors" / "matrix-games" / "worst_case_text.replay").read_bytes()
