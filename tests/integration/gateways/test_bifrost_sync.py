"""The Bifrost catalog sync against the real LGOS and a FAKE Bifrost (documented contract only).

No live Bifrost ran here (see tests/support/bifrost_contract.py for what the fake records and
where each endpoint is documented). These tests show the sync's own behaviour against that
contract: base pricing rows, the lgos JSON string on native /v1/models, removal, failures.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.gateways import run_bifrost_sync
from tests.support.servers import Server, free_port, serve

ADMIN = ("admin", "bifrost-admin-test")
KEY = "sk-bf-test-key"
ENV = {
    "BIFROST_ADMIN_USERNAME": ADMIN[0],
    "BIFROST_ADMIN_PASSWORD": ADMIN[1],
    "OPENAI_GATEWAY_API_KEY": KEY,
}


@pytest.fixture
def pricing_file(tmp_path: Path) -> Path:
    return tmp_path / "pricing" / "lgos-pricing.json"


@pytest.fixture
def fake_bifrost(lgos_server: Server, pricing_file: Path, tmp_path: Path) -> Iterator[Server]:
    """Started the way compose starts Bifrost: after the sync wrote the datasheet it loads."""
    bootstrap = run_bifrost_sync(
        "pricing", "--lgos-url", lgos_server.url, "--pricing-file", str(pricing_file), env=ENV
    )
    assert bootstrap.returncode == 0, bootstrap.stderr
    port = free_port()
    args = [
        "tests.support.bifrost_contract",
        "--port",
        str(port),
        "--pricing-file",
        str(pricing_file),
        "--admin",
        ":".join(ADMIN),
        "--virtual-key",
        KEY,
    ]
    with serve(args, port=port, env={}, log=tmp_path / "fake-bifrost.log") as server:
        yield server


def publish(lgos_url: str, bifrost: Server, pricing: Path, **env: str) -> Any:
    args = ["publish", "--lgos-url", lgos_url, "--bifrost-url", bifrost.url]
    return run_bifrost_sync(*args, "--pricing-file", str(pricing), env={**ENV, **env})


def native_models(bifrost: Server) -> dict[str, dict[str, str]]:
    response = httpx.get(
        f"{bifrost.url}/v1/models",
        params={"provider": "lgos"},
        headers={"Authorization": f"Bearer {KEY}"},
    )
    response.raise_for_status()
    return {m["id"]: m.get("additional_attributes", {}) for m in response.json()["data"]}


def lgos_details(lgos_url: str) -> dict[str, Any]:
    listing = httpx.get(f"{lgos_url}/v1/models").json()["data"]
    return {
        f"lgos/{m['id']}": httpx.get(f"{lgos_url}/v1/models/{m['id']}").json()["lgos"]
        for m in listing
    }


def test_pricing_rows_cover_every_graph(lgos_server: Server, pricing_file: Path) -> None:
    result = run_bifrost_sync(
        "pricing", "--lgos-url", lgos_server.url, "--pricing-file", str(pricing_file), env=ENV
    )
    assert result.returncode == 0, result.stderr
    rows = json.loads(pricing_file.read_text())
    assert set(rows) == set(lgos_details(lgos_server.url))
    assert all(row["provider"] == "lgos" for row in rows.values())


def test_publish_puts_the_complete_extension_on_native_models(
    lgos_server: Server, fake_bifrost: Server, pricing_file: Path
) -> None:
    result = publish(lgos_server.url, fake_bifrost, pricing_file)
    assert result.returncode == 0, result.stderr
    served = native_models(fake_bifrost)
    expected = lgos_details(lgos_server.url)
    assert set(served) == set(expected)
    for model_id, lgos in expected.items():
        assert isinstance(served[model_id]["lgos"], str)  # map[string]string: a JSON string
        assert json.loads(served[model_id]["lgos"]) == lgos
    # The OpenAI-shaped listing drops the attributes: clients must read native /v1/models.
    converted = httpx.get(
        f"{fake_bifrost.url}/openai/v1/models", headers={"Authorization": f"Bearer {KEY}"}
    ).json()["data"]
    assert converted and all("additional_attributes" not in m for m in converted)


def test_a_vanished_graph_is_removed(
    lgos_server: Server, demo_lgos: Server, fake_bifrost: Server, pricing_file: Path
) -> None:
    assert publish(lgos_server.url, fake_bifrost, pricing_file).returncode == 0
    assert "lgos/scripted" in native_models(fake_bifrost)
    again = publish(demo_lgos.url, fake_bifrost, pricing_file)
    assert again.returncode == 0, again.stderr
    graphs = {
        model_id: json.loads(attrs["lgos"])
        for model_id, attrs in native_models(fake_bifrost).items()
        if "lgos" in attrs
    }
    assert graphs == lgos_details(demo_lgos.url)
    assert "lgos/scripted" not in graphs  # its stale pricing row may stay listed, unmarked


def test_wrong_admin_credentials_fail_the_sync(
    lgos_server: Server, fake_bifrost: Server, pricing_file: Path
) -> None:
    result = publish(
        lgos_server.url, fake_bifrost, pricing_file, BIFROST_ADMIN_PASSWORD="not-the-password"
    )
    assert result.returncode == 1
    assert "401" in result.stderr
    assert all("lgos" not in attrs for attrs in native_models(fake_bifrost).values())


def test_an_unknown_attributes_route_fails_loudly(
    lgos_server: Server, fake_bifrost: Server, pricing_file: Path
) -> None:
    result = run_bifrost_sync(
        "publish",
        "--lgos-url",
        lgos_server.url,
        "--bifrost-url",
        fake_bifrost.url,
        "--pricing-file",
        str(pricing_file),
        "--attributes-route",
        "/api/not-a-route",
        env=ENV,
    )
    assert result.returncode == 1
    assert "bifrost catalog sync failed" in result.stderr
