"""Matrix Games' pushes as models (docs/protocol.md, "Matrix Games"): a seat's ``welcome``,
``state`` (the reference's ``matrix.player.v1`` observation), ``order_accepted`` and ``final``;
the spectators' ``state`` frames (``matrix.global.v1``). Described once, for the protocol's
documents and the web client's generated types (:mod:`arena_games.pushes`). Parts the pages do
not read (the chrome frame's keys, the reference's indices) are left open.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from arena_games.pushes import Open, Push, absent

PLAYER = Literal["matrix.player.v1"]
GLOBAL = Literal["matrix.global.v1"]


class Welcome(Push):
    type: Literal["welcome"]
    protocol: PLAYER
    slot: int
    name: str
    camp: str
    variant: str
    beats: int
    ticksPerBeat: int
    match_id: str


class Board(Push):
    w: int
    h: int
    walls: list[str]


class Rules(Push):
    K: int
    tokens: list[str]
    rowPay: list[list[int]]
    colPay: list[list[int]]
    bestResponseRow: list[int]
    bestResponseCol: list[int]
    tokenCap: int
    endowment: list[int]
    beamRange: int
    freezeTicks: int
    stepCooldownTicks: int
    beamResetCooldown: int
    beamMissCooldown: int
    tokenRespawnTicks: int
    viewRadius: int
    crossCampOnly: bool


class You(Push):
    x: int
    y: int
    facing: int
    inv: list[int]
    mix: list[int]
    scoreCp: int
    freeze: int
    beamCd: int
    interactions: int
    fixedType: int


class Zone(Push):
    token: str
    x0: int
    y0: int
    x1: int
    y1: int
    cx: int
    cy: int
    tokensLeft: int


class VisibleToken(Push):
    x: int
    y: int
    token: str


class SeatCog(Push):
    """Another cog as the seat knows it: where it was last seen (``inv`` and ``mix`` null
    unless in sight)."""

    alias: str
    camp: str
    x: int
    y: int
    dist: int
    seenTicksAgo: int
    scoreCp: int
    interactions: int
    frozen: bool
    eligible: bool
    inv: list[int] | None
    mix: list[int] | None


class Interaction(Push):
    beat: int
    tick: int
    row: str
    col: str
    cell: list[str]
    rowMix: list[int]
    colMix: list[int]
    rowCp: int
    colCp: int


class Legal(Push):
    tokens: list[str]
    targets: list[str]


class Observation(Push):
    """A seat's observation at a beat boundary; ``deadline_ms`` null once the episode settled."""

    type: Literal["state"]
    protocol: PLAYER
    slot: int
    name: str
    camp: str
    variant: str
    beat: int
    beats: int
    ticksPerBeat: int
    tick: int
    board: Board
    rules: Rules
    you: You
    zones: list[Zone]
    visibleTokens: list[VisibleToken]
    cogs: list[SeatCog]
    log: list[Interaction]
    indices: Open
    legal: Legal
    notes: str
    match_id: str
    deadline_ms: int | None
    server_time_ms: int


class SpectatorSeat(Push):
    s: int
    alias: str
    name: str
    livery: str
    color: str
    camp: str
    kind: str
    x: int
    y: int
    facing: int
    inv: list[int]
    mix: list[int]
    scoreCp: int
    interactions: int
    frozen: bool
    source: str
    #: Always "private": spectators never see an intent.
    intent: Literal["private"]
    say: str
    connected: bool


class FrameEvent(Open):
    """An event of the tick (the replay's, ``docs/schemas/matrix.replay.v1.json``)."""

    k: str
    t: int
    seat: int = absent()
    row: int = absent()
    col: int = absent()
    rowCp: int = absent()
    colCp: int = absent()
    reason: str = absent()
    beat: int = absent()


class Team(Push):
    share: int
    tokensLeft: int
    cells: int


class GlobalFrame(Push):
    """The spectators' snapshot: the reference's chrome frame, the seats, the beat."""

    t: int
    mt: int
    ph: str
    pl: bool
    sp: int
    mx: int
    st: int
    lp: bool
    sk: bool
    ff: bool
    en: bool
    mm: bool
    bs: int
    teams: dict[str, Team]
    roster: list[Open]
    events: list[FrameEvent]
    over: bool
    hold: int
    seats: list[SpectatorSeat]
    beat: int
    beats_played: int
    variant: str
    indices: Open
    beats: list[Open]
    lulls: list[Any]
    lead: Open
    type: Literal["state"]
    game: str
    protocol: GLOBAL
    done: bool
    reason: str
    ending: str
    match_id: str


class OrderAccepted(Push):
    """The seat's own order, accepted for ``beat``."""

    type: Literal["order_accepted"]
    slot: int
    beat: int
    intent: str
    token: str | int
    target: str | int
    say: str
    notes: str
    match_id: str


class FinalResult(Open):
    """The reference's results object without the policy names."""

    win: list[bool]
    tokens: list[str]


class Final(Push):
    type: Literal["final"]
    done: bool
    slot: int
    scores: list[float]
    names: list[str]
    beats: int
    reason: str
    ending: str
    result: FinalResult
    match_id: str


State = Annotated[Observation | GlobalFrame, Field(discriminator="protocol")]

PUSH_MODELS: dict[str, Any] = {
    "welcome": Welcome,
    "state": State,
    "order_accepted": OrderAccepted,
    "final": Final,
}
