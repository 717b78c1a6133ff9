"""The operations files, checked offline: the Kubernetes manifests as kustomize renders them
(base and every overlay) against the API schemas, the "restricted" Pod Security Standard
(tests/processes/pod_security.py) and what an operator relies on; docker-compose.yml for what
every service needs."""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from tests.processes.pod_security import violations

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BASE = DEPLOY / "base"
OVERLAYS = sorted(p.parent for p in (DEPLOY / "overlays").glob("*/kustomization.yaml"))
PRODUCTION = DEPLOY / "overlays" / "production"
KUBERNETES_VERSION = "1.31.0"
SERVICES = ("gateway", "match", "matchmaking", "rating", "projections")
#: Services whose replicas split the partitions of their topics (consumer groups).
BY_PARTITION = ("match", "matchmaking", "rating")
SECRET_SETTINGS = {
    "ARENA_DATABASE_URL",
    "ARENA_REDIS_URL",
    "ARENA_KAFKA_SASL_USERNAME",
    "ARENA_KAFKA_SASL_PASSWORD",
    "ARENA_KAFKA_TLS_KEY_PASSWORD",
    # The analysts' export key: no service reads it, so no Deployment carries it; an operator
    # running `arena events export --pseudonymise` passes it (docs/analytics.md).
    "ARENA_EXPORT_PSEUDONYM_KEY",
}
TARGETS = [BASE, *OVERLAYS]
#: What the Secrets hold in a deployment, as the pods see it.
SECRET_EXAMPLES = {
    "ARENA_DATABASE_URL": "postgresql+asyncpg://arena:pw@postgres:5432/arena",
    "ARENA_REDIS_URL": "redis://:pw@redis:6379/0",
    "ARENA_KAFKA_SASL_USERNAME": "arena",
    "ARENA_KAFKA_SASL_PASSWORD": "pw",
}


def kustomize_command() -> list[str]:
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    pytest.skip("neither kustomize nor kubectl is installed: the manifests cannot be rendered")


@functools.cache
def _render(directory: Path) -> tuple[dict[str, Any], ...]:
    result = subprocess.run(
        [*kustomize_command(), str(directory)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return tuple(doc for doc in yaml.safe_load_all(result.stdout) if doc)


def rendered(directory: Path) -> list[dict[str, Any]]:
    return list(_render(directory))


def of_kind(directory: Path, kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in rendered(directory) if d["kind"] == kind}


def deployment(directory: Path, service: str) -> dict[str, Any]:
    return of_kind(directory, "Deployment")[f"arena-{service}"]


def config(directory: Path) -> dict[str, str]:
    data: dict[str, str] = of_kind(directory, "ConfigMap")["arena-config"]["data"]
    return data


def pod_environment(directory: Path, service: str) -> dict[str, str]:
    """The ARENA_* variables a service's pod gets: the ConfigMap, its own, and the Secrets
    (optional ones present only where the configuration uses them)."""
    (container,) = deployment(directory, service)["spec"]["template"]["spec"]["containers"]
    env = dict(config(directory))
    sasl = "ARENA_KAFKA_SASL_MECHANISM" in env
    for entry in container["env"]:
        ref = entry.get("valueFrom", {}).get("secretKeyRef")
        if ref is None:
            env[entry["name"]] = entry["value"]
        elif not ref.get("optional") or sasl:
            env[entry["name"]] = SECRET_EXAMPLES[entry["name"]]
    return env


def ids(path: Path) -> str:
    return str(path.relative_to(DEPLOY))


def test_base_kustomization_lists_exactly_the_manifest_files() -> None:
    listed = yaml.safe_load((BASE / "kustomization.yaml").read_text())["resources"]
    present = sorted(p.name for p in BASE.glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(listed) == present
    assert len(listed) == len(set(listed))


@pytest.mark.parametrize("target", TARGETS, ids=ids)
def test_rendered_manifests_validate_against_the_kubernetes_schemas(target: Path) -> None:
    for doc in rendered(target):
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


@pytest.mark.parametrize("target", TARGETS, ids=ids)
def test_every_pod_meets_the_restricted_pod_security_standard(target: Path) -> None:
    pods = {name: d["spec"]["template"] for name, d in of_kind(target, "Deployment").items()}
    assert pods
    for name, pod in pods.items():
        assert violations(pod["spec"]) == [], name
        assert not any(
            k.startswith("container.apparmor") for k in pod["metadata"].get("annotations", {})
        )


@pytest.mark.parametrize("target", TARGETS, ids=ids)
def test_everything_lives_in_a_namespace_that_enforces_the_restricted_level(
    target: Path,
) -> None:
    (namespace,) = of_kind(target, "Namespace").values()
    labels = namespace["metadata"]["labels"]
    for mode in ("enforce", "audit", "warn"):
        assert labels[f"pod-security.kubernetes.io/{mode}"] == "restricted"
    name = namespace["metadata"]["name"]
    for doc in rendered(target):
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == name, doc["metadata"]["name"]


def test_the_pod_security_checks_catch_what_they_name() -> None:
    pod = deployment(BASE, "gateway")["spec"]["template"]["spec"]
    assert violations(pod) == []
    broken = yaml.safe_load(yaml.safe_dump(pod))
    del broken["securityContext"]["seccompProfile"]
    broken["containers"][0]["securityContext"]["allowPrivilegeEscalation"] = True
    broken["containers"][0]["securityContext"]["capabilities"] = {"add": ["NET_ADMIN"]}
    broken["volumes"].append({"name": "host", "hostPath": {"path": "/"}})
    broken["hostNetwork"] = True
    found = "\n".join(violations(broken))
    for control in (
        "Seccomp",
        "Privilege Escalation",
        "Capabilities: containers[gateway] adds ['NET_ADMIN']",
        "does not drop ALL",
        "HostPath Volumes",
        "Volume Types",
        "Host Namespaces",
    ):
        assert control in found


@pytest.mark.parametrize("target", TARGETS, ids=ids)
@pytest.mark.parametrize("service", SERVICES)
def test_deployment_has_probes_resources_config_and_spreads_over_nodes(
    target: Path, service: str
) -> None:
    deploy = deployment(target, service)
    pod = deploy["spec"]["template"]
    assert deploy["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    (container,) = pod["spec"]["containers"]
    assert container["args"] == [service]
    ports = {p["name"] for p in container["ports"]}
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert container[probe]["httpGet"]["port"] in ports
    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= container["resources"][kind].keys()
    refs = {e["configMapRef"]["name"] for e in container["envFrom"] if "configMapRef" in e}
    assert refs == {"arena-config"}
    spread = {c["topologyKey"]: c for c in pod["spec"]["topologySpreadConstraints"]}
    assert spread["kubernetes.io/hostname"]["whenUnsatisfiable"] == "DoNotSchedule"
    for constraint in spread.values():
        assert (
            constraint["labelSelector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
        )
    assert pod["spec"]["terminationGracePeriodSeconds"] >= 30


@pytest.mark.parametrize("target", TARGETS, ids=ids)
def test_secrets_come_from_secrets_and_never_from_the_config_map(target: Path) -> None:
    from arena_runtime.config import Settings, variable_name

    secret_fields = {
        variable_name(f)
        for f, info in Settings.model_fields.items()
        if "SecretStr" in str(info.annotation)
    }
    assert secret_fields <= SECRET_SETTINGS
    for config_map in of_kind(target, "ConfigMap").values():
        assert not set(config_map["data"]) & SECRET_SETTINGS
        for value in config_map["data"].values():
            assert not re.search(r"://[^/@\s]*:[^/@\s]*@", value), value  # no user:password@
    for name, deploy in of_kind(target, "Deployment").items():
        (container,) = deploy["spec"]["template"]["spec"]["containers"]
        env = {e["name"]: e for e in container["env"]}
        for variable in ("ARENA_DATABASE_URL", "ARENA_REDIS_URL", "ARENA_KAFKA_SASL_PASSWORD"):
            assert "secretKeyRef" in env[variable]["valueFrom"], (name, variable)
        assert not any("value" in e for v, e in env.items() if v in SECRET_SETTINGS)


@pytest.mark.parametrize("target", TARGETS, ids=ids)
def test_the_config_map_holds_only_known_valid_settings(target: Path) -> None:
    from arena_runtime.config import Settings, load_settings, variable_name

    known = {variable_name(field) for field in Settings.model_fields}
    assert set(config(target)) <= known
    for service in SERVICES:
        # A ConfigError if a value is out of range, or settings disagree.
        settings = load_settings(pod_environment(target, service))
        # On Kafka a waiting fetch is answered when a record arrives: a long wait costs nothing.
        assert settings.kafka_fetch_wait_ms >= 100
        assert settings.allowed_origins and "*" not in settings.allowed_origins


@pytest.mark.parametrize("target", TARGETS, ids=ids)
def test_autoscalers_stop_at_the_partition_count(target: Path) -> None:
    partitions = int(config(target)["ARENA_PARTITIONS"])
    autoscalers = of_kind(target, "HorizontalPodAutoscaler")
    assert set(autoscalers) == {f"arena-{s}" for s in ("gateway", *BY_PARTITION)}
    for name, hpa in autoscalers.items():
        assert hpa["spec"]["scaleTargetRef"]["name"] in of_kind(target, "Deployment")
        assert 1 <= hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
        # The autoscaler owns the count: a replicas field would fight it on every apply.
        assert "replicas" not in of_kind(target, "Deployment")[name]["spec"]
    for service in BY_PARTITION:
        assert autoscalers[f"arena-{service}"]["spec"]["maxReplicas"] <= partitions


@pytest.mark.parametrize("target", TARGETS, ids=ids)
def test_projections_run_once_and_are_not_autoscaled(target: Path) -> None:
    # Every projection runner reads every partition and guards its offsets in SQL: a second
    # replica adds no throughput, only lost races (arena_runtime.sql.runner).
    projections = deployment(target, "projections")
    assert projections["spec"]["replicas"] == 1
    assert projections["spec"]["strategy"]["type"] == "Recreate"
    assert "arena-projections" not in of_kind(target, "HorizontalPodAutoscaler")


@pytest.mark.parametrize("target", TARGETS, ids=ids)
@pytest.mark.parametrize("service", [s for s in SERVICES if s != "projections"])
def test_rollouts_replace_one_pod_at_a_time_and_never_below_the_ready_count(
    target: Path, service: str
) -> None:
    strategy = deployment(target, service)["spec"]["strategy"]
    assert strategy["type"] == "RollingUpdate"
    assert strategy["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}


@pytest.mark.parametrize("target", TARGETS, ids=ids)
def test_every_deployment_has_a_disruption_budget_and_a_service(target: Path) -> None:
    deployments = of_kind(target, "Deployment")
    budgets = of_kind(target, "PodDisruptionBudget")
    services = of_kind(target, "Service")
    assert set(budgets) == set(deployments) == set(services) == {f"arena-{s}" for s in SERVICES}
    for name, pod in ((n, d["spec"]["template"]) for n, d in deployments.items()):
        labels = pod["metadata"]["labels"]
        assert budgets[name]["spec"]["selector"]["matchLabels"].items() <= labels.items()
        assert budgets[name]["spec"]["maxUnavailable"] == 1
        assert services[name]["spec"]["selector"].items() <= labels.items()
        port_names = {p["name"] for c in pod["spec"]["containers"] for p in c["ports"]}
        assert {p["targetPort"] for p in services[name]["spec"]["ports"]} <= port_names


@pytest.mark.parametrize("target", TARGETS, ids=ids)
def test_the_ingress_carries_https_and_websockets_to_the_gateway_for_the_allowed_origin(
    target: Path,
) -> None:
    (ingress,) = of_kind(target, "Ingress").values()
    (rule,) = ingress["spec"]["rules"]
    (tls,) = ingress["spec"]["tls"]
    assert rule["host"] in tls["hosts"] and tls["secretName"]
    (path,) = rule["http"]["paths"]
    assert path["path"] == "/" and path["pathType"] == "Prefix"  # /v1/ws included
    assert path["backend"]["service"]["name"] == "arena-gateway"
    annotations = ingress["metadata"]["annotations"]
    heartbeat = 30  # ARENA_WS_HEARTBEAT_SECONDS: a quiet socket sees a ping this often
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) > 2 * heartbeat
    assert f"https://{rule['host']}" in config(target)["ARENA_ALLOWED_ORIGINS"].split(",")


def test_production_runs_the_image_by_digest() -> None:
    for name, deploy in of_kind(PRODUCTION, "Deployment").items():
        for container in deploy["spec"]["template"]["spec"]["containers"]:
            assert re.fullmatch(r"[\w.\-/:]+@sha256:[0-9a-f]{64}", container["image"]), name


def test_production_keeps_kafka_durable_and_encrypted() -> None:
    from arena_runtime.config import load_settings

    settings = load_settings(pod_environment(PRODUCTION, "match"))
    assert settings.kafka_replication_factor == 3
    assert settings.kafka_min_insync_replicas == 2
    assert settings.kafka_tls and settings.kafka_tls_check_hostname
    assert settings.kafka_tls_ca_file is not None
    mounted = {
        m["mountPath"]
        for c in deployment(PRODUCTION, "match")["spec"]["template"]["spec"]["containers"]
        for m in c["volumeMounts"]
    }
    assert str(settings.kafka_tls_ca_file.parent) in mounted


def test_production_floors_keep_two_owners_of_every_partitioned_service() -> None:
    autoscalers = of_kind(PRODUCTION, "HorizontalPodAutoscaler")
    for service in ("gateway", *BY_PARTITION):
        assert autoscalers[f"arena-{service}"]["spec"]["minReplicas"] >= 2


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


def test_compose_redis_keeps_sessions_and_limits() -> None:
    redis = compose()["services"]["redis"]
    command = redis["command"]
    options = dict(zip(command[1::2], command[2::2], strict=True))
    assert options["--appendonly"] == "yes"  # survives a restart
    assert options["--maxmemory-policy"] == "noeviction"  # every Arena key has a TTL
    assert any(v.split(":")[1] == "/data" for v in redis["volumes"])
    assert "redis-data" in compose()["volumes"]


# Redis is configured by its command line; every other part through its environment.
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


def test_the_image_serves_the_web_client_it_built() -> None:
    """The final stage copies the client's dist/ from a stage that builds it with the lock."""
    stages = re.split(r"^FROM ", (ROOT / "Dockerfile").read_text(), flags=re.M)[1:]
    named = {stage.split()[2]: stage for stage in stages if " AS " in stage.splitlines()[0]}
    web = named["web"]
    assert "npm ci --prefix services/gateway/web" in web
    assert "npm run --prefix services/gateway/web build" in web
    final = stages[-1]
    assert "COPY --from=web /app/services/gateway/web/dist /app/services/gateway/web/dist" in final
    # The gateway looks for the build there by default (browser.DEFAULT_WEB_DIR).
    from arena_gateway.browser import DEFAULT_WEB_DIR

    assert DEFAULT_WEB_DIR.relative_to(ROOT) == Path("services/gateway/web/dist")
