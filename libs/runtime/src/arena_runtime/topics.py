"""The names of Arena's topics: commands into each service, events out of each.

Services share these names and the schemas under proto/, never code. Every topic is keyed by
stream id, so one stream lives on one partition with one writer.
"""

from __future__ import annotations

from arena_runtime.eventlog import EventLog, TopicSpec

MATCH_COMMANDS = "arena.commands.match"
MATCHMAKING_COMMANDS = "arena.commands.matchmaking"
RATING_COMMANDS = "arena.commands.rating"
ACCOUNTS_COMMANDS = "arena.commands.accounts"
MATCH_EVENTS = "arena.match.events"
MATCHMAKING_EVENTS = "arena.matchmaking.events"
RATING_EVENTS = "arena.rating.events"
ACCOUNTS_EVENTS = "arena.accounts.events"

COMMANDS = (MATCH_COMMANDS, MATCHMAKING_COMMANDS, RATING_COMMANDS, ACCOUNTS_COMMANDS)
#: The topics analysts read: every fact the system knows.
EVENTS = (MATCH_EVENTS, MATCHMAKING_EVENTS, RATING_EVENTS, ACCOUNTS_EVENTS)
ALL = (*COMMANDS, *EVENTS)


async def ensure_topics(log: EventLog, partitions: int) -> None:
    """Create every Arena topic that is missing, keeping events forever.

    Each service does this at start, so the order in which services come up never matters.
    """
    await log.create_topics([TopicSpec(name, partitions=partitions) for name in ALL])
