"""Readiness and consumer lag as Prometheus gauges, read from the services at scrape time."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from arena_runtime.host.service import Service


class ServiceCollector(Collector):
    """Registered while a host runs; several hosts in one test process each add their own."""

    def __init__(self, services: Sequence[Service]) -> None:
        self._services = list(services)
        REGISTRY.register(self)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        ready = GaugeMetricFamily(
            "arena_service_ready",
            "1 when the service has caught up with the log",
            labels=["service"],
        )
        lag = GaugeMetricFamily(
            "arena_consumer_lag",
            "Records between a worker's position and the end offsets seen at start-up",
            labels=["service", "worker"],
        )
        for service in self._services:
            ready.add_metric([service.name], 1.0 if service.ready() else 0.0)
            for worker in service.workers:
                catch_up = getattr(worker, "catch_up", None)
                if catch_up is not None:
                    lag.add_metric([service.name, worker.name], float(catch_up.lag()))
        yield ready
        yield lag

    def close(self) -> None:
        REGISTRY.unregister(self)
