"""docs/rules/digits.md must tell the truth about the catalogue and the settings."""

from __future__ import annotations

from pathlib import Path

from arena_engine.digits.catalogue import load
from arena_engine.digits.settings import DEFAULT_SETTINGS

DOC = Path(__file__).resolve().parents[3] / "docs" / "rules" / "digits.md"


def test_catalogue_table_matches_the_data_file() -> None:
    rows = {
        cells[0]: cells
        for line in DOC.read_text(encoding="utf-8").splitlines()
        if line.startswith("| ")
        for cells in [[c.strip() for c in line.strip("|").split("|")]]
    }
    catalogue = load()
    for kind in catalogue.kinds:
        row = rows[kind.name]
        assert row[1:5] == [
            str(kind.tier),
            str(DEFAULT_SETTINGS.prices[kind.tier - 1]),
            str(kind.atk),
            str(kind.hp),
        ], kind.name
        assert row[5] == f"+{kind.growth_atk}, +{kind.growth_hp}"
        assert row[6] == " / ".join(map(str, kind.values))
        assert row[7] == ("yes" if kind.reach else "no")
        assert row[8] == ("yes" if kind.support else "no")
    assert catalogue.version in DOC.read_text(encoding="utf-8")
