"""The names of Arena's topics: commands into each service, events out of each.

Services share these names and the schemas under proto/, never code. Every topic is keyed by
stream id, so one stream lives on one partition with one writer.
"""

from __future__ import annotations

from arena_runtime.config import ConfigError
from arena_runtime.eventlog import EventLog, TopicMismatchError, TopicSpec

MATCH_COMMANDS = "arena.commands.match"
MATCHMAKING_COMMANDS = "arena.commands.matchmaking"
RATING_COMMANDS = "arena.commands.rating"
ACCOUNTS_COMMANDS = "arena.commands.accounts"
MATCH_EVENTS = "arena.match.events"
MATCHMAKING_EVENTS = "arena.matchmaking.events"
RATING_EVENTS = "arena.rating.events"
ACCOUNTS_EVENTS = "arena.accounts.events"
#: Transient: what each viewer of a match is shown (arena.v1.ViewBatch records, not envelopes),
#: made by the match service and relayed by the gateway; kept a day.
MATCH_VIEWS = "arena.match.views"
#: Compacted: the newest snapshot of each partition of arena.match.events (arena_runtime.snapshots).
MATCH_SNAPSHOTS = "arena.match.snapshots"
#: Compacted: the newest snapshot of each partition of arena.rating.events (the ladders' states).
RATING_SNAPSHOTS = "arena.rating.snapshots"

COMMANDS = (MATCH_COMMANDS, MATCHMAKING_COMMANDS, RATING_COMMANDS, ACCOUNTS_COMMANDS)
#: The topics analysts read: every fact the system knows.
EVENTS = (MATCH_EVENTS, MATCHMAKING_EVENTS, RATING_EVENTS, ACCOUNTS_EVENTS)
#: Topics of views: records of the moment, not facts.
VIEWS = (MATCH_VIEWS,)
VIEWS_RETENTION_MS = 24 * 3600 * 1000
ALL = (*COMMANDS, *EVENTS, *VIEWS)
#: Snapshot topics: compacted, one per event topic whose runner snapshots its partitions.
SNAPSHOTS = (MATCH_SNAPSHOTS, RATING_SNAPSHOTS)


async def ensure_topics(log: EventLog, partitions: int) -> None:
    """Create every Arena topic that is missing, keeping events forever, and check the others.

    Each service does this at start, so the order in which services come up never matters. A
    topic that exists with another partition count (or, on Kafka, replication factor) than
    configured stops the process with a ConfigError naming the setting and the topic: neither
    can be changed in place (streams are placed by hashing their key over the partition count).
    """
    specs = [TopicSpec(name, partitions=partitions) for name in (*COMMANDS, *EVENTS)]
    specs += [
        TopicSpec(name, partitions=partitions, retention_ms=VIEWS_RETENTION_MS) for name in VIEWS
    ]
    specs += [TopicSpec(name, partitions=partitions, compacted=True) for name in SNAPSHOTS]
    await log.create_topics(specs)
    try:
        await log.check_topics(specs)
    except TopicMismatchError as exc:
        if exc.layout == "partitions":
            variable, advice = (
                "ARENA_PARTITIONS",
                f"set it to {exc.found}: a topic's partition count cannot change while it "
                "holds streams (docs/operations.md, Kafka)",
            )
        else:
            variable, advice = (
                "ARENA_KAFKA_REPLICATION_FACTOR",
                f"set it to {exc.found}, or reassign the topic's replicas with Kafka's tools",
            )
        raise ConfigError(
            variable,
            f"topic {exc.topic} exists with {exc.layout} {exc.found}, not the {exc.configured} "
            f"configured; {advice}",
        ) from exc
