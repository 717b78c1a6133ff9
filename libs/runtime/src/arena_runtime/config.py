"""Configuration from ARENA_* environment variables (documented in docs/operations.md).

With no Kafka, database or Redis address given, everything runs embedded under ``data_dir``:
the SQLite event log, SQLite projections and in-process limits.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ARENA_", extra="ignore", frozen=True)

    data_dir: Path = Field(Path("./var"), description="State of the embedded mode.")
    kafka_bootstrap: str | None = Field(None, description="host:port[,host:port]; unset: embedded")
    database_url: str | None = Field(None, description="SQLAlchemy async URL; unset: SQLite")
    redis_url: str | None = Field(None, description="redis://host:port/db; unset: in-process")
    topic_prefix: str = Field("", description="Prepended to every topic name.")
    partitions: int = Field(8, ge=1, le=1024, description="Partitions of topics Arena creates.")
    http_host: str = Field("127.0.0.1", description="Address the HTTP server binds.")
    http_port: int = Field(8000, ge=0, le=65535, description="Port of the HTTP server.")
    log_level: str = Field("INFO", pattern=r"^(DEBUG|INFO|WARNING|ERROR)$")
    log_format: str = Field("json", pattern=r"^(json|console)$")
    otel_exporter_endpoint: str | None = Field(None, description="OTLP/HTTP endpoint; unset: off")
    service_name: str = Field("arena", description="Service name in telemetry.")

    @property
    def embedded(self) -> bool:
        return self.kafka_bootstrap is None

    def sqlite_path(self, name: str) -> Path:
        return self.data_dir / name
