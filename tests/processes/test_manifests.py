"""The operations files, checked offline: Kubernetes manifests against the API schemas and the
kustomizations against the files beside them; docker-compose.yml for what every service needs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BASE = DEPLOY / "base"
KUBERNETES_VERSION = "1.31.0"
SERVICES = ("gateway", "match", "matchmaking", "rating", "projections")


def load_all(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def kustomization(directory: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((directory / "kustomization.yaml").read_text())
    return data


def base_documents() -> list[dict[str, Any]]:
    return [doc for name in kustomization(BASE)["resources"] for doc in load_all(BASE / name)]


def of_kind(kind: str) -> list[dict[str, Any]]:
    return [doc for doc in base_documents() if doc["kind"] == kind]


def test_base_kustomization_lists_exactly_the_manifest_files() -> None:
    listed = kustomization(BASE)["resources"]
    present = sorted(p.name for p in BASE.glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(listed) == present
    assert len(listed) == len(set(listed))


@pytest.mark.parametrize("path", sorted(BASE.glob("*.yaml")), ids=lambda p: p.name)
def test_manifest_validates_against_kubernetes_schema(path: Path) -> None:
    for doc in load_all(path):
        if doc.get("kind") == "Kustomization":
            continue
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_every_service_has_a_deployment_and_a_service() -> None:
    deployments = {d["metadata"]["name"] for d in of_kind("Deployment")}
    services = {s["metadata"]["name"] for s in of_kind("Service")}
    expected = {f"arena-{name}" for name in SERVICES}
    assert deployments == expected
    assert services == expected


@pytest.mark.parametrize("name", SERVICES)
def test_deployment_has_probes_resources_and_config(name: str) -> None:
    (deployment,) = [d for d in of_kind("Deployment") if d["metadata"]["name"] == f"arena-{name}"]
    pod = deployment["spec"]["template"]
    assert (
        deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    )
    (container,) = pod["spec"]["containers"]
    assert container["args"] == [name]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert container[probe]["httpGet"]["port"] in ports
    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= container["resources"][kind].keys()
    config_maps = {c["metadata"]["name"] for c in of_kind("ConfigMap")}
    refs = {e["configMapRef"]["name"] for e in container["envFrom"] if "configMapRef" in e}
    assert refs and refs <= config_maps


def test_services_select_their_deployments_pods_and_ports() -> None:
    pods = {d["metadata"]["name"]: d["spec"]["template"] for d in of_kind("Deployment")}
    for service in of_kind("Service"):
        pod = pods[service["metadata"]["name"]]
        assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
        port_names = {p["name"] for c in pod["spec"]["containers"] for p in c["ports"]}
        assert {p["targetPort"] for p in service["spec"]["ports"]} <= port_names


def test_config_map_holds_only_known_valid_arena_settings() -> None:
    from arena_runtime.config import Settings, load_settings, variable_name

    known = {variable_name(field) for field in Settings.model_fields}
    for config_map in of_kind("ConfigMap"):
        assert set(config_map["data"]) <= known
        settings = load_settings(config_map["data"])  # a ConfigError if a value is out of range
        # On Kafka a waiting fetch is answered when a record arrives: a long wait costs nothing.
        assert settings.kafka_fetch_wait_ms >= 100


def test_compose_waits_long_on_kafka_fetches() -> None:
    from arena_runtime.config import load_settings

    env = {k: str(v) for k, v in compose()["x-arena-env"].items()}
    assert load_settings(env).kafka_fetch_wait_ms >= 100


@pytest.mark.parametrize(
    "overlay", sorted(p.parent for p in (DEPLOY / "overlays").glob("*/kustomization.yaml"))
)
def test_overlay_refers_to_existing_files_and_deployments(overlay: Path) -> None:
    spec = kustomization(overlay)
    for resource in spec["resources"]:
        assert (overlay / resource / "kustomization.yaml").is_file() or (
            overlay / resource
        ).is_file()
    deployments = {d["metadata"]["name"] for d in of_kind("Deployment")}
    assert {r["name"] for r in spec.get("replicas", [])} <= deployments
    for patch in spec.get("patches", []):
        (doc,) = load_all(overlay / patch["path"])
        assert doc["metadata"]["name"] in deployments
        containers = {
            c["name"]
            for d in of_kind("Deployment")
            if d["metadata"]["name"] == doc["metadata"]["name"]
            for c in d["spec"]["template"]["spec"]["containers"]
        }
        assert {c["name"] for c in doc["spec"]["template"]["spec"]["containers"]} <= containers
    images = {
        c["image"].split(":")[0]
        for d in of_kind("Deployment")
        for c in d["spec"]["template"]["spec"]["containers"]
    }
    assert {i["name"] for i in spec.get("images", [])} <= images


# docker-compose.yml cannot run here (no Docker engine), so check its structure.


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


def test_compose_runs_the_distributed_stack() -> None:
    services = compose()["services"]
    assert set(services) == {"kafka", "postgres", "redis", "otel-collector", *SERVICES}
    assert services["kafka"]["image"].startswith("apache/kafka:")
    assert "controller" in services["kafka"]["environment"]["KAFKA_PROCESS_ROLES"]  # KRaft


@pytest.mark.parametrize("name", ["kafka", "postgres", "redis", "otel-collector", *SERVICES])
def test_compose_service_has_image_and_healthcheck(name: str) -> None:
    service = compose()["services"][name]
    assert "image" in service or "build" in service
    assert service["healthcheck"]["test"]


# Redis needs no configuration; every other part is configured through its environment.
@pytest.mark.parametrize("name", ["kafka", "postgres", "otel-collector", *SERVICES])
def test_compose_service_is_configured_by_environment(name: str) -> None:
    assert compose()["services"][name]["environment"]


@pytest.mark.parametrize("name", SERVICES)
def test_compose_arena_service_is_distributed_and_built_here(name: str) -> None:
    from arena_runtime.config import load_settings

    service = compose()["services"][name]
    assert service["build"] == "."
    assert (ROOT / "Dockerfile").is_file()
    assert service["command"] == [name]
    env = {k: str(v) for k, v in service["environment"].items()}
    settings = load_settings(env)  # every variable is a known, valid setting
    assert not settings.embedded
    assert settings.database_url and settings.redis_url
    host = settings.kafka_bootstrap.split(":")[0] if settings.kafka_bootstrap else ""
    assert host in compose()["services"]
    for dependency, condition in service["depends_on"].items():
        assert dependency in compose()["services"]
        assert condition["condition"] in ("service_healthy", "service_started")


def test_compose_mounts_the_collector_config_from_deploy() -> None:
    collector = compose()["services"]["otel-collector"]
    sources = [v.split(":")[0] for v in collector["volumes"]]
    assert "./deploy/otel-collector.yaml" in sources
    config = yaml.safe_load((DEPLOY / "otel-collector.yaml").read_text())
    for pipeline in config["service"]["pipelines"].values():
        assert set(pipeline["receivers"]) <= set(config["receivers"])
        assert set(pipeline["exporters"]) <= set(config["exporters"])


def test_dockerfile_installs_every_workspace_member_from_the_lock() -> None:
    import tomllib

    workspace = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["workspace"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    for member in workspace["members"]:
        assert f"COPY {member}/pyproject.toml {member}/" in dockerfile, member
        assert (ROOT / member / "pyproject.toml").is_file()
    assert "uv sync --frozen --no-dev" in dockerfile
    assert 'ENTRYPOINT ["arena"]' in dockerfile
