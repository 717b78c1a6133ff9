"""Every relative link in README.md and docs/ leads somewhere: the file exists and, when the link
names a #anchor in a markdown file, that file has a heading with that anchor (GitHub's rule)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE = re.compile(r"`[^`]*`")
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_SRC = re.compile(r"""<(?:img|a)\b[^>]*\b(?:src|href)=["']([^"']+)["']""")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def _prose(text: str) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, with their numbers."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation other than `-` and
    `_` removed, each space a hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: Counter[str] = Counter()
    found = set()
    for _, line in _prose(path.read_text()):
        match = _HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(2))
        found.add(base if seen[base] == 0 else f"{base}-{seen[base]}")
        seen[base] += 1
    return found


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """What is wrong with the relative links of one document, one line per bad link."""
    problems = []
    for number, line in _prose(path.read_text()):
        targets = _LINK.findall(_CODE.sub("", line)) + _SRC.findall(line)
        for target in targets:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                continue  # http:, https:, mailto: ...
            file_part, _, anchor = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(root)}:{number}: {target}"
            if not linked.exists():
                problems.append(f"{where}: no such file")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                problems.append(f"{where}: no heading #{anchor} in {linked.name}")
    return problems


def test_every_relative_link_and_anchor_resolves() -> None:
    problems = [problem for path in documents() for problem in broken_links(path)]
    assert not problems, "\n".join(problems)


def test_the_checker_finds_a_broken_file_or_anchor(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## The `Hub` (hub.py)\n\n## Twice\n## Twice\n")
    doc = tmp_path / "doc.md"
    doc.write_text(
        "# Doc\n\n"
        "[fine](other.md#the-hub-hubpy) [again](other.md#twice-1) [self](#doc)\n"
        "[web](https://example.com/x.md) `[code](missing.md)`\n"
        "```\n[fenced](missing.md)\n```\n"
        "[gone](missing.md) [no anchor](other.md#nowhere) [no self](#nowhere)\n"
    )
    assert broken_links(doc, tmp_path) == [
        "doc.md:8: missing.md: no such file",
        "doc.md:8: other.md#nowhere: no heading #nowhere in other.md",
        "doc.md:8: #nowhere: no heading #nowhere in doc.md",
    ]
