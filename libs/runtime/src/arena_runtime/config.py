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

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from arena_runtime.eventlog.base import GROUP_HEARTBEAT_MS, GROUP_SESSION_TIMEOUT_MS
from arena_runtime.redaction import redact

ENV_PREFIX = "ARENA_"
#: Variables of the test harness (tests/harness), not settings of the processes.
TEST_ENV_PREFIX = "ARENA_TEST_"

_DATABASE_SCHEMES = ("postgresql+asyncpg://", "sqlite+aiosqlite://")
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


class ConfigError(ValueError):
    """A setting is invalid; ``variable`` names the ARENA_ environment variable at fault."""

    def __init__(self, variable: str, problem: str) -> None:
        # The problem may quote the value, or a driver's error quoting it: never a password.
        problem = redact(problem)
        super().__init__(f"{variable}: {problem}")
        self.variable = variable
        self.problem = problem


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore", frozen=True)

    data_dir: Path = Field(Path("./var"), description="State of the embedded mode.")
    kafka_bootstrap: str | None = Field(None, description="host:port[,host:port]; unset: embedded")
    # Secrets (a password in a URL, credentials) are SecretStr: repr, str and dumps show
    # '**********', and a bad value's error message hides them (load_settings).
    database_url: SecretStr | None = Field(None, description="SQLAlchemy async URL; unset: SQLite")
    redis_url: SecretStr | None = Field(None, description="redis://host:port/db; unset: in-process")
    topic_prefix: str = Field("", description="Prepended to every topic name.")
    kafka_fetch_wait_ms: int = Field(
        3, ge=1, le=10_000, description="How long a Kafka fetch waits at a partition's end."
    )
    partitions: int = Field(8, ge=1, le=1024, description="Partitions of topics Arena creates.")
    # -- Kafka durability and security (docs/operations.md, "Kafka") ----------------------
    kafka_replication_factor: int = Field(
        1, ge=1, le=32, description="Replicas of each topic Arena creates."
    )
    kafka_min_insync_replicas: int | None = Field(
        None,
        ge=1,
        le=32,
        description="min.insync.replicas of each topic Arena creates; unset: the broker's.",
    )
    kafka_tls: bool = Field(False, description="Connect to the brokers over TLS.")
    kafka_tls_ca_file: Path | None = Field(
        None, description="PEM file of the CAs that sign the brokers' certificates."
    )
    kafka_tls_cert_file: Path | None = Field(
        None, description="PEM file of this client's certificate (mutual TLS)."
    )
    kafka_tls_key_file: Path | None = Field(None, description="PEM file of the client's key.")
    kafka_tls_key_password: SecretStr | None = Field(
        None, description="Password of the client's key file, if it is encrypted."
    )
    kafka_tls_check_hostname: bool = Field(
        True, description="Check that a broker's certificate names the host connected to."
    )
    kafka_sasl_mechanism: str | None = Field(
        None,
        pattern=r"^(PLAIN|SCRAM-SHA-256|SCRAM-SHA-512)$",
        description="SASL mechanism to authenticate with; unset: no SASL.",
    )
    kafka_sasl_username: str | None = Field(None, description="SASL user name.")
    kafka_sasl_password: SecretStr | None = Field(None, description="SASL password.")
    export_pseudonym_key: SecretStr | None = Field(
        None,
        description="Key of the keyed hash that `arena events export --pseudonymise` replaces "
        "player identifiers with (arena_runtime.privacy); at least 16 characters.",
    )
    consumer_session_timeout_ms: int = Field(
        GROUP_SESSION_TIMEOUT_MS,
        ge=1000,
        le=300_000,
        description="A consumer-group member silent this long is dropped and its partitions move.",
    )
    consumer_heartbeat_ms: int = Field(
        GROUP_HEARTBEAT_MS,
        ge=100,
        le=60_000,
        description="How often a consumer-group member heartbeats.",
    )
    eventlog_tail_records: int = Field(
        256,
        ge=0,
        le=1_000_000,
        description="Embedded log: own latest appends kept per partition to answer reads.",
    )
    eventlog_peer_wakeups: bool = Field(
        True,
        description=(
            "Embedded log: hear at once of other processes' appends to the file (else every "
            "100 ms)."
        ),
    )
    http_host: str = Field("127.0.0.1", description="Address the HTTP server binds.")
    http_port: int = Field(8000, ge=0, le=65535, description="Port of the HTTP server.")
    http_header_timeout_seconds: float = Field(
        10,
        gt=0,
        le=3600,
        description="How long a client may take to send a request's head, from its first byte "
        "(from the connection's opening for the first request).",
    )
    http_idle_timeout_seconds: float = Field(
        5,
        gt=0,
        le=3600,
        description="How long a connection may stay silent between requests or inside a "
        "request's body.",
    )
    log_level: str = Field("INFO", pattern=r"^(DEBUG|INFO|WARNING|ERROR)$")
    log_format: str = Field("json", pattern=r"^(json|console)$")
    otel_traces_file: Path | None = Field(
        None,
        description="File the process appends its spans to, one JSON object per line (to view "
        "traces without a collector, e.g. under make run); unset: none.",
    )
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
    serve_services: str = Field(
        "",
        pattern=r"^((match|matchmaking|rating)(,(match|matchmaking|rating))*)?$",
        description=(
            "Where `arena serve` runs match, matchmaking and rating: inline, beside the "
            "gateway, or each in a child process of its own."
        ),
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
    event_consumer_linger_ms: int = Field(
        50,
        ge=0,
        le=10_000,
        description="How long a reader of another service's events that no player waits on "
        "(a match's end for its room, a result for the ladder) gathers records between polls.",
    )
    cache_prefix: str = Field("arena:", description="Prepended to every Redis key and channel.")
    # -- gateway (docs/protocol.md) --------------------------------------------------------
    allowed_origins: str = Field(
        "", description="Comma-separated WebSocket Origin allow-list; '*' allows any origin."
    )
    web_dir: Path | None = Field(
        None, description="The built web client served at /; unset: services/gateway/web/dist."
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
    ws_time_sync_seconds: float = Field(
        5, gt=0, description="Interval of the clocks' pushes (time_sync), by the match service."
    )
    spectator_lease_seconds: float = Field(
        30,
        ge=1,
        le=3600,
        description="How long the match service makes a match's spectators' pushes after a "
        "gateway says someone watches it (gateways renew every third of it); the same on the "
        "gateways and the match services.",
    )
    ws_auth_timeout_seconds: float = Field(
        10, gt=0, description="How long a new WebSocket may take to authenticate."
    )
    ws_rate_limit: float = Field(10, gt=0, description="Client messages per second per player.")
    ws_max_message_bytes: int = Field(
        4096,
        ge=256,
        le=1_048_576,
        description="Largest client message accepted; a larger frame closes the socket (1009).",
    )
    ws_max_sockets_per_address: int = Field(
        100, ge=1, description="WebSockets open at once from one client address."
    )
    guest_rate: float = Field(1, gt=0, description="Guests created per second per client address.")
    guest_burst: float = Field(
        20, ge=1, description="Guests created at once from one address before that rate applies."
    )
    puzzle_rate: float = Field(
        2, gt=0, description="Puzzles shown or checked per second per player (the trainer's CPU)."
    )
    puzzle_burst: float = Field(10, ge=1, description="Puzzle requests at once before that rate.")
    command_timeout_seconds: float = Field(
        10, gt=0, description="How long the gateway waits for a command's answer in the log."
    )
    ws_drain_seconds: float = Field(
        5,
        ge=0,
        le=60,
        description="On shutdown, how long the gateway waits for the answers of commands in "
        "flight after telling its sockets server_shutdown, before closing them with 1012.",
    )
    # -- accounts (docs/services.md, "Accounts") -------------------------------------------
    account_session_seconds: float = Field(
        604_800, gt=0, description="How long a signed-in account's session token lives."
    )
    sign_in_rate: float = Field(
        0.2,
        gt=0,
        description="Sign-in attempts per second per username and client address (ten times "
        "that per address).",
    )
    sign_in_burst: float = Field(
        5,
        ge=1,
        description="Sign-in attempts allowed at once before the rate applies, and failures in a "
        "row before each further one makes the next attempt wait.",
    )
    sign_in_backoff_seconds: float = Field(
        1, gt=0, description="The first wait after too many failed sign-ins; doubled each failure."
    )
    sign_in_backoff_max_seconds: float = Field(
        900, gt=0, description="The longest wait after failed sign-ins."
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
    match_snapshot_seconds: float = Field(
        30,
        ge=0,
        description="How often the match service snapshots each partition it owns that moved "
        "(0: only at a graceful stop).",
    )
    rating_snapshot_seconds: float = Field(
        30,
        ge=0,
        description="How often the rating service snapshots each ladder partition it owns that "
        "moved (0: only at a graceful stop and after a replay).",
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
    live_match_seconds: float = Field(
        7200,
        gt=0,
        description=(
            "Matchmaking: how long after its start an AI game or quick match still counts as the"
            " player's live match if its end was never read (one live match per player)."
        ),
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

    @field_validator("kafka_sasl_mechanism", mode="before")
    @classmethod
    def _upper_case_mechanism(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @field_validator("kafka_bootstrap")
    @classmethod
    def _check_bootstrap(cls, value: str | None) -> str | None:
        if value is None:
            return None
        for address in value.split(","):
            host, sep, port = address.strip().rpartition(":")
            if (
                not sep
                or not host
                or "@" in host
                or not port.isdigit()
                or not 0 < int(port) < 65536
            ):
                raise ValueError("expected host:port[,host:port]")
        return value

    @field_validator("database_url")
    @classmethod
    def _check_database_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith(_DATABASE_SCHEMES):
            raise ValueError(f"expected a URL starting with one of {', '.join(_DATABASE_SCHEMES)}")
        return value

    @field_validator("redis_url")
    @classmethod
    def _check_redis_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith(_REDIS_SCHEMES):
            raise ValueError(f"expected a URL starting with one of {', '.join(_REDIS_SCHEMES)}")
        return value

    @field_validator("export_pseudonym_key")
    @classmethod
    def _check_pseudonym_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < 16:
            raise ValueError("a pseudonym key needs at least 16 characters")
        return value

    @model_validator(mode="after")
    def _check_kafka_together(self) -> Settings:
        """Kafka settings that only make sense together; the error names the one to change."""
        problems = (
            (
                self.kafka_min_insync_replicas is not None
                and self.kafka_min_insync_replicas > self.kafka_replication_factor,
                "kafka_min_insync_replicas",
                f"{self.kafka_min_insync_replicas} is more than the "
                f"{self.kafka_replication_factor} replicas of ARENA_KAFKA_REPLICATION_FACTOR: "
                "every append would be refused",
            ),
            (
                (self.kafka_tls_cert_file is None) != (self.kafka_tls_key_file is None),
                "kafka_tls_key_file" if self.kafka_tls_key_file is None else "kafka_tls_cert_file",
                "a client certificate needs both ARENA_KAFKA_TLS_CERT_FILE and "
                "ARENA_KAFKA_TLS_KEY_FILE",
            ),
            (
                not self.kafka_tls
                and not (self.kafka_tls_ca_file is None and self.kafka_tls_cert_file is None),
                "kafka_tls",
                "TLS files are given but ARENA_KAFKA_TLS is off",
            ),
            (
                self.kafka_sasl_mechanism is not None
                and (self.kafka_sasl_username is None or self.kafka_sasl_password is None),
                "kafka_sasl_username"
                if self.kafka_sasl_username is None
                else "kafka_sasl_password",
                f"SASL {self.kafka_sasl_mechanism} needs ARENA_KAFKA_SASL_USERNAME and "
                "ARENA_KAFKA_SASL_PASSWORD",
            ),
            (
                self.kafka_sasl_mechanism is None
                and (self.kafka_sasl_username or self.kafka_sasl_password) is not None,
                "kafka_sasl_mechanism",
                f"SASL credentials are given without a mechanism ({', '.join(SASL_MECHANISMS)})",
            ),
            (
                # Kafka's clients refuse it too: a member would miss its own session.
                self.consumer_heartbeat_ms >= self.consumer_session_timeout_ms,
                "consumer_heartbeat_ms",
                f"{self.consumer_heartbeat_ms} is not shorter than the "
                f"{self.consumer_session_timeout_ms} ms of ARENA_CONSUMER_SESSION_TIMEOUT_MS",
            ),
        )
        for wrong, field, problem in problems:
            if wrong:
                raise PydanticCustomError(
                    "arena_settings", "{problem}", {"field": field, "problem": problem}
                )
        return self

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
        context = error.get("ctx") or {}
        field = str(error["loc"][0]) if error["loc"] else str(context.get("field", "?"))
        message = str(error["msg"]).removeprefix("Value error, ")
        given = _shown(field, values.get(field))
        raise ConfigError(variable_name(field), f"{message} (got {given})") from None
    return Settings.model_construct(_fields_set=loaded.model_fields_set, **loaded.model_dump())


def _shown(field: str, raw: str | None) -> str:
    """A given value as an error message may show it: never a password."""
    annotation = (
        str(Settings.model_fields[field].annotation) if field in Settings.model_fields else ""
    )
    if raw is None or "SecretStr" not in annotation:
        return repr(raw)
    if "://" in raw:  # a URL: its scheme and host help, its credentials must not show
        scheme, _, rest = raw.partition("://")
        host = rest.rpartition("@")[2].split("/", 1)[0]
        return f"a {scheme}:// URL to {host!r}, credentials hidden"
    return "a secret value, hidden"
