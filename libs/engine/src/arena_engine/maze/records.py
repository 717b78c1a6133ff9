"""Views as bounded JSON records: what the gateway pushes, one WebSocket message per record.

A view is cut into records of at most ``MAX_RECORD_BYTES`` (512) bytes of compact UTF-8 JSON.
Every record carries the envelope (``type`` "maze_view", format version ``v``) and the view's
header: ``seq`` (the state sequence), ``role``, ``phase``, ``width``, ``height``, ``meetings``
(the meeting sequence), ``chunk`` (0-based index) and ``chunks`` (count). Chunk 0 alone carries
the role's status (``status``, and ``opponent`` for a player while visible, ``players`` for an
observer). The cells (``[index, flags]``), then the objects (``[kind, owner, variant, cell]``)
follow in view order, each record taking as many as fit; an empty list is left out.
:func:`reassemble` turns the records back into the view. The format is in docs/rules/maze.md.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import accumulate
from typing import Any, Final, TypeVar

from .errors import ErrorCode, MazeError
from .state import Result
from .views import ObserverView, Opponent, PlayerView, SeatStatus, SelfStatus, View, ViewObject

MAX_RECORD_BYTES: Final = 512
RECORD_TYPE: Final = "maze_view"
RECORD_VERSION: Final = 1

_SEPARATORS: Final = (",", ":")


def _json(value: Any) -> str:
    return json.dumps(value, separators=_SEPARATORS)


def _result(result: Result | None) -> dict[str, Any] | None:
    return None if result is None else result.to_dict()


def _status(view: View) -> dict[str, Any]:
    """The members chunk 0 alone carries, in their order."""
    if isinstance(view, PlayerView):
        s = view.status
        members: dict[str, Any] = {
            "status": {
                "cell": s.cell,
                "carrying": s.carrying,
                "vision": s.vision,
                "compass": s.compass,
                "exit": s.exit,
                "result": _result(s.result),
            }
        }
        if view.opponent is not None:
            members["opponent"] = {"cell": view.opponent.cell, "carrying": view.opponent.carrying}
        return members
    players = {
        str(n): {
            "cell": p.cell,
            "carrying": p.carrying,
            "vision": p.vision,
            "exit": p.exit,
            "exit_at": p.exit_at,
        }
        for n, p in enumerate(view.players, 1)
    }
    return {"status": {"result": _result(view.result)}, "players": players}


def view_records(view: View) -> list[str]:
    """The records of ``view``, in chunk order, each at most 512 bytes of JSON text."""
    return [text for text, _ in _records(view, False)]


def view_record_values(view: View) -> list[tuple[str, dict[str, Any]]]:
    """``view_records`` with each record's object beside its text, built from the view rather
    than parsed from the text (equal to ``json.loads(text)``, members in the text's order):
    for a caller that needs both, a parse of every record of every view was most of their
    cost."""
    return [(text, value) for text, value in _records(view, True) if value is not None]


def _records(view: View, values: bool) -> list[tuple[str, dict[str, Any] | None]]:
    head = (
        f'{{"type":"{RECORD_TYPE}","v":{RECORD_VERSION},"seq":{view.state_seq},'
        f'"role":"{view.role}","phase":"{view.phase}","width":{view.width},'
        f'"height":{view.height},"meetings":{view.meetings},"chunk":'
    )
    members = _status(view)
    status = "".join(f',"{name}":' + _json(value) for name, value in members.items())
    cells = _texts(_CELL_TEXT, view.cells, _cell_text)
    objects = _texts(_OBJECT_TEXT, view.objects, _object_text)
    digits = 1
    while True:
        packs = _pack(len(head), len(status), cells, objects, digits)
        if len(str(len(packs))) <= digits:
            break
        digits += 1
    count = len(packs)
    out: list[tuple[str, dict[str, Any] | None]] = []
    for index, (c0, c1, o0, o1) in enumerate(packs):
        parts = [head, str(index), ',"chunks":', str(count)]
        if index == 0:
            parts.append(status)
        # Each item text ends with its comma; the last one's is cut off.
        if c1 > c0:
            parts += [',"cells":[', "".join(cells[c0:c1])[:-1], "]"]
        if o1 > o0:
            parts += [',"objects":[', "".join(objects[o0:o1])[:-1], "]"]
        parts.append("}")
        value: dict[str, Any] | None = None
        if values:
            value = {
                "type": RECORD_TYPE,
                "v": RECORD_VERSION,
                "seq": view.state_seq,
                "role": view.role,
                "phase": view.phase,
                "width": view.width,
                "height": view.height,
                "meetings": view.meetings,
                "chunk": index,
                "chunks": count,
            }
            if index == 0:
                value.update(members)
            if c1 > c0:
                value["cells"] = [list(cell) for cell in view.cells[c0:c1]]
            if o1 > o0:
                value["objects"] = [list(obj) for obj in view.objects[o0:o1]]
        out.append(("".join(parts), value))
    return out


# Memos of the item texts, each followed by its comma: a maze's cells and objects repeat from
# view to view. Bounded, and invisible to callers (the text of an item never changes).
_CELL_TEXT: dict[tuple[int, int], str] = {}
_OBJECT_TEXT: dict[ViewObject, str] = {}
_MEMO_LIMIT: Final = 200_000

T = TypeVar("T")


def _cell_text(cell: tuple[int, int]) -> str:
    return f"[{cell[0]},{cell[1]}],"


def _object_text(obj: ViewObject) -> str:
    return _json(list(obj)) + ","


def _texts(memo: dict[T, str], items: Sequence[T], render: Callable[[T], str]) -> list[str]:
    try:
        return list(map(memo.__getitem__, items))
    except KeyError:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        for item in items:
            if item not in memo:
                memo[item] = render(item)
        return list(map(memo.__getitem__, items))


# What a record's list adds besides its items and their commas: ',"cells":[' and ']', less the
# comma after the last item.
_CELLS_FRAME: Final = len(',"cells":[]') - 1
_OBJECTS_FRAME: Final = len(',"objects":[]') - 1
_CHUNKS: Final = len(',"chunks":')


def _pack(
    head: int, status: int, cells: list[str], objects: list[str], digits: int
) -> list[tuple[int, int, int, int]]:
    """Greedy packing: (first cell, end cell, first object, end object) per record, assuming a
    chunk count of ``digits`` digits. A record takes the next item while it stays within the
    bound; sizes are exact (every character is ASCII), from prefix sums and bisection."""
    cell_sums = list(accumulate(map(len, cells), initial=0))
    object_sums = list(accumulate(map(len, objects), initial=0))
    packs: list[tuple[int, int, int, int]] = []
    ci = oi = 0
    while True:
        index = len(packs)
        size = head + len(str(index)) + _CHUNKS + digits + 1 + (status if index == 0 else 0)
        c0, o0 = ci, oi
        if ci < len(cells):
            # Items c0..k-1 cost _CELLS_FRAME + sums[k] - sums[c0] (their texts with commas).
            room = MAX_RECORD_BYTES - size - _CELLS_FRAME + cell_sums[ci]
            ci = max(ci, bisect_right(cell_sums, room, ci) - 1)
            if ci > c0:
                size += _CELLS_FRAME + cell_sums[ci] - cell_sums[c0]
        if ci == len(cells) and oi < len(objects):
            room = MAX_RECORD_BYTES - size - _OBJECTS_FRAME + object_sums[oi]
            oi = max(oi, bisect_right(object_sums, room, oi) - 1)
            if oi > o0:
                size += _OBJECTS_FRAME + object_sums[oi] - object_sums[o0]
        if size > MAX_RECORD_BYTES or (ci == c0 and oi == o0 and index > 0):
            raise MazeError(ErrorCode.BAD_RECORDS, "an item does not fit in an empty record")
        packs.append((c0, ci, o0, oi))
        if ci == len(cells) and oi == len(objects):
            return packs


_HEADER: Final = ("type", "v", "seq", "role", "phase", "width", "height", "meetings", "chunks")


def _bad(message: str) -> MazeError:
    return MazeError(ErrorCode.BAD_RECORDS, message)


def reassemble(records: Iterable[str | bytes | Mapping[str, Any]]) -> View:
    """The view that ``records`` (JSON texts or parsed objects, in any order) were cut from.

    Refuses (``bad_records``) records of another type or version, of different views, a
    missing or repeated chunk, or status outside chunk 0.
    """
    parsed: list[Mapping[str, Any]] = []
    for record in records:
        if isinstance(record, (str, bytes)):
            try:
                record = json.loads(record)
            except ValueError as exc:
                raise _bad(f"not JSON: {exc}") from exc
        if not isinstance(record, Mapping):
            raise _bad("a record is a JSON object")
        if record.get("type") != RECORD_TYPE or record.get("v") != RECORD_VERSION:
            raise _bad(f"not a {RECORD_TYPE} record of version {RECORD_VERSION}")
        parsed.append(record)
    if not parsed:
        raise _bad("no records")
    first = parsed[0]
    try:
        header = {k: first[k] for k in _HEADER}
    except KeyError as exc:
        raise _bad(f"a record lacks {exc}") from exc
    if any({k: r.get(k) for k in _HEADER} != header for r in parsed):
        raise _bad("records of different views")
    by_chunk = sorted(parsed, key=lambda r: int(r.get("chunk", -1)))
    if [r.get("chunk") for r in by_chunk] != list(range(header["chunks"])):
        raise _bad(f"chunks must be 0..{header['chunks'] - 1}, each once")
    if any(k in r for r in by_chunk[1:] for k in ("status", "opponent", "players")):
        raise _bad("status appears in chunk 0 only")
    try:
        return _view(header, by_chunk)
    except (KeyError, TypeError, ValueError) as exc:
        raise _bad(f"malformed record: {exc!r}") from exc


def _view(header: dict[str, Any], chunks: list[Mapping[str, Any]]) -> View:
    cells = tuple((int(i), int(f)) for r in chunks for i, f in r.get("cells", ()))
    objects = tuple(
        ViewObject(str(k), o, v, int(c)) for r in chunks for k, o, v, c in r.get("objects", ())
    )
    zero = chunks[0]
    status = zero["status"]
    result = None if status["result"] is None else Result.from_dict(status["result"])
    common = (header["seq"], header["phase"], header["width"], header["height"])
    seq, phase, width, height = common
    if header["role"] == "observer":
        seats = [
            SeatStatus(p["cell"], p["carrying"], p["vision"], p["exit"], p["exit_at"])
            for p in (zero["players"]["1"], zero["players"]["2"])
        ]
        return ObserverView(
            seq,
            phase,
            width,
            height,
            header["meetings"],
            cells,
            objects,
            (seats[0], seats[1]),
            result,
        )
    me = SelfStatus(
        status["cell"],
        status["carrying"],
        status["vision"],
        status["compass"],
        status["exit"],
        result,
    )
    them = zero.get("opponent")
    opponent = None if them is None else Opponent(them["cell"], them["carrying"])
    return PlayerView(
        seq,
        int(header["role"]),
        phase,
        width,
        height,
        header["meetings"],
        cells,
        objects,
        me,
        opponent,
    )
