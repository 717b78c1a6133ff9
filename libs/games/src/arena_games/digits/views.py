"""What Digits shows each viewer (docs/protocol.md, "Digits").

The player (seat 1) is pushed, for each event, a message saying what happened (``digits_<event>``,
the fields a client draws: a Focus page's text and deadline, never its answer) and then the
whole game as it stands (``digits_game``): the phase, the record, the open Focus page or the
shop (gold, offers with their prices, the bright offer, Training), the slate, and in the
Face-off the army shown in full (digits, levels, ATK, HP, effects, its player's record and
name as they share it), the order chosen and its clock. Every deadline is the server's, with
``server_time_ms`` beside it: the clocks run with the page closed. A combat is pushed with its
full step-by-step report (``digits_combat``), for the replay.

Anyone else (a spectator: a room's or a duel's other player, a feed) sees only the record
(``digits_record``). ``hidden`` lists what no push may contain: the seeds, the open page's
answer, the Focus pages not shown yet, and for a spectator the player's questions and slate.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from arena_engine.digits.catalogue import Catalogue, load
from arena_engine.digits.economy import price
from arena_engine.digits.faceoff import ARRANGEMENT_COUNT
from arena_engine.digits.game import FOCUS, combat_of
from arena_engine.digits.questions import focus_questions
from arena_engine.digits.slate import Slate
from arena_engine.digits.status import last_round
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message
from pydantic import BaseModel

from arena_games.contract import GameError, Table, Viewer
from arena_games.digits import wire
from arena_games.digits.rules import DigitsMatch
from arena_games.proto_gen.arena.games.digits.v1 import digits_pb2 as pb

#: Events whose own message would carry a question's answer: pushed by hand.
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _snake(name: str) -> str:
    return _CAMEL.sub("_", name).lower()


def digit_view(kind: str, level: int, catalogue: Catalogue) -> dict[str, Any]:
    k = catalogue[kind]
    return {
        "kind": kind,
        "name": k.name,
        "level": level,
        "tier": k.tier,
        "atk": k.atk_at(level),
        "hp": k.hp_at(level),
        "reach": k.reach,
        "support": k.support,
        "effect": k.describe(level),
    }


def slate_view(slate: Slate, catalogue: Catalogue) -> list[dict[str, Any] | None]:
    return [None if d is None else digit_view(d.kind, d.level, catalogue) for d in slate]


def army_view(army: pb.Army, catalogue: Catalogue) -> dict[str, Any]:
    return {
        "slate": slate_view(wire.slate_of(army.slate), catalogue),
        "shown_as": army.shown_as,
        "house": army.house,
        "tutorial": army.tutorial,
        "record": {"round": army.round, "wins": army.wins, "losses": army.losses},
        "rating": army.rating if not army.house else None,
    }


def record_view(state: DigitsMatch, match_id: str) -> dict[str, Any]:
    game = state.game
    assert game is not None
    return {
        "type": "digits_record",
        "match_id": match_id,
        "mode": state.mode,
        "round": game.round_no,
        "wins": game.wins,
        "losses": game.losses,
        "draws": game.draws,
        "margin": game.margin,
        "status": game.status,
        "over": state.over,
    }


def game_view(state: DigitsMatch, match_id: str, now_ms: int) -> dict[str, Any]:
    """Everything the player needs to draw the game now."""
    game = state.game
    assert game is not None
    catalogue = load(game.catalogue_version)
    s = game.settings
    phase = "army" if state.closing is not None else game.phase
    view: dict[str, Any] = {
        "type": "digits_game",
        "match_id": match_id,
        "mode": state.mode,
        "phase": phase,
        "status": game.status,
        "over": state.over,
        "round": game.round_no,
        "last_round": last_round(state.mode, game.room_rounds, s),
        "record": {
            "wins": game.wins,
            "losses": game.losses,
            "draws": game.draws,
            "margin": game.margin,
            "focus_right": game.focus_right_total,
        },
        "voided": game.voided,
        "slate": slate_view(game.slate, catalogue),
        "ends_ms": game.ends_ms,
        "expires_ms": game.expires_ms,
        "shop_deadline_ms": game.shop_deadline_ms,
        "server_time_ms": now_ms,
    }
    if phase == FOCUS:
        question = game.question
        view["focus"] = {
            "questions": s.focus_questions,
            "index": game.question_index,
            "right": game.right,
            "started": question is not None,
            "page": None
            if question is None
            else {
                "text": question.text,
                "stage": question.stage,
                "deadline_ms": game.question_deadline_ms,
            },
            # The first round, every tutorial round and every room round wait for "Start the
            # Focus"; the others start with "Continue".
            "button": "start"
            if game.round_no == 1 or state.mode in ("tutorial", "room")
            else "continue",
        }
    if phase == "shop":
        training = None
        if game.training_cell is not None and game.training_question is not None:
            training = {
                "cell": game.training_cell,
                "text": game.training_question.text,
                "stage": game.training_question.stage,
                "deadline_ms": game.training_deadline_ms,
            }
        view["shop"] = {
            "gold": game.gold,
            "right": game.right,
            "offers": [
                None
                if kind is None
                else {**digit_view(kind, 1, catalogue), "price": price(catalogue[kind].tier, s)}
                for kind in game.offers
            ],
            "bright": None
            if game.bright is None
            else {
                **digit_view(game.bright, 1, catalogue),
                "price": price(catalogue[game.bright].tier, s),
            },
            "reroll_cost": s.reroll_cost,
            "rerolls": game.reroll,
            "training_used": game.training_used,
            "training": training,
        }
    if phase == "faceoff" and game.saved is not None and state.army is not None:
        view["faceoff"] = {
            "saved": slate_view(game.saved, catalogue),
            "army": army_view(state.army, catalogue),
            "arrangement": game.arrangement,
            "arrangements": ARRANGEMENT_COUNT,
            "deadline_ms": game.faceoff_deadline_ms,
            "predict": state.mode == "tutorial",
            "predicted": None
            if state.predicted is None
            else MessageToDict(state.predicted, preserving_proto_field_name=True),
        }
    return view


def event_view(state: DigitsMatch, event: Message, match_id: str) -> dict[str, Any]:
    """What happened, as the player is told it (a page's answer only once it is left)."""
    name = "digits_" + _snake(type(event).__name__)
    if isinstance(event, pb.QuestionShown | pb.TrainingShown):
        body: dict[str, Any] = {
            "text": event.question.text,
            "stage": event.question.stage,
            "deadline_ms": event.deadline_ms,
        }
        if isinstance(event, pb.QuestionShown):
            body |= {"round": event.round, "index": event.index}
        else:
            body["cell"] = event.cell
        return {"type": name, "match_id": match_id, **body}
    body = MessageToDict(
        event,
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
    )
    body.pop("settings", None)
    body.pop("player_seed", None)
    body.pop("shop_seed", None)
    if isinstance(event, pb.DigitsStarted):
        body.pop("seed", None)  # the seeds not given were derived from it
    if isinstance(event, pb.ShopClosing | pb.ShopEnded):
        body = {k: v for k, v in body.items() if k not in ("slate", "saved", "army")}
    game = state.game
    fought = isinstance(event, pb.CombatFought) and game is not None
    if fought and game is not None and game.saved is not None and game.opponent is not None:
        body["report"] = combat_of(game, report=True).to_json()
    return {"type": name, "match_id": match_id, **body}


class DigitsViews:
    def snapshot(
        self, table: Table, state: DigitsMatch, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        if state.game is None:
            return []
        if viewer.seat != 1:
            return [record_view(state, table.match_id)]
        return [game_view(state, table.match_id, now_ms)]

    def push(
        self, table: Table, state: DigitsMatch, event: Message, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        event = wire.unwrapped(event)
        if state.game is None:
            return []
        if viewer.seat != 1:
            public = pb.DigitsStarted | pb.RoundsMissed | pb.CombatFought | pb.DigitsEnded
            return [record_view(state, table.match_id)] if isinstance(event, public) else []
        return [
            event_view(state, event, table.match_id),
            game_view(state, table.match_id, now_ms),
        ]

    def tick(
        self, table: Table, state: DigitsMatch, viewer: Viewer, now_ms: int
    ) -> list[dict[str, Any]]:
        return []  # every page carries its deadline and the server's time

    def ack(self, table: Table, pushed: Sequence[dict[str, Any]]) -> dict[str, Any]:
        return {"match_id": table.match_id, "events": list(pushed)}

    def relay(
        self, table: Table, state: DigitsMatch, viewer: Viewer, message: BaseModel, now_ms: int
    ) -> tuple[dict[Viewer, list[dict[str, Any]]], dict[str, Any]]:
        raise GameError("bad_message", "this game relays no message")

    def hidden(self, state: DigitsMatch, viewer: Viewer) -> frozenset[str]:
        return hidden(state, viewer)


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def hidden(state: DigitsMatch, viewer: Viewer) -> frozenset[str]:
    """Text no push to ``viewer`` may contain now: the seeds; the open Focus or Training page's
    answer as a question would carry it; the texts of this round's Focus pages not shown yet
    (unless the same text was shown already); and for anyone but the player, the open page's
    text and the slate."""
    game = state.game
    if game is None:
        return frozenset()
    secrets = {'"player_seed"', '"shop_seed"'}
    for seed in (game.player_seed, game.shop_seed):
        if len(str(seed)) >= 7:
            secrets.add(str(seed))
    open_pages = [q for q in (game.question, game.training_question) if q is not None]
    for question in open_pages:
        secrets.add(_compact({"text": question.text, "answer": question.answer})[1:-1])
        secrets.add(_compact({"answer": question.answer, "text": question.text})[1:-1])
    if game.phase == FOCUS and state.closing is None:
        stage = game.settings.stage_for(game.round_no)
        pages = focus_questions(
            game.player_seed, game.round_no, stage, game.settings.focus_questions
        )
        shown_count = game.question_index + 1 if game.question is not None else 0
        shown = {q.text for q in pages[:shown_count]}
        for page in pages[shown_count:]:
            if page.text not in shown:
                secrets.add(_compact(page.text))
    if viewer.seat != 1:
        secrets.add('"slate"')
        for question in open_pages:
            secrets.add(_compact(question.text))
    return frozenset(secrets)
