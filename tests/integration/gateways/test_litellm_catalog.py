"""Catalog sync against the real LGOS and LiteLLM: native /model/info carries the lgos field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.support.gateways import GATEWAY_KEY, run_litellm_sync, serve_litellm
from tests.support.servers import ROOT, Server, free_port

AUTH = {"Authorization": f"Bearer {GATEWAY_KEY}"}
# gateways/litellm/config.yaml's own operator entry: the Files service's credentials.
FILES_ENTRY = "lgos-files-service"
OPERATOR_ENTRY = {
    "model_name": "operator/echo",
    "litellm_params": {
        "model": "openai/scripted",
        "api_base": "http://127.0.0.1:9/v1",
        "api_key": "operator-key",
    },
    "model_info": {"note": "hand-written by the operator"},
}


def lgos_catalog(lgos_url: str) -> dict[str, dict[str, Any]]:
    """What the sync must publish: each graph's complete detail extension, by gateway name."""
    listing = httpx.get(f"{lgos_url}/v1/models").json()["data"]
    return {
        f"lgos/{m['id']}": httpx.get(f"{lgos_url}/v1/models/{m['id']}").json()["lgos"]
        for m in listing
    }


def model_info(gateway_url: str) -> dict[str, dict[str, Any]]:
    response = httpx.get(f"{gateway_url}/model/info", headers=AUTH, timeout=10.0)
    response.raise_for_status()
    return {entry["model_name"]: entry["model_info"] for entry in response.json()["data"]}


def test_model_info_carries_the_complete_lgos_extension(
    litellm_gateway: Server, lgos_server: Server
) -> None:
    expected = lgos_catalog(lgos_server.url)
    served = model_info(litellm_gateway.url)
    assert set(served) == {*expected, FILES_ENTRY}
    assert "lgos" not in served[FILES_ENTRY]  # not a graph: UIs list only lgos entries
    for name, lgos in expected.items():
        assert served[name]["lgos"] == lgos, name
    simple = served["lgos/simple-graph"]["lgos"]
    assert set(simple) == {
        "description",
        "features",
        "server_tools",
        "client_tools",
        "examples",
        "client_settings",
    }
    assert simple["client_settings"]["json_schema"]["type"] == "object"
    assert "interrupts" in served["lgos/interruptible-approval"]["lgos"]["features"]
    # /v1/models keeps routing names only (LiteLLM drops model_info there).
    listed = httpx.get(f"{litellm_gateway.url}/v1/models", headers=AUTH).json()["data"]
    assert {m["id"] for m in listed} == {*expected, FILES_ENTRY}


def test_sync_follows_a_graph_change_and_keeps_operator_entries(
    lgos_server: Server, demo_lgos: Server, tmp_path: Path
) -> None:
    config = tmp_path / "litellm.yaml"
    base = yaml.safe_load((ROOT / "gateways" / "litellm" / "config.yaml").read_text())
    base["model_list"] = [OPERATOR_ENTRY]
    config.write_text(yaml.safe_dump(base, sort_keys=False))
    first = run_litellm_sync("--lgos-url", lgos_server.url, "--config", str(config))
    assert first.returncode == 0, first.stderr
    env = {"MCP_DEMO_DB_URL": "http://127.0.0.1:9/mcp", "FILES_API_BASE": "http://127.0.0.1:9/v1"}
    with serve_litellm(config, tmp_path, env, name="litellm-change") as gateway:
        before = model_info(gateway.url)
        assert set(before) == {*lgos_catalog(lgos_server.url), "operator/echo"}
        assert "lgos/scripted" in before

        # The running proxy picks up the new catalog: rewrite, supervisor restart, verify.
        second = run_litellm_sync(
            "--lgos-url",
            demo_lgos.url,
            "--config",
            str(config),
            "--reload-pid-file",
            str(tmp_path / "litellm-change.pid"),
            "--gateway-url",
            gateway.url,
        )
        assert second.returncode == 0, second.stderr
        after = model_info(gateway.url)
        expected = lgos_catalog(demo_lgos.url)
        assert set(after) == {*expected, "operator/echo"}
        assert "lgos/scripted" not in after  # vanished graphs are removed
        for name, lgos in expected.items():
            assert after[name]["lgos"] == lgos
        assert after["operator/echo"]["note"] == "hand-written by the operator"
    written = yaml.safe_load(config.read_text())
    assert written["model_list"][0] == OPERATOR_ENTRY  # byte-for-byte the operator's entry


def test_sync_refuses_an_operator_entry_with_a_graph_name(
    lgos_server: Server, tmp_path: Path
) -> None:
    config = tmp_path / "litellm.yaml"
    clash = {**OPERATOR_ENTRY, "model_name": "lgos/simple-graph"}
    base = yaml.safe_load((ROOT / "gateways" / "litellm" / "config.yaml").read_text())
    config.write_text(yaml.safe_dump({**base, "model_list": [clash]}, sort_keys=False))
    before = config.read_text()
    result = run_litellm_sync("--lgos-url", lgos_server.url, "--config", str(config))
    assert result.returncode == 1
    assert "lgos/simple-graph" in result.stderr
    assert config.read_text() == before  # nothing written


def test_sync_fails_cleanly_when_lgos_is_down(tmp_path: Path) -> None:
    config = tmp_path / "litellm.yaml"
    url = f"http://127.0.0.1:{free_port()}"
    result = run_litellm_sync("--lgos-url", url, "--config", str(config))
    assert result.returncode == 1
    assert not config.exists()
    assert "litellm catalog sync failed" in result.stderr


def test_reseed_serves_the_operator_file_as_it_is_now(lgos_server: Server, tmp_path: Path) -> None:
    """Start-up jobs (compose, make dev) pass --reseed: an edit to the operator's base file is
    served even though a served copy from an earlier start exists."""
    base_path, config = tmp_path / "base.yaml", tmp_path / "litellm.yaml"
    base = yaml.safe_load((ROOT / "gateways" / "litellm" / "config.yaml").read_text())
    stale = {**OPERATOR_ENTRY, "model_name": "operator/removed-since"}
    base_path.write_text(yaml.safe_dump({**base, "model_list": [stale]}, sort_keys=False))
    args = ["--lgos-url", lgos_server.url, "--config", str(config), "--base", str(base_path)]
    assert run_litellm_sync(*args).returncode == 0
    base_path.write_text(yaml.safe_dump({**base, "model_list": [OPERATOR_ENTRY]}, sort_keys=False))

    kept = run_litellm_sync(*args)  # without --reseed the served copy stays authoritative
    assert kept.returncode == 0, kept.stderr
    names = [e["model_name"] for e in yaml.safe_load(config.read_text())["model_list"]]
    assert "operator/removed-since" in names and "operator/echo" not in names

    reseeded = run_litellm_sync(*args, "--reseed")
    assert reseeded.returncode == 0, reseeded.stderr
    served = yaml.safe_load(config.read_text())["model_list"]
    assert served[0] == OPERATOR_ENTRY
    names = {e["model_name"] for e in served}
    assert names == {"operator/echo", *lgos_catalog(lgos_server.url)}
