"""The account stream's pure rules: registration (unique by lower-cased name), sessions."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from arena_gateway.accounts import stream
from arena_gateway.accounts.credentials import check_password, check_username
from arena_gateway.accounts.errors import AccountError, AccountErrorCode
from arena_runtime.envelope import CODEC, Event, new_command
from arena_runtime.proto_gen.arena.v1 import accounts_pb2 as pb
from arena_runtime.streams import Rejection, fold

HASH = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA"
PLAYER = "p_" + "a" * 32
TOKEN_HASH = "b" * 64


def register(username: str = "Alice") -> pb.RegisterAccount:
    return pb.RegisterAccount(username=username, player_id=PLAYER, password_hash=HASH)


def decide(state: stream.Account, payload: object, stream_id: str = "account-alice") -> object:
    return stream.decide(state, new_command(stream_id, payload, command_id="c1"))


def event(payload: object, sequence: int, at_ms: int = 1_000) -> Event:
    return Event(
        event_id=f"e{sequence}",
        stream="account-alice",
        sequence=sequence,
        type=CODEC.schemas.type_of(payload),
        payload=payload,
        time=datetime.fromtimestamp(at_ms / 1000, UTC),
        causation_id=f"c{sequence}",
        correlation_id="",
        batch_id=f"b{sequence}",
        batch_index=0,
    )


def registered() -> stream.Account:
    decided = decide(stream.Account(), register())
    assert isinstance(decided, list)
    return stream.apply(stream.Account(), event(decided[0], 1))


def test_registration_creates_the_account_with_its_player_id() -> None:
    account = registered()
    assert (account.username, account.player_id, account.password_hash) == ("Alice", PLAYER, HASH)


def test_a_taken_username_is_refused_whatever_its_case() -> None:
    decided = decide(registered(), register("ALICE"))
    assert decided == Rejection("username_taken", "that username is taken")


def test_a_name_must_match_its_stream() -> None:
    decided = decide(stream.Account(), register("Bob"))
    assert isinstance(decided, Rejection) and decided.code == "invalid_username"


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("Guest_ABCD", "username_reserved"),
        ("guest_x1", "username_reserved"),
        ("al", "invalid_username"),
        ("9lives", "invalid_username"),
        ("a" * 21, "invalid_username"),
        ("bad name", "invalid_username"),
        ("ünïcode", "invalid_username"),
    ],
)
def test_bad_and_reserved_usernames_are_refused(name: str, code: str) -> None:
    decided = decide(stream.Account(), register(name), f"account-{name.lower()}")
    assert isinstance(decided, Rejection) and decided.code == code
    with pytest.raises(AccountError) as raised:
        check_username(name)
    assert raised.value.code == code


@pytest.mark.parametrize("password", ["short", "x" * 129, "€" * 128 + "x"])
def test_passwords_have_bounded_length(password: str) -> None:
    with pytest.raises(AccountError) as raised:
        check_password(password)
    assert raised.value.code is AccountErrorCode.INVALID_PASSWORD
    assert raised.value.status == 422


def test_a_malformed_hash_or_player_id_is_refused() -> None:
    bad = pb.RegisterAccount(username="Alice", player_id="p_1", password_hash=HASH)
    assert isinstance(decide(stream.Account(), bad), Rejection)
    plain = pb.RegisterAccount(username="Alice", player_id=PLAYER, password_hash="hunter22")
    assert isinstance(decide(stream.Account(), plain), Rejection)


def test_sessions_open_and_close_and_only_open_ones_can_close() -> None:
    account = registered()
    opened = decide(
        account,
        pb.OpenSession(session_id="s_" + "1" * 16, token_hash=TOKEN_HASH, expires_at_ms=5_000),
    )
    assert isinstance(opened, list)
    account = stream.apply(account, event(opened[0], 2))
    assert set(account.sessions) == {"s_" + "1" * 16}
    unknown = decide(account, pb.CloseSession(session_id="s_" + "2" * 16, reason="sign_out"))
    assert isinstance(unknown, Rejection) and unknown.code == "unknown_session"
    closed = decide(account, pb.CloseSession(session_id="s_" + "1" * 16, reason="sign_out"))
    assert isinstance(closed, list) and closed[0].token_hash == TOKEN_HASH
    account = stream.apply(account, event(closed[0], 3))
    assert account.sessions == {}


def test_expired_sessions_leave_the_state_when_the_next_opens() -> None:
    account = registered()
    first = pb.SessionOpened(session_id="s_" + "1" * 16, token_hash=TOKEN_HASH, expires_at_ms=2_000)
    second = pb.SessionOpened(session_id="s_" + "2" * 16, token_hash="c" * 64, expires_at_ms=9_000)
    account = stream.apply(account, event(first, 2, at_ms=1_000))
    account = stream.apply(account, event(second, 3, at_ms=3_000))
    assert set(account.sessions) == {"s_" + "2" * 16}


def test_nothing_but_registration_happens_to_an_account_that_does_not_exist() -> None:
    opened = pb.OpenSession(session_id="s_" + "1" * 16, token_hash=TOKEN_HASH, expires_at_ms=1)
    assert decide(stream.Account(), opened) == Rejection("unknown_account", "no such account")


def test_the_fold_is_the_first_registration_in_log_order() -> None:
    # Two registrations raced for sequence 1: the first in the log wins, the other is ignored.
    first = event(pb.AccountRegistered(username="Alice", player_id=PLAYER, password_hash=HASH), 1)
    other = pb.AccountRegistered(username="alice", player_id="p_" + "f" * 32, password_hash=HASH)
    state, sequence = fold(stream.Account(), stream.apply, [first, event(other, 1)])
    assert (state.username, state.player_id, sequence) == ("Alice", PLAYER, 1)


def test_a_guest_session_stream_opens_once_renews_forward_and_closes() -> None:
    digest = "ab" * 32
    sid = f"s_{digest[:16]}"
    gs = f"guest-{sid}"
    opened = pb.OpenGuestSession(
        session_id=sid,
        token_hash=digest,
        player_id=PLAYER,
        display_name="Guest_ABCD",
        expires_at_ms=10,
    )
    blank = stream.initial(gs)
    assert isinstance(decide(blank, opened, "guest-s_0000000000000000"), Rejection)
    assert isinstance(decide(blank, opened, "account-alice"), Rejection)  # not an account's
    assert isinstance(decide(blank, pb.RenewGuestSession(session_id=sid), gs), Rejection)
    events = decide(blank, opened, gs)
    assert isinstance(events, list) and isinstance(events[0], pb.GuestSessionOpened)
    state = stream.apply(blank, event(events[0], 1))
    assert isinstance(decide(state, opened, gs), Rejection)  # once
    assert isinstance(decide(state, register(), gs), Rejection)
    assert decide(state, pb.RenewGuestSession(session_id=sid, expires_at_ms=5), gs) == []
    renewed = decide(state, pb.RenewGuestSession(session_id=sid, expires_at_ms=20), gs)
    assert isinstance(renewed, list)
    state = stream.apply(state, event(renewed[0], 2))
    assert state.sessions[sid].expires_at_ms == 20 and state.player_id == PLAYER
    closed = decide(state, pb.CloseSession(session_id=sid, reason="sign_out"), gs)
    assert isinstance(closed, list) and closed[0].token_hash == digest
    state = stream.apply(state, event(closed[0], 3))
    assert not state.sessions
    assert isinstance(decide(state, pb.RenewGuestSession(session_id=sid), gs), Rejection)
    # Opened again after it closed (an upgrade that failed), by the same player only.
    assert isinstance(decide(state, opened, gs), list)
    other = pb.OpenGuestSession()
    other.CopyFrom(opened)
    other.player_id = "p_" + "b" * 32
    assert isinstance(decide(state, other, gs), Rejection)
