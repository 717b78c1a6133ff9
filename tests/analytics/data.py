"""A data set to export: the simulated matches copied into the log under test, with what an
export must handle besides: records written before the CloudEvents headers, an account's
events holding secrets, and a record that is not an envelope."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from arena_runtime import topics
from arena_runtime.envelope import Codec, Event, Schemas
from arena_runtime.eventlog import EventLog, OutgoingRecord
from arena_runtime.proto_gen.arena.v1 import accounts_pb2
from arena_runtime.schemas import accounts
from google.protobuf.message import Message

USERNAME = "Alice_Analyst"
PLAYER_ID = "p_alice_5f3c9e"
PASSWORD_HASH = "$argon2id$v=19$m=65536,t=3,p=4$c2FsdHNhbHQ$SECRETHASHSECRETHASH"
TOKEN_HASH = "9f" * 32
SESSION_ID = "s_0123456789abcdef"
WHEN = datetime(2026, 11, 29, 23, 59, 59, 500000, tzinfo=UTC)
MALFORMED = b"\xff not an envelope"


async def copy_log(source: EventLog, target: EventLog, partitions: int) -> int:
    """Every event record of ``source`` into ``target``, same partition, key, value; every
    third one without its ce_ headers, as records written before them are. How many."""
    await topics.ensure_topics(target, partitions)
    copied = 0
    for topic in topics.EVENTS:
        for partition, end in sorted((await source.end_offsets(topic)).items()):
            offset = 0
            while offset < end:
                records = await source.read(topic, partition, offset, 1000)
                if not records:
                    break
                outgoing = []
                for record in records:
                    headers = record.headers
                    if record.offset % 3 == 0:
                        headers = tuple((k, v) for k, v in headers if not k.startswith("ce_"))
                    outgoing.append(OutgoingRecord(record.value, record.key, headers, partition))
                await target.append(topic, outgoing)
                copied += len(outgoing)
                offset = records[-1].offset + 1
    return copied


async def add_account(target: EventLog) -> None:
    """An account registering and signing in: a password hash, a token hash, a session id."""
    schemas = Schemas()
    accounts.register(schemas)
    codec = Codec(schemas)
    stream = accounts.account_stream(USERNAME)
    payloads: list[Message] = [
        accounts_pb2.AccountRegistered(
            username=USERNAME, player_id=PLAYER_ID, password_hash=PASSWORD_HASH
        ),
        accounts_pb2.SessionOpened(
            session_id=SESSION_ID, token_hash=TOKEN_HASH, expires_at_ms=1_900_000_000_000
        ),
    ]
    records = [
        codec.event_record(
            Event(
                event_id=f"acct-{n}",
                stream=stream,
                sequence=n,
                type=schemas.type_of(payload),
                payload=payload,
                time=WHEN,
                causation_id=f"open:{SESSION_ID}",
            )
        )
        for n, payload in enumerate(payloads, start=1)
    ]
    await target.append(topics.ACCOUNTS_EVENTS, records)
    await target.append(topics.MATCH_EVENTS, [OutgoingRecord(MALFORMED, b"match-broken")])


def tree(root: Path) -> dict[str, bytes]:
    """Every file under root, by relative path."""
    return {
        str(path.relative_to(root)): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def jsonl_rows(root: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted((root / "jsonl").rglob("*.jsonl")):
        rows.extend(json.loads(line) for line in path.read_text().splitlines())
    return rows
