"""Privacy of exports: every string field of every payload is classified, secrets never leave,
and pseudonyms are a keyed hash that joins under one key and differs under another."""

from __future__ import annotations

import pytest
from arena_games.registry import standard
from arena_runtime import privacy
from arena_runtime.config import ConfigError, load_settings
from arena_runtime.envelope import Schemas
from arena_runtime.schemas import accounts, lobby, match, rating
from google.protobuf.descriptor import Descriptor, FieldDescriptor

KEY = "a-test-pseudonym-key-of-32-chars"
CLASSIFIED = (
    privacy.SECRET_FIELDS | privacy.IDENTIFIER_FIELDS | privacy.FREE_TEXT_FIELDS
) | privacy.PUBLIC_FIELDS


def every_payload() -> Schemas:
    schemas = Schemas()
    for module in (match, lobby, rating, accounts):
        module.register(schemas)
    standard().register_schemas(schemas)
    return schemas


def string_fields(descriptor: Descriptor, seen: set[str]) -> set[str]:
    if descriptor.full_name in seen:
        return set()
    seen.add(descriptor.full_name)
    names: set[str] = set()
    for field in descriptor.fields:
        if field.type == FieldDescriptor.TYPE_STRING:
            names.add(field.name)
        elif field.type == FieldDescriptor.TYPE_MESSAGE:
            names |= string_fields(field.message_type, seen)
    return names


def test_every_string_field_of_every_payload_is_classified() -> None:
    from google.protobuf import symbol_database

    pool = symbol_database.Default().pool
    schemas = every_payload()
    names: set[str] = set()
    seen: set[str] = set()
    for type_name in schemas.types():
        names |= string_fields(pool.FindMessageTypeByName(type_name), seen)
    assert len(names) > 30, "the walk found too few fields to be the real payloads"
    assert names - CLASSIFIED == set(), "decide, in arena_runtime.privacy, what these are"
    assert not privacy.SECRET_FIELDS & privacy.IDENTIFIER_FIELDS


def test_secrets_go_and_identifiers_become_pseudonyms() -> None:
    pseudonym = privacy.Pseudonymiser(KEY)
    payload = {
        "username": "Alice",
        "player_id": "p_alice",
        "password_hash": "$argon2id$v=19$secret",
        "winner": {"player_id": "p_alice", "seat": 1},
        "players": ["p_alice", "p_bob"],
        "player": 2,
        "say": "I am Alice from Leeds",
        "reason": "sign_out",
    }
    plain = privacy.scrub(payload, None)
    assert "password_hash" not in plain
    assert plain["username"] == "Alice" and plain["say"] == payload["say"]
    hidden = privacy.scrub(payload, pseudonym)
    assert "password_hash" not in hidden and "say" not in hidden
    assert "p_alice" not in repr(hidden) and "Alice" not in repr(hidden)
    assert hidden["winner"]["player_id"] == hidden["player_id"] == hidden["players"][0]
    assert hidden["players"][0] != hidden["players"][1]
    assert hidden["player"] == 2 and hidden["reason"] == "sign_out"
    other = privacy.Pseudonymiser(KEY[::-1])
    assert other("p_alice") != pseudonym("p_alice")
    assert pseudonym("") == ""
    assert pseudonym.stream("player-p_alice") == "player-" + pseudonym("p_alice")
    assert pseudonym.stream("match-m1") == "match-m1"
    assert KEY not in repr(pseudonym)


def test_the_pseudonym_key_is_a_secret_setting_with_a_minimum_length() -> None:
    settings = load_settings({"ARENA_EXPORT_PSEUDONYM_KEY": KEY})
    assert settings.export_pseudonym_key is not None
    assert settings.export_pseudonym_key.get_secret_value() == KEY
    assert KEY not in repr(settings) and KEY not in settings.model_dump_json()
    with pytest.raises(ConfigError) as caught:
        load_settings({"ARENA_EXPORT_PSEUDONYM_KEY": "short-key"})
    assert caught.value.variable == "ARENA_EXPORT_PSEUDONYM_KEY"
    assert "short-key" not in str(caught.value)
    with pytest.raises(ValueError):
        privacy.Pseudonymiser("short")
