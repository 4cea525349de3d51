"""The `observability` profile, checked statically (no Docker engine here): Phoenix and Prometheus
at the native stack's versions and ports, run as the native stack runs them, Prometheus scraping
every first-party ``/metrics`` by service name, and the services' trace settings passed on."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import yaml
from lgos_stack.paths import PROMETHEUS_BIN
from lgos_stack.servers import phoenix_env

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ["observability"]
TRACED = ("lgos", "lgos-worker", "files")
TRACE_SETTINGS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_RESOURCE_ATTRIBUTES",
)


def services() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = yaml.safe_load((ROOT / "compose.yaml").read_text())[
        "services"
    ]
    return found


def pinned(requirements: Path, name: str) -> str:
    match = re.search(rf"^{re.escape(name)}==(\S+)$", requirements.read_text(), re.MULTILINE)
    assert match is not None, name
    return match.group(1)


def test_phoenix_is_the_native_pin_offline_on_3013_with_its_data_in_a_volume() -> None:
    phoenix = services()["phoenix"]
    version = pinned(ROOT / "services" / "phoenix" / "requirements.txt", "arize-phoenix")
    assert phoenix["image"] == f"arizephoenix/phoenix:version-{version}"
    assert phoenix["profiles"] == PROFILE
    assert phoenix["ports"] == ["127.0.0.1:3013:3013"]
    env = phoenix["environment"]
    assert env["PHOENIX_PORT"] == "3013"
    # The switches the native stack starts it with, the same values.
    native = phoenix_env(3013, Path("/unused"))
    for name in (
        "PHOENIX_TELEMETRY_ENABLED",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES",
        "PHOENIX_DISABLE_AGENT_ASSISTANT",
    ):
        assert env[name] == native[name], name
    volume, mount = phoenix["volumes"][0].split(":")
    assert (
        volume == "phoenix-data"
        and volume in yaml.safe_load((ROOT / "compose.yaml").read_text())["volumes"]
    )
    assert env["PHOENIX_WORKING_DIR"].startswith(f"{mount}/")
    assert "/healthz" in " ".join(phoenix["healthcheck"]["test"])


def test_prometheus_matches_the_native_version_on_3014() -> None:
    prometheus = services()["prometheus"]
    assert prometheus["image"] == "prom/prometheus:v2.42.0"
    assert prometheus["profiles"] == PROFILE
    assert prometheus["ports"] == ["127.0.0.1:3014:3014"]
    assert "--web.listen-address=:3014" in prometheus["command"]
    assert "/-/ready" in " ".join(prometheus["healthcheck"]["test"])
    # `make dev` runs Debian's package (installed by the Makefile): the same minor version.
    version = subprocess.run(
        [str(PROMETHEUS_BIN), "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert re.match(r"prometheus, version 2\.42\.", version), version


def test_prometheus_scrapes_every_first_party_metrics_by_service_name() -> None:
    prometheus = services()["prometheus"]
    host, container, mode = prometheus["volumes"][0].split(":")
    config_path = next(a for a in prometheus["command"] if a.startswith("--config.file="))
    assert config_path == f"--config.file={container}" and mode == "ro"
    config = yaml.safe_load((ROOT / host).read_text())
    jobs = {job["job_name"]: job for job in config["scrape_configs"]}
    assert set(jobs) == {"lgos", "lgos-worker", "files"}
    # Replicas (`--scale lgos=N`) each answer the service name's DNS lookup: one target each.
    for name, port in (("lgos", 3004), ("lgos-worker", 3011)):
        [lookup] = jobs[name]["dns_sd_configs"]
        assert (lookup["names"], lookup["type"], lookup["port"]) == ([name], "A", port)
    assert jobs["files"]["static_configs"] == [{"targets": ["files:3006"]}]
    # Each scraped port is the one the service's own healthcheck asks.
    all_services = services()
    for name, port in (("lgos", 3004), ("lgos-worker", 3011), ("files", 3006)):
        assert f"127.0.0.1:{port}/health" in " ".join(all_services[name]["healthcheck"]["test"])


def test_the_first_party_services_take_trace_settings_from_the_environment() -> None:
    all_services = services()
    for name in TRACED:
        env = all_services[name]["environment"]
        for setting in TRACE_SETTINGS:
            assert env[setting] == f"${{{setting}:-}}", (name, setting)
        # Nothing in the default stack waits for, or depends on, the optional profile.
        assert "phoenix" not in all_services[name].get("depends_on", {})
    assert all_services["lgos"]["environment"]["LGOS_METRICS_ENABLED"] == (
        "${LGOS_METRICS_ENABLED:-}"
    )
    example = (ROOT / ".env.example").read_text()
    assert "OTEL_EXPORTER_OTLP_ENDPOINT=http://phoenix:3013" in example
