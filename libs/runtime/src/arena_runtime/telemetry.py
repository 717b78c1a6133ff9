"""Tracing and structured logs.

Trace context travels inside every record (the envelope's ``trace`` field and the W3C
``traceparent``/``tracestate`` headers), so a client request can be followed from the gateway
through the command topic, the match service and the event topics into every consumer. Writers
call :func:`current_trace` when they build an envelope; readers start their span under
:func:`context_of` the record. Logs are JSON lines (structlog) carrying the current trace and
span ids, so a log line leads to its trace and back.

No secret reaches a log line: every rendered record, ours and every library's (uvicorn's access
and WebSocket lines, websockets' frame dumps at DEBUG, tracebacks), goes through :func:`redact`
last (:mod:`arena_runtime.redaction`), which blanks query-string values, passwords in URLs,
bearer tokens, and the values of fields and JSON members named like secrets.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
from collections.abc import Iterable, Iterator, MutableMapping, Sequence
from contextlib import AbstractContextManager
from contextvars import ContextVar
from typing import Any

import structlog
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SimpleSpanProcessor,
    SpanExporter,
)
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ALWAYS_ON, Sampler, SamplingResult
from opentelemetry.trace import SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from arena_runtime.config import Settings
from arena_runtime.redaction import redact_fields

TRACER_NAME = "arena"
TRACEPARENT = "traceparent"
TRACESTATE = "tracestate"

_PROPAGATOR = TraceContextTextMapPropagator()
_provider: TracerProvider | None = None
_tracer: tuple[trace.TracerProvider, trace.Tracer] | None = None
_exporting = False


def tracer() -> trace.Tracer:
    """The tracer every Arena component uses (resolved late, so configuration may come after).

    Kept per provider: building a tracer on every call cost about 2% of a busy process's CPU.
    """
    global _tracer
    provider = trace.get_tracer_provider()
    if _tracer is None or _tracer[0] is not provider:
        _tracer = (provider, provider.get_tracer(TRACER_NAME))
    return _tracer[1]


def detail_span(
    name: str, context: otel_context.Context | None = None, **kwargs: Any
) -> AbstractContextManager[object]:
    """A span that only adds detail inside one already traced (a runner's handle and publish
    inside a consumer's process span): made only while spans are exported.

    Unexported, it would carry nothing its parent does not (same trace id, in records and logs)
    and cost a busy process about 3% of its CPU; the parent's context goes on instead (with
    ``context``, that one: log lines in the block carry its trace id).
    """
    if not _exporting:
        return contextlib.nullcontext() if context is None else _Within(context)
    return tracer().start_as_current_span(name, context=context, **kwargs)


class _Within:
    """:func:`within`'s block: a class rather than a generator, since a busy process enters a
    few per move (a generator's context manager is about twice the calls)."""

    __slots__ = ("_context", "_hidden", "_token")

    def __init__(self, context: otel_context.Context) -> None:
        self._context = context

    def __enter__(self) -> None:
        self._token = otel_context.attach(self._context)
        # The innermost block's trace is the current one: a carried trace outside is hidden.
        self._hidden = _CARRIED.set(None) if _CARRIED.get() is not None else None

    def __exit__(self, *_: object) -> None:
        if self._hidden is not None:
            _CARRIED.reset(self._hidden)
        otel_context.detach(self._token)


def within(context: otel_context.Context) -> AbstractContextManager[None]:
    """Make ``context`` current in the block (no span of its own): what is written and logged
    there belongs to its trace."""
    return _Within(context)


def exporting() -> bool:
    """Whether this process exports spans (so that building them is worth it)."""
    return _exporting


@contextlib.contextmanager
def record_spans(
    name: str,
    parents: Sequence[otel_context.Context],
    attributes: dict[str, Any],
    kind: SpanKind = SpanKind.CONSUMER,
) -> Iterator[list[tuple[str, str]]]:
    """One span per record of a batch handled (or written) at once, each the child of its own
    record's trace and open around the whole block; yields each span's (traceparent,
    tracestate), for what the record causes to carry on. Only while spans are exported
    (otherwise yields [] and the records' own contexts go on).

    One per trace rather than one for the batch linked to the others: each client message's
    trace then shows its own step, whatever else shared the poll or the append.
    """
    if not _exporting:
        yield []
        return
    spans = [
        tracer().start_span(name, context=parent, kind=kind, attributes=attributes)
        for parent in parents
    ]
    carried = []
    for span in spans:
        carrier: dict[str, str] = {}
        _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(span))
        carried.append((carrier.get(TRACEPARENT, ""), carrier.get(TRACESTATE, "")))
    try:
        yield carried
    except BaseException as exc:
        for span in spans:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
        raise
    finally:
        for span in spans:
            span.end()


def new_trace() -> otel_context.Context:
    """The context of a span that starts a trace of its own (one per client message), whatever
    is current (a connection's task)."""
    return otel_context.Context()


def current_trace() -> tuple[str, str]:
    """(traceparent, tracestate) of the current span, or of the trace :func:`carrying` made
    current; empty strings outside any span.

    A span's are the headers the W3C propagator's ``inject`` writes, made here: its carrier,
    setter and formatting helpers cost a dozen Python calls, and every command and append
    asks."""
    carried = _CARRIED.get()
    if carried is not None:
        return carried
    span_context = trace.get_current_span().get_span_context()
    if span_context == trace.INVALID_SPAN_CONTEXT:
        return "", ""
    traceparent = (
        f"00-{span_context.trace_id:032x}-{span_context.span_id:016x}"
        f"-{span_context.trace_flags:02x}"
    )
    state = span_context.trace_state
    return traceparent, state.to_header() if state else ""


#: (traceparent, tracestate) -> its context: one move's trace context is parsed again by every
#: reader of every record it causes (the services, the fan-out, each consumer's span), the same
#: few strings each time. Contexts are never changed in place (setting a value makes a new one).
_CONTEXTS: dict[tuple[str, str], otel_context.Context] = {}
_CONTEXTS_KEPT = 4096


def context_of(traceparent: str, tracestate: str = "") -> otel_context.Context:
    """A context whose parent is the given remote span (an empty context if there is none)."""
    key = (traceparent, tracestate)
    context = _CONTEXTS.get(key)
    if context is None:
        carrier = {TRACEPARENT: traceparent}
        if tracestate:
            carrier[TRACESTATE] = tracestate
        context = _PROPAGATOR.extract(carrier, context=otel_context.Context())
        if len(_CONTEXTS) >= _CONTEXTS_KEPT:
            _CONTEXTS.clear()
        _CONTEXTS[key] = context
    return context


def _trace_headers(headers: Iterable[tuple[str, bytes]]) -> tuple[bytes, bytes]:
    """The record headers' W3C ``traceparent`` and ``tracestate`` (empty when absent)."""
    traceparent = tracestate = b""
    for name, value in headers:
        if name == TRACEPARENT:
            traceparent = value
        elif name == TRACESTATE:
            tracestate = value
    return traceparent, tracestate


def context_from_headers(headers: Iterable[tuple[str, bytes]]) -> otel_context.Context:
    """The remote parent carried in record headers (W3C ``traceparent``/``tracestate``)."""
    traceparent, tracestate = _trace_headers(headers)
    return context_of(traceparent.decode("ascii", "replace"), tracestate.decode("ascii", "replace"))


#: The headers' (traceparent, tracestate) bytes -> their context if it names a valid span, else
#: None: a consumer asks once per record, and one move's few contexts come again and again.
_HEADER_PARENTS: dict[tuple[bytes, bytes], otel_context.Context | None] = {}


def parent_from_headers(headers: Iterable[tuple[str, bytes]]) -> otel_context.Context | None:
    """:func:`context_from_headers` if its span is valid (the headers name a writer's span),
    else None."""
    key = _trace_headers(headers)
    try:
        return _HEADER_PARENTS[key]
    except KeyError:
        pass
    traceparent, tracestate = key
    context: otel_context.Context | None = context_of(
        traceparent.decode("ascii", "replace"), tracestate.decode("ascii", "replace")
    )
    if not trace.get_current_span(context).get_span_context().is_valid:
        context = None
    if len(_HEADER_PARENTS) >= _CONTEXTS_KEPT:
        _HEADER_PARENTS.clear()
    _HEADER_PARENTS[key] = context
    return context


# -- carried traces ------------------------------------------------------------------------
#
# While spans are not exported a consumer makes no span of its own: what its handler writes and
# logs only has to continue the trace its record came with. Parsing each record's traceparent
# into an OpenTelemetry context, attaching it, and formatting it back for every record written
# cost a busy process tens of microseconds a move, for the same strings it started from. A
# carried trace is those strings instead, in their canonical form (exactly what injecting the
# parsed context would give, "" when it names no span), made current by :func:`carrying`:
# current_trace returns them, log lines take their ids from them.

#: The trace made current by :func:`carrying`, innermost (a :func:`within` inside hides it).
_CARRIED: ContextVar[tuple[str, str] | None] = ContextVar("arena_carried_trace", default=None)
#: The form our writers give a traceparent (version 00, lower-case hex), which parsing and
#: injecting again leave as it is when its ids are not zero and no tracestate comes with it.
_CANONICAL_TRACEPARENT = re.compile(r"00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}")
_ZERO_TRACE_ID = "0" * 32
_ZERO_SPAN_ID = "0" * 16
#: Anything else, through OpenTelemetry once: (traceparent, tracestate) -> its canonical form.
_CANONICAL: dict[tuple[str, str], tuple[str, str]] = {}
#: The headers' (traceparent, tracestate) bytes -> their canonical form if they name a valid
#: span, else None (see parent_from_headers).
_HEADER_CARRIED: dict[tuple[bytes, bytes], tuple[str, str] | None] = {}
_NO_TRACE = ("", "")


def carried_of(traceparent: str, tracestate: str = "") -> tuple[str, str]:
    """The canonical (traceparent, tracestate) of a remote span: what :func:`current_trace`
    gives under :func:`context_of` of them, ("", "") if they name no span."""
    if _is_canonical(traceparent, tracestate):
        return traceparent, ""
    key = (traceparent, tracestate)
    carried = _CANONICAL.get(key)
    if carried is None:
        carried = _injected(context_of(traceparent, tracestate))
        if len(_CANONICAL) >= _CONTEXTS_KEPT:
            _CANONICAL.clear()
        _CANONICAL[key] = carried
    return carried


def _is_canonical(traceparent: str, tracestate: str) -> bool:
    """Whether OpenTelemetry would read these as a valid span and write them back unchanged."""
    return (
        not tracestate
        and _CANONICAL_TRACEPARENT.fullmatch(traceparent) is not None
        and traceparent[3:35] != _ZERO_TRACE_ID
        and traceparent[36:52] != _ZERO_SPAN_ID
    )


def carried_of_headers(headers: Iterable[tuple[str, bytes]]) -> tuple[str, str] | None:
    """:func:`carried_of` the record headers' trace if they name a writer's span (as
    :func:`parent_from_headers` would find), else None."""
    key = _trace_headers(headers)
    try:
        return _HEADER_CARRIED[key]
    except KeyError:
        pass
    traceparent = key[0].decode("ascii", "replace")
    tracestate = key[1].decode("ascii", "replace")
    carried: tuple[str, str] | None
    if _is_canonical(traceparent, tracestate):
        carried = (traceparent, "")
    elif parent_from_headers(headers) is None:  # valid or not as OpenTelemetry reads it
        carried = None
    else:
        carried = carried_of(traceparent, tracestate)
    if len(_HEADER_CARRIED) >= _CONTEXTS_KEPT:
        _HEADER_CARRIED.clear()
    _HEADER_CARRIED[key] = carried
    return carried


def _injected(context: otel_context.Context) -> tuple[str, str]:
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=context)
    return carrier.get(TRACEPARENT, ""), carrier.get(TRACESTATE, "")


class _Carrying:
    """:func:`carrying`'s block."""

    __slots__ = ("_carried", "_token")

    def __init__(self, carried: tuple[str, str]) -> None:
        self._carried = carried

    def __enter__(self) -> None:
        self._token = _CARRIED.set(self._carried)

    def __exit__(self, *_: object) -> None:
        _CARRIED.reset(self._token)


def carrying(carried: tuple[str, str]) -> AbstractContextManager[None]:
    """Make a trace from :func:`carried_of` current in the block, as :func:`within` its context
    would (what is written and logged there continues it), without making that context: for
    processes that do not export spans. While exporting it is :func:`within` the context.

    Only this module's blocks see it: a span started inside with the tracer directly (which
    Arena does only while exporting) does not continue it.
    """
    if _exporting:
        return _Within(context_of(*carried))
    return _Carrying(carried)


def trace_id_hex(span: trace.Span | None = None) -> str:
    """The 32-hex-digit trace id of a span (default: the current one), or "" if none."""
    if span is None:
        carried = _CARRIED.get()
        if carried is not None:
            return carried[0][3:35]
    span_context = (span or trace.get_current_span()).get_span_context()
    return format(span_context.trace_id, "032x") if span_context.is_valid else ""


class RecordWhileExporting(Sampler):
    """Record every span while the process exports spans, and none before.

    Unrecorded spans still get their ids and carry the trace on, into records and log lines; only
    building and ending spans that nothing would export is skipped (about 8% of a busy process's
    CPU). A process that exports records its spans whatever the flags of the span it continues,
    so one that does not export never hides the rest of a trace from one that does.
    """

    def should_sample(self, *args: Any, **kwargs: Any) -> SamplingResult:
        return (ALWAYS_ON if _exporting else ALWAYS_OFF).should_sample(*args, **kwargs)

    def get_description(self) -> str:
        return "RecordWhileExporting"


def configure_tracing(
    service_name: str,
    *,
    otlp_endpoint: str | None = None,
    exporter: SpanExporter | None = None,
    traces_file: str | None = None,
) -> TracerProvider:
    """Install the process's tracer provider (once) and add exporters to it.

    ``otlp_endpoint`` is the collector's OTLP/HTTP base URL (``http://collector:4318``); spans
    are batched to it. ``exporter`` is added synchronously, for tests (InMemorySpanExporter).
    OpenTelemetry allows one global provider per process, so later calls only add exporters:
    in the embedded mode the four services share one provider.
    """
    global _provider, _exporting
    if _provider is None:
        _provider = TracerProvider(
            sampler=RecordWhileExporting(),
            resource=Resource.create({"service.name": service_name}),
        )
        trace.set_tracer_provider(_provider)
    _exporting = _exporting or bool(otlp_endpoint) or bool(traces_file) or exporter is not None
    if traces_file:
        # One JSON object per span and line (the SDK's own rendering), appended: for `make run`.
        out = open(traces_file, "a", buffering=1)  # noqa: SIM115 - open for the process's life
        _provider.add_span_processor(
            BatchSpanProcessor(
                ConsoleSpanExporter(
                    service_name=service_name,
                    out=out,
                    formatter=lambda span: span.to_json(indent=None) + "\n",
                )
            )
        )
    if otlp_endpoint:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        url = otlp_endpoint.rstrip("/")
        if not url.endswith("/v1/traces"):
            url += "/v1/traces"
        _provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=url)))
    if exporter is not None:
        _provider.add_span_processor(SimpleSpanProcessor(exporter))
    return _provider


def shutdown_tracing() -> None:
    """Flush pending spans (call on shutdown)."""
    if _provider is not None:
        _provider.force_flush()


def _add_trace_ids(_: Any, __: str, event_dict: dict[str, Any]) -> dict[str, Any]:
    carried = _CARRIED.get()
    if carried is not None:
        traceparent = carried[0]
        if traceparent:  # canonical (see carried_of): the ids are at fixed places
            event_dict.setdefault("trace_id", traceparent[3:35])
            event_dict.setdefault("span_id", traceparent[36:52])
        return event_dict
    span_context = trace.get_current_span().get_span_context()
    if span_context.is_valid:
        event_dict.setdefault("trace_id", format(span_context.trace_id, "032x"))
        event_dict.setdefault("span_id", format(span_context.span_id, "016x"))
    return event_dict


def _redact_secrets(_: Any, __: str, event_dict: MutableMapping[str, Any]) -> dict[str, Any]:
    """Last before rendering: after exceptions are formatted, on every field of every record."""
    return redact_fields(dict(event_dict))


def _renderer(log_format: str) -> Any:
    if log_format == "json":
        return structlog.processors.JSONRenderer()
    return structlog.dev.ConsoleRenderer(colors=False)


#: Processors shared by structlog loggers and standard-library records (uvicorn, aiokafka, …).
_SHARED: list[Any] = [
    structlog.contextvars.merge_contextvars,
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
    _add_trace_ids,
]


def log_processors(log_format: str = "json") -> list[Any]:
    """The whole chain from a log call to one rendered line (for structlog-only setups)."""
    return [
        *_SHARED,
        structlog.processors.format_exc_info,
        _redact_secrets,
        _renderer(log_format),
    ]


def configure_logging(level: str = "INFO", log_format: str = "json") -> None:
    """One line per record on stdout, JSON (or console text), with trace and span ids.

    Standard-library loggers (ours, uvicorn's, aiokafka's) are routed through the same
    processors, so every line of a process has one shape.
    """
    structlog.configure(
        processors=[*_SHARED, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level)),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )
    formatter = structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=[*_SHARED, structlog.stdlib.add_logger_name],
        processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.format_exc_info,
            _redact_secrets,
            _renderer(log_format),
        ],
    )
    handler = logging.StreamHandler(sys.stdout)
    handler.setFormatter(formatter)
    root = logging.getLogger()
    root.handlers = [handler]
    root.setLevel(level)


def get_logger(name: str) -> Any:
    """A structlog logger; ``name`` (a module name) is logged as ``component``.

    The name is given to the standard-library logger too: without it, each log call (loggers are
    not cached, so that configuration changes reach them) walked the stack to find the caller's
    module, about 3 us a call even for a line its level drops."""
    return structlog.get_logger(name, component=name)


def configure_telemetry(settings: Settings) -> None:
    """Logs and tracing for a process, from ARENA_LOG_* and ARENA_OTEL_* settings."""
    configure_logging(settings.log_level, settings.log_format)
    configure_tracing(
        settings.service_name,
        otlp_endpoint=settings.otel_exporter_endpoint,
        traces_file=str(settings.otel_traces_file) if settings.otel_traces_file else None,
    )
