"""The "restricted" Pod Security Standard, written out as checks of a pod spec.

From the Kubernetes documentation, "Pod Security Standards"
(https://kubernetes.io/docs/concepts/security/pod-security-standards/), policy version v1.31:
the restricted level is every control of the baseline level plus the restricted ones, each
listed below with the fields it restricts and the values it allows. ``violations`` returns one
line per control a pod spec breaks; an empty list means the API server's admission (with the
namespace label ``pod-security.kubernetes.io/enforce: restricted``) would admit it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

# Baseline, "Capabilities": adding any other capability is forbidden.
BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE",
        "CHOWN",
        "DAC_OVERRIDE",
        "FOWNER",
        "FSETID",
        "KILL",
        "MKNOD",
        "NET_BIND_SERVICE",
        "SETFCAP",
        "SETGID",
        "SETPCAP",
        "SETUID",
        "SYS_CHROOT",
    }
)
# Baseline, "Sysctls": the safe set.
SAFE_SYSCTLS = frozenset(
    {
        "kernel.shm_rmid_forced",
        "net.ipv4.ip_local_port_range",
        "net.ipv4.ip_unprivileged_port_start",
        "net.ipv4.tcp_syncookies",
        "net.ipv4.ping_group_range",
        "net.ipv4.ip_local_reserved_ports",
        "net.ipv4.tcp_keepalive_time",
        "net.ipv4.tcp_fin_timeout",
        "net.ipv4.tcp_keepalive_intvl",
        "net.ipv4.tcp_keepalive_probes",
    }
)
# Baseline, "SELinux": the types allowed.
SELINUX_TYPES = frozenset(
    {"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"}
)
# Restricted, "Volume Types": only these sources.
RESTRICTED_VOLUME_SOURCES = frozenset(
    {
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    }
)


def _containers(spec: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for kind in ("containers", "initContainers", "ephemeralContainers"):
        for container in spec.get(kind) or []:
            yield f"{kind}[{container.get('name')}]", container


def violations(spec: dict[str, Any]) -> list[str]:
    """Every restricted-level control the pod spec breaks, one line each."""
    found: list[str] = []
    pod_sc: dict[str, Any] = spec.get("securityContext") or {}
    containers = list(_containers(spec))

    # -- Baseline ---------------------------------------------------------------------------
    # HostProcess: windowsOptions.hostProcess undefined or false.
    for where, sc in [("pod", pod_sc)] + [
        (w, c.get("securityContext") or {}) for w, c in containers
    ]:
        if (sc.get("windowsOptions") or {}).get("hostProcess"):
            found.append(f"HostProcess: {where} sets windowsOptions.hostProcess")
    # Host Namespaces: hostNetwork, hostPID, hostIPC undefined or false.
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            found.append(f"Host Namespaces: spec.{field} is true")
    for where, container in containers:
        sc = container.get("securityContext") or {}
        # Privileged Containers: privileged undefined or false.
        if sc.get("privileged"):
            found.append(f"Privileged Containers: {where} is privileged")
        # Capabilities (baseline): added ones only from the baseline list.
        added = set((sc.get("capabilities") or {}).get("add") or [])
        if added - BASELINE_CAPABILITIES:
            found.append(f"Capabilities: {where} adds {sorted(added - BASELINE_CAPABILITIES)}")
        # Host Ports: hostPort undefined or 0.
        for port in container.get("ports") or []:
            if port.get("hostPort"):
                found.append(f"Host Ports: {where} uses hostPort {port['hostPort']}")
        # /proc Mount Type: procMount undefined or Default.
        if sc.get("procMount", "Default") != "Default":
            found.append(f"/proc Mount Type: {where} sets procMount {sc['procMount']}")
    for where, sc in [("pod", pod_sc)] + [
        (w, c.get("securityContext") or {}) for w, c in containers
    ]:
        # AppArmor: appArmorProfile.type undefined, RuntimeDefault or Localhost.
        apparmor = (sc.get("appArmorProfile") or {}).get("type")
        if apparmor not in (None, "RuntimeDefault", "Localhost"):
            found.append(f"AppArmor: {where} sets appArmorProfile {apparmor}")
        # SELinux: type from the allowed set; user and role undefined.
        selinux = sc.get("seLinuxOptions") or {}
        if (
            selinux.get("type", "") not in SELINUX_TYPES
            or selinux.get("user")
            or selinux.get("role")
        ):
            found.append(f"SELinux: {where} sets seLinuxOptions {selinux}")
    # Volume types (baseline): no hostPath.
    for volume in spec.get("volumes") or []:
        if "hostPath" in volume:
            found.append(f"HostPath Volumes: volume {volume['name']} is a hostPath")
    # Sysctls: the safe set only.
    for sysctl in pod_sc.get("sysctls") or []:
        if sysctl.get("name") not in SAFE_SYSCTLS:
            found.append(f"Sysctls: {sysctl.get('name')} is not in the safe set")
    # AppArmor annotations are checked by the caller's metadata, which a spec does not carry.

    # -- Restricted -------------------------------------------------------------------------
    # Volume Types: only configMap, csi, downwardAPI, emptyDir, ephemeral,
    # persistentVolumeClaim, projected and secret.
    for volume in spec.get("volumes") or []:
        sources = set(volume) - {"name"}
        if not sources <= RESTRICTED_VOLUME_SOURCES:
            found.append(f"Volume Types: volume {volume['name']} is {sorted(sources)}")
    for where, container in containers:
        sc = container.get("securityContext") or {}
        # Privilege Escalation: allowPrivilegeEscalation must be false.
        if sc.get("allowPrivilegeEscalation") is not False:
            found.append(
                f"Privilege Escalation: {where} does not set allowPrivilegeEscalation false"
            )
        # Running as Non-root: runAsNonRoot true on the pod, or on every container; a
        # container may not set it false.
        non_root = sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot"))
        if non_root is not True:
            found.append(f"Running as Non-root: {where} is not runAsNonRoot")
        # Running as Non-root user: runAsUser undefined or non-zero, pod and containers.
        if sc.get("runAsUser") == 0:
            found.append(f"Running as Non-root user: {where} sets runAsUser 0")
        # Seccomp: RuntimeDefault or Localhost, on the pod or on every container; never
        # Unconfined (the baseline already forbids that).
        seccomp = (sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            found.append(f"Seccomp: {where} has seccompProfile {seccomp}")
        # Capabilities: drop ALL; add only NET_BIND_SERVICE.
        capabilities = sc.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            found.append(f"Capabilities: {where} does not drop ALL")
        if set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}:
            found.append(f"Capabilities: {where} adds more than NET_BIND_SERVICE")
    if pod_sc.get("runAsUser") == 0:
        found.append("Running as Non-root user: the pod sets runAsUser 0")
    return found
