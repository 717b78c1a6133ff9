"""Digits' rules on the seam: the engine's game (:mod:`arena_engine.digits`) behind the
contract's Rules, one player (seat 1) against saved armies, for days.

The whole state is the server's: Focus pages are shown one by one with their deadline, and the
clocks run whether anyone is connected or not (presence ``none``: nobody is waited for, nobody
forfeits for being away). Every deadline is a timer command (``timer:<kind>:<deadline_ms>``):
a Focus page (unanswered, it moves on), the Training question, a room's shop clock, the
Face-off clock (the last order accepted fights), a room's next round, midnight (daily), the
duel's deadline and the 7-day expiry.

The opposing army comes from outside the game, so ending the shop is two steps: ``ShopClosing``
records the end-of-shop slate (what the ghost store saves) and the Face-off opens when the army
comes, as ``DrawArmy`` from the store, a room or a duel's schedule (a seat-0 command of
another service), or, when none came within ``army_wait_ms``, as a house ghost drawn from the
recorded seed (``ArmyDue``). Trial games face house ghosts and the tutorial its tutorial ghosts
at once; a duel whose armies were drawn at acceptance (``settings.opponents``) faces them at
once. The Face-off clock starts when the army is shown.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

from arena_engine.digits import DEFAULT_SETTINGS, DigitsSettings, GameState, Slate
from arena_engine.digits import Rejection as EngineRejection
from arena_engine.digits import commands as cmd
from arena_engine.digits import events as ev
from arena_engine.digits.catalogue import load
from arena_engine.digits.game import FACEOFF, FOCUS, OVER, SHOP, WAITING, tutorial_predict
from arena_engine.digits.game import apply as engine_apply
from arena_engine.digits.game import decide as engine_decide
from arena_engine.digits.ghosts import GhostError, house_ghost
from arena_engine.digits.schedules import duel_house_record
from arena_engine.digits.slate import EMPTY_SLATE, SlateError, check_slate
from arena_engine.digits.status import MODES
from arena_runtime.streams import Rejection
from google.protobuf.message import Message

from arena_games.contract import (
    Decision,
    GameError,
    Inputs,
    MatchInfo,
    Presence,
    ReconnectPolicy,
    Result,
    Seat,
    ServiceSettings,
    Thought,
    Timer,
)
from arena_games.digits import lobby, wire
from arena_games.lobby_form import INVALID_SETTINGS
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb

NOT_STARTED = "not_started"
GAME_OVER = "game_over"
NOT_A_SEAT = "not_a_seat"
ARMY_COMING = "army_coming"
NOT_WAITING_FOR_ARMY = "not_waiting_for_army"
BAD_ARMY = "bad_army"
STALE_TIMER = "stale_timer"
TIMER_NOT_DUE = "timer_not_due"
UNKNOWN_COMMAND = "unknown_command"
SEED_MASK = (1 << 63) - 1

NO_SHARED_SEED = "no_shared_seed"
#: The seeds a mode's players share, which the services must give (the lobby's).
SHARED_SEEDS = lobby.SHARED_SEEDS
#: Modes whose opponents come from outside the game (the store, a room, a duel's schedule),
#: and the modes that face the game's own ghosts at once.
HOUSE_AT_ONCE = ("trial", "tutorial")


@dataclass(frozen=True, slots=True)
class Closing:
    """The round whose shop closed, waiting for its army since ``closed_ms``."""

    round_no: int
    closed_ms: int
    timed_out: bool


@dataclass(frozen=True, slots=True)
class DigitsMatch:
    """A Digits game as its rules fold it."""

    seats: tuple[Seat, ...] = ()
    mode: str = "casual"
    room_code: str = ""
    #: As played (lobby.check's: every default filled).
    settings: pb.DigitsSettings = field(default_factory=pb.DigitsSettings)
    #: The engine's game; None before DigitsStarted.
    game: GameState | None = None
    started_ms: int = 0
    closing: Closing | None = None
    #: The army of the open Face-off (kept until the next round starts, for the combat's report).
    army: pb.Army | None = None
    #: The last Predict answered in this Face-off (the tutorial).
    predicted: pb.Predicted | None = None
    ended: pb.DigitsEnded | None = None
    #: The player took an action in this game (:func:`by_player`): a duel's "started".
    acted: bool = False

    @property
    def over(self) -> bool:
        return self.ended is not None


class _Refused(GameError):
    pass


# -- settings, seeds, armies ------------------------------------------------------------------


def engine_settings(settings: pb.DigitsSettings, mode: str) -> DigitsSettings:
    """The engine's settings of a game played with these (lobby-checked) settings. The Face-off
    clock: the host's in a room; none in the tutorial (a guided round, with Predict) or casual
    (the engine's rule); 60 s otherwise."""
    return replace(
        DEFAULT_SETTINGS,
        room_rounds_default=settings.room_rounds,
        room_shop_seconds=settings.room_shop_seconds,
        faceoff_seconds=(
            settings.faceoff_seconds
            if mode == "room"
            else None
            if mode == "tutorial"
            else DEFAULT_SETTINGS.faceoff_seconds
        ),
        human_answer_ms=settings.human_answer_ms,
    )


def derived_seed(seed: int, label: str) -> int:
    digest = hashlib.blake2b(f"{seed}:{label}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") & SEED_MASK


def army_to_proto(
    slate: Slate, round_no: int, wins: int, losses: int, seed: int, tutorial: bool = False
) -> pb.Army:
    """A house (or tutorial) ghost's army, shown as one."""
    return pb.Army(
        slate=wire.slate_to_proto(slate),
        house=True,
        tutorial=tutorial,
        round=round_no,
        wins=wins,
        losses=losses,
        pool="house",
        tier="house",
        seed=seed,
    )


def house_army(game: GameState, mode: str, seed: int) -> pb.Army:
    """The game's own ghost for its round: a tutorial ghost (the weakest Focus: no wins), a
    duel's house record, or the player's record."""
    round_no = game.round_no
    if mode == "tutorial":
        wins, losses = 0, min(round_no - 1, game.settings.loss_limit - 1)
    elif mode == "duel":
        wins, losses = duel_house_record(round_no, game.settings)
    else:
        wins, losses = game.wins, min(game.losses, round_no - 1 - game.wins)
    round_no = min(round_no, game.settings.max_rounds)
    built = house_ghost(round_no, wins, losses, seed, game.settings)
    return army_to_proto(built.slate, round_no, wins, losses, seed, tutorial=mode == "tutorial")


def unbuilt(army: pb.Army) -> bool:
    """A house ghost the store chose without building it (the game builds it, off the event
    loop): no slate, its record and seed."""
    return army.house and not army.slate.cells


def build_house(army: pb.Army, game: GameState) -> pb.Army:
    """The unbuilt house ghost ``army`` built for the game's round (BAD_ARMY when its record
    cannot be one of that round's)."""
    if army.round != game.round_no:
        raise _Refused(BAD_ARMY, f"a house ghost of round {army.round}, not {game.round_no}")
    try:
        built = house_ghost(army.round, army.wins, army.losses, army.seed, game.settings)
    except GhostError as exc:
        raise _Refused(BAD_ARMY, f"no house ghost for that record: {exc.code}") from None
    whole = pb.Army()
    whole.CopyFrom(army)
    whole.slate.CopyFrom(wire.slate_to_proto(built.slate))
    return whole


def army_slate(army: pb.Army, game: GameState) -> Slate:
    """The army's slate, checked against the game's catalogue (BAD_ARMY otherwise)."""
    try:
        slate = wire.slate_of(army.slate)
        check_slate(slate, load(game.catalogue_version))
    except (ValueError, SlateError) as exc:
        raise _Refused(BAD_ARMY, f"not an army of this game: {exc}") from None
    return slate


# -- folding ----------------------------------------------------------------------------------


def by_player(event: Message) -> bool:
    """Whether only the player's own command causes this event: the Focus started (page 0),
    an answer given (a page's or Training's timeout records none), a shop action, the shop
    ended by the player (not its clock), an arrangement or a Predict. A combat is not one: the
    Face-off's clock fights too."""
    if isinstance(event, pb.QuestionShown):
        return event.index == 0
    if isinstance(event, (pb.FocusAnswered, pb.TrainingAnswered)):
        return event.HasField("answer")
    if isinstance(event, pb.ShopClosing):
        return not event.timed_out
    return isinstance(
        event,
        (pb.Bought, pb.Sold, pb.Moved, pb.Rerolled, pb.TrainingShown, pb.Arranged, pb.Predicted),
    )


def _with_acted(state: DigitsMatch, out: list[Message]) -> list[Message]:
    """The game's DigitsEnded says whether the player acted (before or in this decision)."""
    acted = state.acted
    for message in out:
        acted = acted or by_player(message)
        if isinstance(message, pb.DigitsEnded):
            message.acted = acted
    return out


def fold(state: DigitsMatch, event: Message, time_ms: int) -> DigitsMatch:
    event = wire.unwrapped(event)
    if not state.acted and by_player(event):
        state = replace(state, acted=True)
    if isinstance(event, pb.DigitsStarted):
        started = ev.GameStarted(
            event.mode,
            event.player_seed,
            event.shop_seed,
            event.room_rounds or None,
            engine_settings(event.settings, event.mode),
            event.catalogue_version,
            event.ends_ms if event.HasField("ends_ms") else None,
        )
        return replace(
            state, game=engine_apply(None, started), started_ms=time_ms, settings=event.settings
        )
    if isinstance(event, pb.ShopClosing):
        return replace(state, closing=Closing(event.round, time_ms, event.timed_out))
    if isinstance(event, pb.Predicted):
        return replace(state, predicted=event)
    engine_event = wire.engine_event(event)
    if engine_event is None or state.game is None:
        return state
    game = engine_apply(state.game, engine_event)
    if isinstance(event, pb.ShopEnded):
        return replace(state, game=game, closing=None, army=event.army, predicted=None)
    if isinstance(event, pb.Arranged):
        return replace(state, game=game, predicted=None)
    if isinstance(event, pb.RoundStarted):
        return replace(state, game=game, army=None, predicted=None)
    if isinstance(event, pb.DigitsEnded):
        return replace(state, game=game, closing=None, ended=event)
    return replace(state, game=game)


def messages(game: GameState | None, events: list[ev.Event], army: pb.Army | None) -> list[Message]:
    """The messages of engine events decided on ``game``: GameEnded becomes a DigitsEnded with
    the record of that moment."""
    out: list[Message] = []
    for event in events:
        if isinstance(event, ev.GameEnded):
            assert game is not None
            game = engine_apply(game, event)
            out.append(
                pb.DigitsEnded(
                    status=event.status,
                    reason=event.reason,
                    wins=game.wins,
                    losses=game.losses,
                    draws=game.draws,
                    margin=game.margin,
                    focus_right=game.focus_right_total,
                    voided=game.voided,
                )
            )
            continue
        out.append(wire.event_to_proto(event, army))
        game = engine_apply(game, event)
    return out


def _engine(game: GameState, command: cmd.Command, context: cmd.Context) -> list[ev.Event]:
    decided = engine_decide(game, command, context)
    if isinstance(decided, EngineRejection):
        raise _Refused(decided.code, f"{type(command).__name__}: {decided.code}")
    return decided


# -- the rules --------------------------------------------------------------------------------


class DigitsRules:
    """One player against saved armies; the clocks run with nobody connected."""

    reconnect = ReconnectPolicy(Presence.NONE)
    #: House ghosts' armies are built in ``think`` (tens of milliseconds by round 12).
    thinks: tuple[type[Message], ...] = (pb.DrawArmy, pb.ArmyDue, pb.EndShop)

    def settings(self, given: Message | None) -> Message | Rejection:
        if given is not None and not isinstance(given, pb.DigitsSettings):
            return Rejection(INVALID_SETTINGS, "not Digits settings")
        try:
            return lobby.check(given)
        except GameError as exc:
            return exc.rejection()

    def initial(self, match: MatchInfo, settings: Message, service: ServiceSettings) -> DigitsMatch:
        assert isinstance(settings, pb.DigitsSettings)
        return DigitsMatch(match.seats, match.mode, match.room_code, settings)

    def start(self, state: DigitsMatch, inputs: Inputs) -> Decision:
        if state.game is not None:
            return Rejection("game_exists", "the game has started")
        s = state.settings
        if state.mode not in MODES:
            return Rejection("unknown_mode", f"Digits has no mode {state.mode!r}")
        missing = [name for name in SHARED_SEEDS.get(state.mode, ()) if not s.HasField(name)]  # type: ignore[arg-type]
        if missing:
            return Rejection(
                NO_SHARED_SEED,
                f"a {state.mode} game shares its {' and '.join(missing)} with the other players",
            )
        seed = inputs.seed & SEED_MASK
        player_seed = s.player_seed if s.HasField("player_seed") else derived_seed(seed, "player")
        shop_seed = s.shop_seed if s.HasField("shop_seed") else derived_seed(seed, "shop")
        room = state.mode == "room"
        start = cmd.StartGame(
            state.mode,
            player_seed,
            shop_seed,
            room_rounds=s.room_rounds if room else None,
            settings=engine_settings(s, state.mode),
            missed_rounds=s.missed_rounds if room else 0,
            ends_ms=s.ends_ms if s.HasField("ends_ms") else None,
        )
        if state.mode == "duel" and s.opponents and len(s.opponents) != lobby.DUEL_ROUNDS:
            return Rejection("invalid_opponents", "a duel draws one army per round")
        decided = engine_decide(None, start, cmd.Context(inputs.now_ms))
        if isinstance(decided, EngineRejection):
            return Rejection(decided.code, f"the game cannot start: {decided.code}")
        first, rest = decided[0], decided[1:]
        assert isinstance(first, ev.GameStarted)
        played = pb.DigitsSettings()
        played.CopyFrom(s)
        played.player_seed, played.shop_seed = player_seed, shop_seed
        started = pb.DigitsStarted(
            mode=first.mode,
            player_seed=first.player_seed,
            shop_seed=first.shop_seed,
            room_rounds=first.room_rounds or 0,
            settings=played,
            catalogue_version=first.catalogue_version,
            seed=seed,
        )
        if first.ends_ms is not None:
            started.ends_ms = first.ends_ms
        game = engine_apply(None, first)
        return [started, *messages(game, rest, None)]

    def apply(self, state: DigitsMatch, event: Message, time_ms: int) -> DigitsMatch:
        return fold(state, event, time_ms)

    def decide(self, state: DigitsMatch, seat: int, command: Message, inputs: Inputs) -> Decision:
        try:
            if state.game is None:
                raise _Refused(NOT_STARTED, "the game has not started")
            if seat == 0:
                return _with_acted(state, self._service(state, state.game, command, inputs))
            if seat != 1:
                raise _Refused(NOT_A_SEAT, f"Digits has one seat, not {seat}")
            return _with_acted(state, self._player(state, state.game, command, inputs))
        except GameError as exc:
            return exc.rejection()

    # -- the player ----------------------------------------------------------------------------

    def _player(
        self, state: DigitsMatch, game: GameState, command: Message, inputs: Inputs
    ) -> list[Message]:
        now_ms = inputs.now_ms
        if state.over:
            raise _Refused(GAME_OVER, "the game is over")
        if state.closing is not None:
            raise _Refused(ARMY_COMING, "the shop is closed: the opposing army is on its way")
        context = cmd.Context(now_ms)
        if isinstance(command, pb.EndShop):
            _engine(game, cmd.EndShop(), cmd.Context(now_ms, EMPTY_SLATE))  # its checks only
            return self._close(state, game, now_ms, timed_out=False, inputs=inputs)
        if isinstance(command, pb.Predict):
            predicted = tutorial_predict(game, command.arrangement)
            if isinstance(predicted, EngineRejection):
                raise _Refused(predicted.code, f"Predict: {predicted.code}")
            return [
                pb.Predicted(
                    arrangement=command.arrangement,
                    result=predicted.result,
                    margin=predicted.margin,
                    exchanges=predicted.exchanges,
                )
            ]
        engine_command = _player_command(command)
        return messages(game, _engine(game, engine_command, context), state.army)

    def _close(
        self,
        state: DigitsMatch,
        game: GameState,
        now_ms: int,
        timed_out: bool,
        inputs: Inputs | None = None,
    ) -> list[Message]:
        """The shop closes: the end-of-shop slate recorded, and the Face-off opened at once when
        the army is the game's own (trial, tutorial, a duel drawn at acceptance)."""
        player = state.seats[0] if state.seats else None
        closing = pb.ShopClosing(
            round=game.round_no,
            slate=wire.slate_to_proto(game.slate),
            wins=game.wins,
            losses=game.losses,
            timed_out=timed_out,
            # What the ghost store files the slate under (it reads no other event of the game).
            player_id=player.player_id if player else "",
            login=player.display_name if player else "",
            mode=state.mode,
            room_code=state.room_code,
        )
        army: pb.Army | None = None
        if state.mode in HOUSE_AT_ONCE:
            army = _thought(state, inputs) or house_army(game, state.mode, own_ghost_seed(state))
        elif state.mode == "duel" and state.settings.opponents:
            army = state.settings.opponents[game.round_no - 1]
        if army is None:
            return [closing]
        after = fold(state, closing, now_ms)
        return [closing, *self._army(after, game, army, now_ms)]

    def _army(
        self, state: DigitsMatch, game: GameState, army: pb.Army, now_ms: int
    ) -> list[Message]:
        """The Face-off opens against ``army`` (the shop ends as it closed)."""
        assert state.closing is not None
        opponent = army_slate(army, game)
        context = cmd.Context(now_ms, opponent)
        over = game.shop_deadline_ms is not None and now_ms >= game.shop_deadline_ms
        command: cmd.Command = cmd.ShopTimeout(game.round_no) if over else cmd.EndShop()
        return messages(game, _engine(game, command, context), army)

    # -- timers and the services ---------------------------------------------------------------

    def _service(
        self, state: DigitsMatch, game: GameState, command: Message, inputs: Inputs
    ) -> list[Message]:
        now = inputs.now_ms
        if isinstance(command, pb.VoidGame):
            return messages(
                game, _engine(game, cmd.Void(command.by, command.why), cmd.Context(now)), None
            )
        if state.over:
            raise _Refused(GAME_OVER, "the game is over")
        if isinstance(command, pb.DrawArmy):
            if state.closing is None or command.round != state.closing.round_no:
                raise _Refused(NOT_WAITING_FOR_ARMY, f"no shop of round {command.round} waits")
            army = command.army
            if unbuilt(army):
                army = _thought(state, inputs) or build_house(army, game)
            return self._army(state, game, army, now)
        if not isinstance(command, wire.TIMERS):
            raise _Refused(UNKNOWN_COMMAND, f"{type(command).__name__} is not a Digits command")
        armed = {timer.command_id: timer for timer in self.timers(state)}
        command_id = timer_id(command)
        timer = armed.get(command_id)
        if timer is None:
            raise _Refused(STALE_TIMER, "the deadline moved on")
        if now < timer.due_ms:
            raise _Refused(TIMER_NOT_DUE, "the deadline is not yet due")
        if isinstance(command, pb.ArmyDue):
            assert state.closing is not None
            army = _thought(state, inputs) or house_army(
                game, state.mode, inputs.ai_seed & SEED_MASK
            )
            return self._army(state, game, army, now)
        if isinstance(command, pb.ShopDue):
            return self._close(state, game, now, timed_out=True)
        engine_command: cmd.Command
        if isinstance(command, pb.QuestionDue):
            engine_command = cmd.QuestionTimeout(command.round, command.index)
        elif isinstance(command, pb.TrainingDue):
            engine_command = cmd.TrainingTimeout(command.round)
        elif isinstance(command, pb.FaceoffDue):
            engine_command = cmd.Fight()
        elif isinstance(command, pb.RoundDue):
            engine_command = cmd.OpenRound(command.round, command.due_ms)
        else:
            assert isinstance(command, pb.StopDue)
            engine_command = cmd.Stop(command.reason)
        decided = _engine(game, engine_command, cmd.Context(now))
        if not decided:
            raise _Refused(STALE_TIMER, "the deadline moved on")
        return messages(game, decided, state.army)

    def timers(self, state: DigitsMatch) -> list[Timer]:
        game = state.game
        if game is None or state.over or game.phase == OVER:
            return []
        out: list[Timer] = []

        def arm(due: int, message: Message) -> None:
            out.append(Timer(due, timer_id(message), message))

        for reason, due in (("midnight", game.ends_ms), ("deadline", game.ends_ms)):
            wanted = "daily" if reason == "midnight" else "duel"
            if due is not None and game.mode == wanted:
                arm(due, pb.StopDue(reason=reason, due_ms=due))
        if game.expires_ms is not None:
            arm(game.expires_ms, pb.StopDue(reason="expired", due_ms=game.expires_ms))
        r = game.round_no
        if state.closing is not None:
            due = state.closing.closed_ms + state.settings.army_wait_ms
            if game.shop_deadline_ms is not None:
                due = max(due, game.shop_deadline_ms + state.settings.army_wait_ms)
            arm(due, pb.ArmyDue(round=state.closing.round_no, due_ms=due))
            return sorted(out)
        if game.phase == FOCUS and game.question is not None and game.question_deadline_ms:
            due = game.question_deadline_ms
            arm(due, pb.QuestionDue(round=r, index=game.question_index, deadline_ms=due))
        if game.phase == SHOP and game.training_deadline_ms is not None:
            arm(
                game.training_deadline_ms,
                pb.TrainingDue(round=r, deadline_ms=game.training_deadline_ms),
            )
        if game.phase in (FOCUS, SHOP) and game.shop_deadline_ms is not None:
            arm(game.shop_deadline_ms, pb.ShopDue(round=r, deadline_ms=game.shop_deadline_ms))
        if game.phase == FACEOFF and game.faceoff_deadline_ms is not None:
            arm(
                game.faceoff_deadline_ms,
                pb.FaceoffDue(round=r, deadline_ms=game.faceoff_deadline_ms),
            )
        if state.mode == "room" and game.phase in (WAITING, FACEOFF):
            rounds = game.room_rounds or 0
            if r < rounds:
                due = round_opens_ms(state, r + 1)
                arm(due, pb.RoundDue(round=r + 1, due_ms=due))
        return sorted(out)

    def forfeit(self, state: DigitsMatch, seat: int, inputs: Inputs) -> Decision:
        try:
            if state.game is None:
                raise _Refused(NOT_STARTED, "the game has not started")
            if state.over:
                raise _Refused(GAME_OVER, "the game is over")
            if seat != 1:
                raise _Refused(NOT_A_SEAT, f"Digits has one seat, not {seat}")
            decided = _engine(state.game, cmd.Stop("forfeit"), cmd.Context(inputs.now_ms))
            return _with_acted(state, messages(state.game, decided, state.army))
        except GameError as exc:
            return exc.rejection()

    def result(self, state: DigitsMatch) -> Result | None:
        return None if state.ended is None else wire.result_of(state.ended)

    def think(self, state: DigitsMatch, command: Message, seed: int) -> Thought | None:
        """A house ghost's army, built off the event loop (a bot plays every shop up to the
        round: tens of milliseconds by round 12): for the ``army-<round>`` timer (from its
        seed, the decision's ``ai_seed``) and for ending the shop of a trial or the tutorial."""
        game = state.game
        if game is None or state.over:
            return None
        closing = state.closing
        if isinstance(command, pb.DrawArmy) and closing is not None and unbuilt(command.army):
            try:
                return Thought(state, seed, build_house(command.army, game))
            except GameError:
                return None  # deciding refuses it
        if isinstance(command, pb.ArmyDue) and state.closing is not None:
            return Thought(state, seed, house_army(game, state.mode, seed & SEED_MASK))
        if isinstance(command, pb.EndShop) and state.mode in HOUSE_AT_ONCE:
            return Thought(state, seed, house_army(game, state.mode, own_ghost_seed(state)))
        return None


def own_ghost_seed(state: DigitsMatch) -> int:
    """A trial's house ghosts and the tutorial's ghosts come from the game's shop seed."""
    return derived_seed(state.settings.shop_seed, "house")


def _thought(state: DigitsMatch, inputs: Inputs | None) -> pb.Army | None:
    """The army thought ahead for this very state with this decision's seed, if any."""
    if inputs is None or inputs.thought is None:
        return None
    thought = inputs.thought
    if thought.state is not state or thought.seed != inputs.ai_seed:
        return None
    return thought.choice if isinstance(thought.choice, pb.Army) else None


def round_opens_ms(state: DigitsMatch, round_no: int) -> int:
    """When a room's round opens on the host's clock: round 1 at the room's start, then one
    round every shop + army wait + Face-off + combat time."""
    s = state.settings
    first = s.room_started_ms if s.HasField("room_started_ms") else state.started_ms
    period = (s.room_shop_seconds + s.faceoff_seconds + s.room_combat_seconds) * 1000
    return first + (round_no - 1) * (period + s.army_wait_ms)


def timer_id(message: Message) -> str:
    if isinstance(message, pb.QuestionDue):
        return f"timer:question-{message.round}-{message.index}:{message.deadline_ms}"
    if isinstance(message, pb.TrainingDue):
        return f"timer:training-{message.round}:{message.deadline_ms}"
    if isinstance(message, pb.ShopDue):
        return f"timer:shop-{message.round}:{message.deadline_ms}"
    if isinstance(message, pb.FaceoffDue):
        return f"timer:faceoff-{message.round}:{message.deadline_ms}"
    if isinstance(message, pb.ArmyDue):
        return f"timer:army-{message.round}:{message.due_ms}"
    if isinstance(message, pb.RoundDue):
        return f"timer:round-{message.round}:{message.due_ms}"
    if isinstance(message, pb.StopDue):
        return f"timer:{message.reason or 'stop'}:{message.due_ms}"
    raise TypeError(f"not a Digits timer: {message!r}")


def _player_command(command: Message) -> cmd.Command:
    if isinstance(command, pb.StartFocus):
        return cmd.StartFocus()
    if isinstance(command, pb.AnswerFocus):
        return cmd.AnswerFocus(command.answer)
    if isinstance(command, pb.Buy):
        offer: int | str = wire.BRIGHT if command.bright else command.offer
        return cmd.Buy(offer, command.cell if command.HasField("cell") else None)
    if isinstance(command, pb.Sell):
        return cmd.Sell(command.cell)
    if isinstance(command, pb.MoveDigit):
        return cmd.Move(command.src, command.dst)
    if isinstance(command, pb.Reroll):
        return cmd.Reroll()
    if isinstance(command, pb.Train):
        return cmd.Train(command.cell)
    if isinstance(command, pb.AnswerTraining):
        return cmd.AnswerTraining(command.answer)
    if isinstance(command, pb.Arrange):
        return cmd.Arrange(command.arrangement)
    if isinstance(command, pb.Fight):
        return cmd.Fight()
    raise _Refused(UNKNOWN_COMMAND, f"{type(command).__name__} is not a Digits command")
