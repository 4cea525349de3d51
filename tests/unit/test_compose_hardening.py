"""Static checks of the containers' hardening rules, for every service (the container tier checks
the running containers with ``docker inspect``).

Every service drops all capabilities, cannot gain privileges, runs with a read-only root
filesystem as a non-root user, and has memory and CPU limits; each exception is listed here
with its reason (and in compose.yaml beside the service).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

ROOT_USER_EXCEPTIONS = {
    "minio": "a new named volume is root-owned and MinIO must write it",
    "litellm": "the image's own user; it writes into /app at start (admin UI, Prisma files)",
    "bifrost": "which uid may write /app/data was not verified (no Docker engine, no build)",
    "open-webui": "the official image runs as root and writes under /app/backend at start",
}
WRITABLE_ROOT_EXCEPTIONS = {
    "litellm": "LiteLLM writes into /app at start; no read-only variant was proven here",
    "open-webui": "it writes static files and its secret key under /app/backend at start",
}
MEASURED_MB = {
    # RSS after load on the native stack (docs/explanation/security.md, "Containers"); limits
    # leave room above it.
    "offline-model": 53,
    "searxng": 68,
    "lgos": 157,
    "lgos-worker": 142,
    "files": 71,
    "litellm": 330,
    "chainlit": 120,
    "open-webui": 820,
}


class _UniqueKeys(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
        duplicated = {k for k in keys if keys.count(k) > 1 and k != "<<"}
        assert not duplicated, f"duplicate keys {duplicated} at line {node.start_mark.line + 1}"
        return super().construct_mapping(node, deep=deep)


def services() -> dict[str, dict[str, Any]]:
    data = yaml.load((ROOT / "compose.yaml").read_text(), Loader=_UniqueKeys)
    found: dict[str, dict[str, Any]] = data["services"]
    return found


def megabytes(limit: str) -> int:
    number, unit = int(limit[:-1]), limit[-1].lower()
    return number * {"m": 1, "g": 1024}[unit]


@pytest.mark.parametrize("name", sorted(services()))
def test_every_service_drops_capabilities_and_privilege_gain(name: str) -> None:
    service = services()[name]
    assert service["cap_drop"] == ["ALL"]
    assert "no-new-privileges:true" in service["security_opt"]
    assert "cap_add" not in service and not service.get("privileged")


@pytest.mark.parametrize("name", sorted(services()))
def test_read_only_root_filesystem_unless_listed(name: str) -> None:
    service = services()[name]
    if name in WRITABLE_ROOT_EXCEPTIONS:
        assert service["read_only"] is False
        return
    assert service["read_only"] is True
    writable = [str(t).split(":")[0] for t in service.get("tmpfs", [])]
    writable += [str(v).split(":")[1] for v in service.get("volumes", []) if ":ro" not in str(v)]
    assert "/tmp" in writable, f"{name} has no writable /tmp"


@pytest.mark.parametrize("name", sorted(services()))
def test_non_root_user_unless_listed(name: str) -> None:
    service = services()[name]
    if name in ROOT_USER_EXCEPTIONS:
        assert "user" not in service
        return
    user = str(service["user"])
    assert user.split(":")[0] not in ("0", "root")


@pytest.mark.parametrize("name", sorted(services()))
def test_memory_and_cpu_limits(name: str) -> None:
    service = services()[name]
    limit = megabytes(str(service["mem_limit"]))
    assert 0 < float(service["cpus"]) <= 2
    if name in MEASURED_MB:
        assert limit >= 2 * MEASURED_MB[name], f"{name}: limit too close to its measured RSS"


TMPFS_MEASURED_MB = {
    # What a service writes into a tmpfs, measured in its container: (service, mount) -> MB.
    ("mcp-db", "/home/node"): 194,  # npx's copy of dbhub and its dependencies
}


@pytest.mark.parametrize(("name", "mount"), sorted(TMPFS_MEASURED_MB))
def test_a_tmpfs_holds_what_is_written_into_it(name: str, mount: str) -> None:
    """tmpfs pages count against the container's memory limit: the mount is larger than what is
    written there, and the limit holds both it and the process."""
    service = services()[name]
    sizes = {
        str(entry).split(":")[0]: re.search(r"size=(\d+[mg])", str(entry))
        for entry in service["tmpfs"]
    }
    size = sizes[mount]
    assert size is not None, f"{name}: {mount} has no size"
    measured = TMPFS_MEASURED_MB[(name, mount)]
    assert megabytes(size.group(1)) >= 1.25 * measured, f"{name}: {mount} is too small"
    assert megabytes(str(service["mem_limit"])) >= megabytes(size.group(1)) + 256


def test_npx_can_run_what_it_fetches_into_its_tmpfs() -> None:
    # Docker mounts a tmpfs noexec unless told: dbhub, fetched into npx's cache under
    # /home/node, then fails to start with "Permission denied" (seen in a compose run).
    [home] = [str(e) for e in services()["mcp-db"]["tmpfs"] if str(e).startswith("/home/node:")]
    assert "exec" in home.split(":", 1)[1].split(",")


def test_uploads_spool_to_a_volume_not_to_memory() -> None:
    files = services()["files"]
    assert files["tmpfs"] == []
    assert "files-spool:/tmp" in files["volumes"]


def test_lgos_keeps_state_only_in_writable_places() -> None:
    env = services()["lgos"]["environment"]
    assert env["LGOS_STATE_DIR"].startswith("/tmp/")
    assert services()["lgos-worker"]["environment"] == env


def test_the_gateways_hold_the_lgos_key_and_lgos_checks_it() -> None:
    all_services = services()
    assert all_services["lgos"]["environment"]["LGOS_API_KEYS"].endswith("=gateway")
    for name in ("litellm", "litellm-sync", "bifrost-pricing", "bifrost-sync"):
        assert "LGOS_API_KEY" in all_services[name]["environment"], name
    assert "LGOS_API_KEY" in all_services["bifrost"]["environment"]["LGOS_UPSTREAM_KEY"]
    sync = all_services["litellm-sync"]["command"]
    assert sync[sync.index("--upstream-key") + 1] == "os.environ/LGOS_API_KEY"
