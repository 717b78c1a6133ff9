"""Configuration from ARENA_* environment variables (documented in docs/operations.md).

With no Kafka, database or Redis address given, everything runs embedded under ``data_dir``:
the SQLite event log, SQLite projections and in-process limits.

Processes call :func:`load_settings` once at start-up: a bad value, or an ``ARENA_`` variable
that names no setting (usually a typo), stops the process with a :class:`ConfigError` naming the
variable, instead of surfacing later as a confusing connection error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

ENV_PREFIX = "ARENA_"
#: Variables of the test harness (tests/harness), not settings of the processes.
TEST_ENV_PREFIX = "ARENA_TEST_"

_DATABASE_SCHEMES = ("postgresql+asyncpg://", "sqlite+aiosqlite://")
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


class ConfigError(ValueError):
    """A setting is invalid; ``variable`` names the ARENA_ environment variable at fault."""

    def __init__(self, variable: str, problem: str) -> None:
        super().__init__(f"{variable}: {problem}")
        self.variable = variable
        self.problem = problem


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    data_dir: Path = Field(Path("./var"), description="State of the embedded mode.")
    kafka_bootstrap: str | None = Field(None, description="host:port[,host:port]; unset: embedded")
    database_url: str | None = Field(None, description="SQLAlchemy async URL; unset: SQLite")
    redis_url: str | None = Field(None, description="redis://host:port/db; unset: in-process")
    topic_prefix: str = Field("", description="Prepended to every topic name.")
    kafka_fetch_wait_ms: int = Field(
        3, ge=1, le=10_000, description="How long a Kafka fetch waits at a partition's end."
    )
    partitions: int = Field(8, ge=1, le=1024, description="Partitions of topics Arena creates.")
    consumer_session_timeout_ms: int = Field(
        10_000,
        ge=1000,
        le=300_000,
        description="A consumer-group member silent this long is dropped and its partitions move.",
    )
    consumer_heartbeat_ms: int = Field(
        1000, ge=100, le=60_000, description="How often a consumer-group member heartbeats."
    )
    eventlog_tail_records: int = Field(
        256,
        ge=0,
        le=1_000_000,
        description="Embedded log: own latest appends kept per partition to answer reads.",
    )
    http_host: str = Field("127.0.0.1", description="Address the HTTP server binds.")
    http_port: int = Field(8000, ge=0, le=65535, description="Port of the HTTP server.")
    log_level: str = Field("INFO", pattern=r"^(DEBUG|INFO|WARNING|ERROR)$")
    log_format: str = Field("json", pattern=r"^(json|console)$")
    otel_exporter_endpoint: str | None = Field(None, description="OTLP/HTTP endpoint; unset: off")
    service_name: str = Field("arena", description="Service name in telemetry.")
    gc_freeze_seconds: float = Field(
        5.0, ge=0, le=3600, description="How often survivors are frozen out of full GC passes."
    )
    gc_full_seconds: float = Field(
        600.0, ge=0, le=86_400, description="How often the heap is collected in full."
    )
    serve_projections: str = Field(
        "process",
        pattern=r"^(process|inline)$",
        description="Where `arena serve` runs the projections: a child process, or inline.",
    )
    parent_pid: int | None = Field(
        None, ge=1, description="Set by `arena serve` for its child: stop when it is gone."
    )
    event_loop: str = Field(
        "uvloop", pattern=r"^(uvloop|asyncio)$", description="The asyncio event loop to run on."
    )
    projection_batch_size: int = Field(
        500, ge=1, le=100_000, description="Records a projection applies per SQL transaction."
    )
    projection_poll_ms: int = Field(
        200, ge=1, le=60_000, description="How long an idle projection waits before polling."
    )
    projection_linger_ms: int = Field(
        50,
        ge=0,
        le=60_000,
        description="How long a busy projection gathers records before its next transaction.",
    )
    cache_prefix: str = Field("arena:", description="Prepended to every Redis key and channel.")
    # -- gateway (docs/protocol.md) --------------------------------------------------------
    allowed_origins: str = Field(
        "", description="Comma-separated WebSocket Origin allow-list; '*' allows any origin."
    )
    session_ttl_seconds: float = Field(
        86_400, gt=0, description="How long a session token lives after its last use."
    )
    ws_heartbeat_seconds: float = Field(
        30, gt=0, description="WebSocket ping interval; a ping unanswered by the next one closes."
    )
    ws_session_check_seconds: float = Field(
        30,
        gt=0,
        description="How often each open WebSocket's session is looked up: an expired one is "
        "closed, a guest's is kept alive.",
    )
    ws_time_sync_seconds: float = Field(5, gt=0, description="Interval of time_sync pushes.")
    ws_auth_timeout_seconds: float = Field(
        10, gt=0, description="How long a new WebSocket may take to authenticate."
    )
    ws_rate_limit: float = Field(10, gt=0, description="Client messages per second per player.")
    ws_max_message_bytes: int = Field(
        4096, ge=256, le=1_048_576, description="Largest client message accepted."
    )
    command_timeout_seconds: float = Field(
        10, gt=0, description="How long the gateway waits for a command's answer in the log."
    )
    # -- accounts (docs/architecture.md, "Accounts") ---------------------------------------
    account_session_seconds: float = Field(
        604_800, gt=0, description="How long a signed-in account's session token lives."
    )
    sign_in_rate: float = Field(
        0.2,
        gt=0,
        description="Sign-in attempts per second per username (ten times that per address).",
    )
    sign_in_burst: float = Field(
        5, ge=1, description="Sign-in attempts allowed at once before the rate applies."
    )
    register_rate: float = Field(
        0.05,
        gt=0,
        description="Registrations and guest upgrades per second per client address.",
    )
    register_burst: float = Field(
        10, ge=1, description="Registrations allowed at once from one address before the rate."
    )
    # -- match service (docs/online-play.md) -----------------------------------------------
    match_reconnect_seconds: float = Field(
        30, gt=0, le=3600, description="Reconnect window of a player who dropped out of a game."
    )
    match_ai_think_ms: int = Field(
        700, ge=0, le=60_000, description="How long the server-side AI waits before it moves."
    )
    match_evict_seconds: float = Field(
        120, ge=0, description="How long a finished match stays in the match service's memory."
    )
    # -- matchmaking service (docs/online-play.md) -----------------------------------------
    room_cap: int = Field(
        10_000, ge=1, description="Most rooms open at once (waiting, playing or finished)."
    )
    room_waiting_seconds: float = Field(
        300, gt=0, description="How long a room waits for its second player before it closes."
    )
    room_idle_seconds: float = Field(
        120, gt=0, description="How long a finished room with nobody connected stays open."
    )
    room_forget_seconds: float = Field(
        120,
        ge=0,
        description="How long the matchmaking service keeps a closed room's answers in memory.",
    )

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_case(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("log_format", mode="before")
    @classmethod
    def _lower_case(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    @field_validator("kafka_bootstrap")
    @classmethod
    def _check_bootstrap(cls, value: str | None) -> str | None:
        if value is None:
            return None
        for address in value.split(","):
            host, sep, port = address.strip().rpartition(":")
            if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError("expected host:port[,host:port]")
        return value

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(_DATABASE_SCHEMES):
            raise ValueError(f"expected a URL starting with one of {', '.join(_DATABASE_SCHEMES)}")
        return value

    @field_validator("redis_url")
    @classmethod
    def _check_redis_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(_REDIS_SCHEMES):
            raise ValueError(f"expected a URL starting with one of {', '.join(_REDIS_SCHEMES)}")
        return value

    @field_validator("otel_exporter_endpoint")
    @classmethod
    def _check_endpoint(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("expected an http:// or https:// URL")
        return value

    @property
    def embedded(self) -> bool:
        return self.kafka_bootstrap is None

    def sqlite_path(self, name: str) -> Path:
        return self.data_dir / name


class _FromValues(Settings):
    """Settings built from given values only, so load_settings reads exactly one mapping."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def variable_name(field: str) -> str:
    """The environment variable of a setting: ``http_port`` -> ``ARENA_HTTP_PORT``."""
    return ENV_PREFIX + field.upper()


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Settings from ``environ`` (default: the process environment), or a ConfigError.

    An empty variable counts as unset, so ``ARENA_KAFKA_BOOTSTRAP=`` selects the embedded log.
    """
    env = os.environ if environ is None else environ
    values: dict[str, str] = {}
    for key, raw in env.items():
        if not key.startswith(ENV_PREFIX) or key.startswith(TEST_ENV_PREFIX):
            continue
        field = key[len(ENV_PREFIX) :].lower()
        if field not in Settings.model_fields:
            known = ", ".join(variable_name(name) for name in Settings.model_fields)
            raise ConfigError(key, f"no such setting (known: {known})")
        if raw.strip():
            values[field] = raw.strip()
    try:
        loaded = _FromValues.model_validate(values)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = str(error["loc"][0]) if error["loc"] else "?"
        message = str(error["msg"]).removeprefix("Value error, ")
        raise ConfigError(variable_name(field), f"{message} (got {values.get(field)!r})") from None
    return Settings.model_construct(_fields_set=loaded.model_fields_set, **loaded.model_dump())
