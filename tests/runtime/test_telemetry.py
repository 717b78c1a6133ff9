"""Tracing through the event log, trace ids in the logs, and the metrics exposition.

Spans are collected by the OpenTelemetry SDK's InMemorySpanExporter, a real exporter meant for
tests, installed on the process's tracer provider like any other exporter.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncIterator, Iterator, Sized
from typing import Any

import pytest
import structlog
from arena_runtime import metrics, telemetry
from arena_runtime.config import load_settings
from arena_runtime.consumer_loop import ConsumerLoop
from arena_runtime.envelope import Codec, Command, Event, new_command
from arena_runtime.eventlog import EventLog, Record, TopicSpec
from arena_runtime.streams import Answer, StreamRunner
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import (
    INVALID_SPAN_CONTEXT,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    TraceFlags,
    TraceState,
    get_current_span,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from prometheus_client import CollectorRegistry, Histogram

from tests.runtime.conftest import OpenLog
from tests.runtime.test_streams import CODEC, apply, decide, initial

_EXPORTER = InMemorySpanExporter()


@pytest.fixture(scope="session")
def exporter() -> InMemorySpanExporter:
    telemetry.configure_tracing("arena-test", exporter=_EXPORTER)
    return _EXPORTER


@pytest.fixture
def spans(exporter: InMemorySpanExporter) -> Iterator[InMemorySpanExporter]:
    exporter.clear()
    yield exporter
    exporter.clear()


@pytest.fixture
async def log(open_log: OpenLog) -> AsyncIterator[EventLog]:
    event_log = open_log()
    await event_log.start()
    yield event_log
    await event_log.close()


async def drain(loop: ConsumerLoop[Any], done: Sized, want: int) -> None:
    for _ in range(240):
        if len(done) >= want:
            return
        await loop.run_once()
    assert len(done) >= want


async def test_one_request_is_one_trace_through_the_log(
    log: EventLog, spans: InMemorySpanExporter
) -> None:
    """gateway request -> command topic -> match (stream runner) -> event topic -> rating."""
    suffix = uuid.uuid4().hex[:8]
    commands, events = f"commands.{suffix}", f"events.{suffix}"
    await log.create_topics([TopicSpec(commands, 2), TopicSpec(events, 2)])
    codec: Codec = CODEC

    # The gateway: a client request becomes a command carrying the request's trace context.
    with telemetry.tracer().start_as_current_span("POST /tally", kind=SpanKind.SERVER) as request:
        command = new_command(
            "t-1", {"amount": 2}, type="tally.Add", command_id="cmd-1", schemas=codec.schemas
        )
        await log.append(commands, [codec.command_record(command)])
    trace_id = request.get_span_context().trace_id
    assert command.traceparent.split("-")[1] == format(trace_id, "032x")

    # The match service: a consumer loop handing commands to the stream runner.
    runner = StreamRunner(log, events, initial=initial, apply=apply, decide=decide, codec=codec)
    handled: list[Answer] = []

    async def handle_command(item: Command, record: Record) -> None:
        await runner.handle_record(item, record)
        handled.append(await runner.handle(item))  # answered: a repeat, nothing appended

    match_consumer = log.consumer(f"match-{suffix}", [commands])
    # The rating service: a consumer loop over the events, logging what it sees.
    seen: list[tuple[Event, str]] = []

    async def handle_event(item: Event, record: Record) -> None:
        seen.append((item, telemetry.trace_id_hex()))

    rating_consumer = log.consumer(f"rating-{suffix}", [events])
    await match_consumer.start()
    await rating_consumer.start()
    try:
        match_loop = ConsumerLoop(
            match_consumer, group="match", decode=codec.decode_command, handler=handle_command
        )
        rating_loop = ConsumerLoop(
            rating_consumer, group="rating", decode=codec.decode_event, handler=handle_event
        )
        await drain(match_loop, handled, 1)
        await drain(rating_loop, seen, 1)
    finally:
        await match_consumer.stop()
        await rating_consumer.stop()

    assert handled[0].repeated and len(seen) == 1
    event, seen_trace_id = seen[0]
    assert seen_trace_id == format(trace_id, "032x")
    assert event.traceparent.split("-")[1] == format(trace_id, "032x")

    finished = [s for s in spans.get_finished_spans() if s.context.trace_id == trace_id]
    by_name: dict[str, ReadableSpan] = {}
    for span in finished:  # in the order they ended: the first handle span is the real one
        by_name.setdefault(span.name, span)
    assert set(by_name) >= {
        "POST /tally",
        f"{commands} process",
        "tally.Add handle",
        f"{events} publish",
        f"{events} process",
    }

    def parent(span: ReadableSpan) -> int | None:
        return span.parent.span_id if span.parent else None

    assert parent(by_name[f"{commands} process"]) == request.get_span_context().span_id
    assert parent(by_name["tally.Add handle"]) == by_name[f"{commands} process"].context.span_id
    assert parent(by_name[f"{events} publish"]) == by_name["tally.Add handle"].context.span_id
    assert parent(by_name[f"{events} process"]) == by_name[f"{events} publish"].context.span_id
    assert by_name[f"{events} process"].kind == SpanKind.CONSUMER
    assert by_name[f"{events} publish"].kind == SpanKind.PRODUCER
    assert by_name[f"{commands} process"].attributes is not None
    assert by_name[f"{commands} process"].attributes["messaging.kafka.offset"] == 0


def test_trace_context_round_trips_through_headers(spans: InMemorySpanExporter) -> None:
    with telemetry.tracer().start_as_current_span("writer") as writer:
        traceparent, _ = telemetry.current_trace()
    context = telemetry.context_from_headers([("traceparent", traceparent.encode())])
    with telemetry.tracer().start_as_current_span("reader", context=context) as reader:
        assert reader.get_span_context().trace_id == writer.get_span_context().trace_id
    assert telemetry.current_trace() == ("", "")  # outside any span


def _injected() -> tuple[str, str]:
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return carrier.get("traceparent", ""), carrier.get("tracestate", "")


@pytest.mark.parametrize(
    "span_context",
    [
        SpanContext(0x1F, 0x2E, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED)),
        SpanContext(2**128 - 1, 2**64 - 1, is_remote=True, trace_flags=TraceFlags(0)),
        SpanContext(
            0xABC,
            0xDEF,
            is_remote=True,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
            trace_state=TraceState([("arena", "x1"), ("other", "y-2")]),
        ),
        SpanContext(0xABC, 0, is_remote=False),  # not valid, yet not the invalid context
        INVALID_SPAN_CONTEXT,
    ],
)
def test_the_current_trace_is_what_the_w3c_propagator_writes(span_context: SpanContext) -> None:
    with telemetry.within(trace.set_span_in_context(NonRecordingSpan(span_context))):
        assert telemetry.current_trace() == _injected()
    assert telemetry.current_trace() == _injected() == ("", "")


def test_the_current_trace_of_a_recorded_span(spans: InMemorySpanExporter) -> None:
    with telemetry.tracer().start_as_current_span("writer"):
        assert telemetry.current_trace() == _injected()
        assert telemetry.current_trace()[0]


@pytest.mark.parametrize("value", [b"", b"garbage", b"00-zz-yy-01", b"\xff\xfe"])
def test_a_bad_traceparent_header_starts_a_new_trace(value: bytes) -> None:
    context = telemetry.context_from_headers([("traceparent", value)])
    with telemetry.tracer().start_as_current_span("reader", context=context) as span:
        assert span.get_span_context().is_valid  # a fresh root, not an error


@pytest.fixture
def json_logger() -> Iterator[Any]:
    """A logger whose calls return the JSON line the service would write."""
    structlog.configure(
        processors=telemetry.log_processors("json"),
        logger_factory=structlog.ReturnLoggerFactory(),
        cache_logger_on_first_use=False,
    )
    try:
        yield telemetry.get_logger("arena.test")
    finally:
        structlog.reset_defaults()


def test_json_logs_carry_the_trace_id(spans: InMemorySpanExporter, json_logger: Any) -> None:
    with telemetry.tracer().start_as_current_span("work") as span:
        line = json.loads(json_logger.info("move applied", stream="t-1"))
    outside = json.loads(json_logger.warning("idle"))
    assert line["event"] == "move applied" and line["stream"] == "t-1"
    assert line["level"] == "info" and line["component"] == "arena.test"
    assert line["trace_id"] == telemetry.trace_id_hex(span)
    assert line["span_id"] == format(span.get_span_context().span_id, "016x")
    assert line["timestamp"].endswith("Z")
    assert "trace_id" not in outside


def test_metrics_exposition_lists_the_runtime_series() -> None:
    metrics.RECORDS_CONSUMED.labels("exposition-topic", "g").inc()
    text = metrics.exposition().decode()
    assert 'arena_records_consumed_total{group="g",topic="exposition-topic"} 1.0' in text
    for name in (
        "arena_malformed_records_total",
        "arena_handler_seconds",
        "arena_record_age_seconds",
        "arena_records_appended_total",
        "arena_stream_events_ignored_total",
        "arena_commands_total",
    ):
        assert f"# TYPE {name.removesuffix('_total')}" in text
    assert metrics.CONTENT_TYPE.startswith("text/plain")


@pytest.mark.parametrize(
    "amounts",
    [[], [0.3], [0.0, 0.005, 0.0051, 0.25, 0.25, 3.0, 1e9, -1.0], [float("nan"), 0.1]],
)
def test_observing_many_at_once_reports_what_observing_each_does(amounts: list[float]) -> None:
    """A batch's ages go into their histogram in one update per bucket: the same buckets,
    count and sum as one observation each."""
    registry = CollectorRegistry()
    one_by_one = Histogram("one_by_one", "h", registry=registry)
    at_once = Histogram("at_once", "h", registry=registry)
    for amount in amounts:
        one_by_one.observe(amount)
    metrics.observe_many(at_once, amounts)

    def samples(name: str) -> dict[tuple[str, str], float]:
        return {
            (sample.name.removeprefix(name), sample.labels.get("le", "")): sample.value
            for metric in registry.collect()
            if metric.name == name
            for sample in metric.samples
            if not sample.name.endswith("_created")
        }

    got, want = samples("at_once"), samples("one_by_one")
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, nan_ok=True), key


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers, root.level = handlers, level
    structlog.reset_defaults()


def test_configured_logging_renders_both_apis_as_json_lines(
    restore_logging: None, capsys: pytest.CaptureFixture[str], spans: InMemorySpanExporter
) -> None:
    telemetry.configure_telemetry(load_settings({"ARENA_LOG_LEVEL": "info"}))
    with telemetry.tracer().start_as_current_span("work") as span:
        telemetry.get_logger("arena.test").info("structlog line", stream="t-1")
        logging.getLogger("uvicorn.error").warning("stdlib line %d", 7)
        telemetry.get_logger("arena.test").debug("below the level")
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(line["event"], line["level"]) for line in lines] == [
        ("structlog line", "info"),
        ("stdlib line 7", "warning"),
    ]
    assert {line["trace_id"] for line in lines} == {telemetry.trace_id_hex(span)}
    assert lines[0]["component"] == "arena.test" and lines[0]["stream"] == "t-1"
    assert lines[1]["logger"] == "uvicorn.error"


def test_without_an_exporter_spans_are_not_recorded_but_carry_the_trace(
    spans: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(telemetry, "_exporting", False)
    parent = telemetry.context_of("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    with telemetry.tracer().start_as_current_span("unexported", context=parent) as span:
        assert not span.is_recording()
        traceparent, _ = telemetry.current_trace()
        assert telemetry.trace_id_hex() == "0af7651916cd43dd8448eb211c80319c"
    assert traceparent.startswith("00-0af7651916cd43dd8448eb211c80319c-")
    assert "b7ad6b7169203331" not in traceparent  # a span of its own, continuing the trace
    assert spans.get_finished_spans() == ()
    monkeypatch.setattr(telemetry, "_exporting", True)
    with telemetry.tracer().start_as_current_span("exported", context=parent) as span:
        assert span.is_recording()
    assert [s.name for s in spans.get_finished_spans()] == ["exported"]


_TRACE = "0af7651916cd43dd8448eb211c80319c"


@pytest.mark.parametrize(
    ("traceparent", "tracestate"),
    [
        (f"00-{_TRACE}-b7ad6b7169203331-01", ""),
        (f"00-{_TRACE}-b7ad6b7169203331-00", ""),
        (f"00-{_TRACE}-b7ad6b7169203331-01", "vendor=1,other=x"),
        (f"00-{_TRACE.upper()}-b7ad6b7169203331-01", ""),
        (f" 00-{_TRACE}-b7ad6b7169203331-01 ", ""),
        (f"00-{'0' * 32}-b7ad6b7169203331-01", ""),
        (f"00-{_TRACE}-{'0' * 16}-01", ""),
        (f"00-{_TRACE}-b7ad6b7169203331-01-extra", ""),
        (f"01-{_TRACE}-b7ad6b7169203331-01-extra", ""),
        (f"ff-{_TRACE}-b7ad6b7169203331-01", ""),
        ("garbage", ""),
        ("", ""),
    ],
)
def test_a_carried_trace_is_what_writing_under_its_context_would_carry(
    traceparent: str, tracestate: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """carried_of stands for context_of: the same strings written (current_trace), the same ids
    logged, the same verdict on a header (parent_from_headers)."""
    monkeypatch.setattr(telemetry, "_exporting", False)
    with telemetry.within(telemetry.context_of(traceparent, tracestate)):
        written, trace_id = telemetry.current_trace(), telemetry.trace_id_hex()
    with telemetry.carrying(telemetry.carried_of(traceparent, tracestate)):
        assert telemetry.current_trace() == written
        assert telemetry.trace_id_hex() == trace_id
    headers = [("traceparent", traceparent.encode()), ("tracestate", tracestate.encode())]
    valid = telemetry.parent_from_headers(headers) is not None
    assert telemetry.carried_of_headers(headers) == (written if valid else None)


def test_a_canonical_trace_is_carried_without_parsing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Our writers' traceparents are carried as they are: no OpenTelemetry context is made of
    them (that was tens of microseconds a move in a busy process)."""
    monkeypatch.setattr(telemetry, "_exporting", False)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed")

    monkeypatch.setattr(telemetry._PROPAGATOR, "extract", refuse)
    monkeypatch.setattr(telemetry._PROPAGATOR, "inject", refuse)
    traceparent = f"00-{uuid.uuid4().hex}-b7ad6b7169203331-01"
    with telemetry.carrying(
        telemetry.carried_of_headers([("traceparent", traceparent.encode())]) or ("", "")
    ):
        assert telemetry.current_trace() == (traceparent, "")


def test_the_innermost_trace_is_current(monkeypatch: pytest.MonkeyPatch) -> None:
    """A context made current inside a carried trace hides it, and the carried trace is back
    after; nothing stays current after the outer block."""
    monkeypatch.setattr(telemetry, "_exporting", False)
    carried = telemetry.carried_of(f"00-{_TRACE}-b7ad6b7169203331-01")
    other = f"00-{'1' * 32}-b7ad6b7169203331-01"
    with telemetry.carrying(carried):
        with telemetry.within(telemetry.context_of(other)):
            assert telemetry.current_trace() == (other, "")
            assert telemetry.trace_id_hex() == "1" * 32
        assert telemetry.current_trace() == carried
    assert telemetry.current_trace() == ("", "")
    assert telemetry.trace_id_hex() == ""


def test_json_logs_carry_a_carried_trace_id(
    monkeypatch: pytest.MonkeyPatch, json_logger: Any
) -> None:
    monkeypatch.setattr(telemetry, "_exporting", False)
    with telemetry.carrying(telemetry.carried_of(f"00-{_TRACE}-b7ad6b7169203331-01")):
        line = json.loads(json_logger.info("move applied"))
    with telemetry.carrying(telemetry.carried_of("garbage")):
        untraced = json.loads(json_logger.info("move applied"))
    assert (line["trace_id"], line["span_id"]) == (_TRACE, "b7ad6b7169203331")
    assert "trace_id" not in untraced and "span_id" not in untraced


@pytest.mark.parametrize("exporting", [False, True])
def test_a_detail_span_is_made_only_while_spans_are_exported(
    exporting: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(telemetry, "_exporting", exporting)
    with (
        telemetry.tracer().start_as_current_span("outer") as outer,
        telemetry.detail_span("inner"),
    ):
        inner = get_current_span()
    # Either way the trace goes on: the same trace id is current inside.
    assert inner.get_span_context().trace_id == outer.get_span_context().trace_id
    assert (inner is not outer) == exporting


async def test_commands_handled_together_each_get_a_publish_span_in_their_own_trace(
    log: EventLog, spans: InMemorySpanExporter
) -> None:
    """Two moves decided in one batch are appended at once; each move's trace still shows its
    events being published (an operator following one move sees every step of it)."""
    suffix = uuid.uuid4().hex[:8]
    events = f"events.{suffix}"
    await log.create_topics([TopicSpec(events, 1)])
    runner = StreamRunner(log, events, initial=initial, apply=apply, decide=decide, codec=CODEC)
    commands, trace_ids = [], []
    for number in (1, 2):
        with telemetry.tracer().start_as_current_span(f"request {number}") as request:
            commands.append(
                new_command(
                    f"t-{number}", {"amount": number}, type="tally.Add", schemas=CODEC.schemas
                )
            )
        trace_ids.append(request.get_span_context().trace_id)
    answers = await runner.handle_batch(commands)
    assert all(answer.accepted for answer in answers)
    assert len(await log.read(events, 0, 0)) == 2
    for trace_id in trace_ids:
        published = [
            s
            for s in spans.get_finished_spans()
            if s.context.trace_id == trace_id and s.name == f"{events} publish"
        ]
        assert [s.kind for s in published] == [SpanKind.PRODUCER], trace_id
