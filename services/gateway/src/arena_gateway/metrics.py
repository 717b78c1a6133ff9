"""The gateway's own metrics (``arena_gateway_*``), and what it makes of commands that get no
answer: a service that stops answering is logged at WARNING, counted, and shown on ``/readyz``.

Readiness stays 200 then (docs/operations.md, "Health and metrics"): a service that answers no
gateway is an outage every instance shares, and taking every gateway out of the load balancer
would only add the lobby, the HTTP API and the reconnects to it. ``/readyz`` says
``"status": "degraded"`` and names the silent topics instead; ``arena_gateway_service_answering``
is 0 for them.
"""

from __future__ import annotations

import time

from arena_runtime import metrics, telemetry
from prometheus_client import Counter, Gauge, Histogram

log = telemetry.get_logger(__name__)

SOCKETS_OPEN = Gauge(
    "arena_gateway_sockets_open",
    "Authenticated WebSockets open on this instance.",
)
MESSAGES = Counter(
    "arena_gateway_messages",
    "Client messages after authentication, by type and outcome (ack, or the error code "
    "answered: rate_limited, bad_message, timeout, a service's rejection ...).",
    ["type", "outcome"],
)
COMMANDS = Counter(
    "arena_gateway_commands",
    "Commands the gateway appended and waited on, by topic, command type and outcome: "
    "accepted, rejected, timeout (no answer within ARENA_COMMAND_TIMEOUT_SECONDS), "
    "unavailable (the append failed).",
    ["topic", "type", "outcome"],
)
COMMAND_SECONDS = Histogram(
    "arena_gateway_command_seconds",
    "Time from a command's append to its answer read back from the log (answered ones only).",
    ["topic", "type"],
    buckets=(0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10),
)
COMMANDS_WAITING = Gauge(
    "arena_gateway_commands_waiting",
    "Commands appended whose answer has not been read yet.",
    ["topic"],
)
ANSWERING = Gauge(
    "arena_gateway_service_answering",
    "0 while the service of a command topic leaves the gateway's commands unanswered (its "
    "latest command timed out and none was answered since), 1 otherwise.",
    ["topic"],
)


def short(type_: str) -> str:
    """``arena.v1.MoveStrength`` -> ``MoveStrength``: the label of a command type."""
    return type_.rsplit(".", 1)[-1]


class Answering:
    """Per command topic, whether its service answers: the latest outcome decides."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        #: Topic -> monotonic time of the first unanswered command since the last answer.
        self.silent_since: dict[str, float] = {}
        #: Topics whose gauge says 1 and none of whose commands timed out since: an answer,
        #: one per command, changes nothing for them.
        self._answering: set[str] = set()

    def answered(self, topic: str) -> None:
        if topic in self._answering:
            return
        self._answering.add(topic)
        since = self.silent_since.pop(topic, None)
        metrics.series(ANSWERING, topic).set(1)
        if since is not None:
            log.info(
                "commands are answered again",
                topic=topic,
                silent_seconds=round(time.monotonic() - since, 1),
            )

    def timed_out(self, topic: str) -> None:
        self._answering.discard(topic)
        if topic in self.silent_since:
            return
        self.silent_since[topic] = time.monotonic() - self.timeout
        metrics.series(ANSWERING, topic).set(0)
        log.warning(
            "no answer from the service of this topic: players get `timeout` errors. Check "
            "that its pods run and own every partition (kubectl -n arena get pods; "
            "docs/operations.md#a-service-is-down); a broker outage shows the same",
            topic=topic,
            timeout_seconds=self.timeout,
        )

    def degraded(self) -> dict[str, str]:
        """What ``/readyz`` says of the silent topics."""
        now = time.monotonic()
        return {
            topic: f"no answer for {now - since:.0f} s"
            for topic, since in sorted(self.silent_since.items())
        }
