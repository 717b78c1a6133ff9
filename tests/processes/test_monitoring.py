"""deploy/monitoring: Prometheus alert rules and the Grafana dashboard, checked as promtool would.

promtool is not installable here, so the rule file is checked for the structure Prometheus
loads (groups of rules, each an alert with an expression, a `for` duration, labels and
annotations), every PromQL expression is parsed by promql-parser (the Rust parser used by
GreptimeDB, compatible with Prometheus 2.45), and every metric an expression or a dashboard panel
selects must be one the code registers: a renamed metric fails here, not silently on call.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
import time
from pathlib import Path
from typing import Any

import promql_parser
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.harness.kafka import ConsumerTimings
from tests.processes.arena_process import ArenaProcess, arena_env, free_port

ROOT = Path(__file__).resolve().parents[2]
MONITORING = ROOT / "deploy" / "monitoring"
RULES = MONITORING / "arena-alerts.yaml"
DASHBOARD = MONITORING / "arena-dashboard.json"
#: Series Prometheus makes itself for every scrape target.
SCRAPE_SERIES = frozenset({"up", "scrape_duration_seconds", "scrape_samples_scraped"})
SUFFIXES = {
    "counter": ("_total", "_created"),
    "gauge": ("",),
    "histogram": ("_bucket", "_count", "_sum", "_created"),
    "summary": ("", "_count", "_sum", "_created"),
    "info": ("_info",),
}


def _metric_modules() -> list[str]:
    """Every module of the code that uses prometheus_client (new ones are found too)."""
    modules = []
    for src in sorted([*ROOT.glob("libs/*/src"), *ROOT.glob("services/*/src")]):
        for path in src.rglob("*.py"):
            if "prometheus_client" in path.read_text():
                modules.append(".".join(path.relative_to(src).with_suffix("").parts))
    return modules


@functools.cache
def registered_series() -> frozenset[str]:
    """The series names the processes can export: every metric of the default registry."""
    from prometheus_client import REGISTRY

    for module in _metric_modules():
        importlib.import_module(module)
    from arena_runtime.host.metrics import ServiceCollector

    collector = ServiceCollector([])  # registered only while a host runs
    try:
        families = list(REGISTRY.collect())
    finally:
        collector.close()
    names = set(SCRAPE_SERIES)
    for family in families:
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
        names.update(sample.name for sample in family.samples)
    return frozenset(names)


def selected_metrics(expr: str) -> set[str]:
    """Every metric name a PromQL expression selects; a parse error fails the caller."""
    names: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            if node.name:
                names.add(node.name)
            for matcher in node.matchers.matchers:
                if matcher.name == "__name__":
                    names.add(matcher.value)

    promql_parser.walk(promql_parser.parse(expr), pre_visit=visit)
    return names


def rules() -> list[dict[str, Any]]:
    data = yaml.safe_load(RULES.read_text())
    return [rule for group in data["groups"] for rule in group["rules"]]


def test_the_metric_registry_is_found() -> None:
    series = registered_series()
    for name in (
        "arena_commands_total",
        "arena_record_age_seconds_bucket",
        "arena_service_ready",
        "arena_rooms_open",
        "python_gc_collections_total",
    ):
        assert name in series


def test_the_rule_file_has_the_structure_prometheus_loads() -> None:
    data = yaml.safe_load(RULES.read_text())
    assert set(data) == {"groups"}
    groups = data["groups"]
    assert len({g["name"] for g in groups}) == len(groups)
    for group in groups:
        assert set(group) <= {"name", "interval", "limit", "rules"}
        assert group["rules"]
        for rule in group["rules"]:
            assert set(rule) <= {"alert", "expr", "for", "keep_firing_for", "labels", "annotations"}
            assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", rule["alert"])
            if "for" in rule:
                promql_parser.parse_duration(rule["for"])
            assert rule["labels"]["severity"] in ("critical", "warning")
            assert {"summary", "description", "runbook"} <= set(rule["annotations"])
    alerts = [r["alert"] for r in rules()]
    assert len(set(alerts)) == len(alerts)


@pytest.mark.parametrize("rule", rules(), ids=lambda r: r["alert"])
def test_every_alert_parses_and_selects_registered_metrics(rule: dict[str, Any]) -> None:
    metrics = selected_metrics(rule["expr"])
    assert metrics, "an alert must watch some metric"
    assert metrics <= registered_series(), metrics - registered_series()


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", markdown, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("rule", rules(), ids=lambda r: r["alert"])
def test_every_alert_points_at_a_runbook_entry(rule: dict[str, Any]) -> None:
    page, _, anchor = rule["annotations"]["runbook"].partition("#")
    assert anchor in _anchors((ROOT / page).read_text())


def test_the_issue_s_alerts_are_all_there() -> None:
    watched = {rule["alert"]: selected_metrics(rule["expr"]) for rule in rules()}
    wanted = {
        "a service down": "up",
        "not ready": "arena_service_ready",
        "consumer lag growing": "arena_consumer_partition_lag",
        "rebalances": "arena_consumer_rebalances_total",
        "command answer timeouts": "arena_gateway_commands_total",
        "a service answering nothing": "arena_gateway_service_answering",
        "command latency": "arena_gateway_command_seconds_bucket",
        "malformed records": "arena_malformed_records_total",
        "projection offset conflicts": "arena_projection_offset_conflicts_total",
        "GC pauses": "python_gc_collections_total",
        "snapshot age": "arena_stream_snapshot_age_seconds",
    }
    every = set().union(*watched.values())
    for what, metric in wanted.items():
        assert metric in every, what
    assert "PLACEHOLDER" not in RULES.read_text()


def dashboard_targets() -> list[tuple[str, str]]:
    board = json.loads(DASHBOARD.read_text())
    return [
        (panel["title"], target["expr"])
        for panel in board["panels"]
        for target in panel.get("targets", [])
    ]


def test_the_dashboard_is_a_grafana_dashboard() -> None:
    board = json.loads(DASHBOARD.read_text())
    assert board["title"] and board["uid"] and board["schemaVersion"] >= 36
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in board["panels"]:
        assert {"h", "w", "x", "y"} <= set(panel["gridPos"])
        assert panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        if panel["type"] != "row":
            assert panel["targets"], panel["title"]
            assert panel["datasource"]["uid"] == "${datasource}"
    (variable,) = board["templating"]["list"]
    assert (variable["name"], variable["type"]) == ("datasource", "datasource")
    assert not any("PLACEHOLDER" in panel["title"] for panel in board["panels"])


@pytest.mark.parametrize(("title", "expr"), dashboard_targets(), ids=lambda v: str(v)[:40])
def test_every_dashboard_query_parses_and_selects_registered_metrics(title: str, expr: str) -> None:
    metrics = selected_metrics(expr)
    assert metrics, title
    assert metrics <= registered_series(), metrics - registered_series()


def used_metrics() -> set[str]:
    """Every metric an alert or a dashboard panel selects."""
    used = {name for rule in rules() for name in selected_metrics(rule["expr"])}
    return used | {name for _, expr in dashboard_targets() for name in selected_metrics(expr)}


def exported_series(text: str) -> set[str]:
    """The series names a /metrics page exports: its families with their suffixes (a labelled
    family is exported before its first sample, as its HELP and TYPE lines)."""
    names: set[str] = set()
    for family in text_string_to_metric_families(text):
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
        names.update(sample.name for sample in family.samples)
    return names


@pytest.mark.kafka
def test_running_processes_export_every_metric_the_rules_and_dashboard_use_and_idle_quietly(
    tmp_path: Path,
    kafka_bootstrap: str,
    topic_prefix: str,
    kafka_consumer_timings: ConsumerTimings,
) -> None:
    """`arena serve` on the broker, projections inline: every process kind's metrics in one
    /metrics (the Kafka-only ones too). Then, idle, it logs nothing at INFO for many of its
    polling intervals (the consumers poll every 250 ms, the projections here every 50 ms)."""
    env = arena_env(
        tmp_path / "var",
        free_port(),
        ARENA_KAFKA_BOOTSTRAP=kafka_bootstrap,
        ARENA_TOPIC_PREFIX=f"{topic_prefix}monitoring.",
        ARENA_SERVE_PROJECTIONS="inline",
        ARENA_PROJECTION_POLL_MS="50",
        ARENA_LOG_FORMAT="json",
        **kafka_consumer_timings.settings(),
    )
    process = ArenaProcess(["serve"], env, tmp_path / "arena.log")
    try:
        process.wait_until("/readyz", 200, timeout=120)
        exported = exported_series(process.get("/metrics").text)
        missing = used_metrics() - exported - SCRAPE_SERIES
        assert not missing, f"used by the rules or the dashboard, exported by no process: {missing}"
        # Partition lag is live: the series of the assigned partitions are there.
        assert 'arena_consumer_partition_lag{group="match"' in process.get("/metrics").text
        before = len(process.output().splitlines())
        time.sleep(3)  # 12 consumer polls, 60 projection polls
        idle = process.output().splitlines()[before:]
        assert idle == [], f"an idle process logged {len(idle)} lines: {idle[:5]}"
    finally:
        process.terminate()
