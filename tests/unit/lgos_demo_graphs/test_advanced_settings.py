"""advanced-graph's DEMO_API_* settings: each documented in .env.example, the id file honoured."""

from __future__ import annotations

from pathlib import Path

import pytest
from lgos_demo_graphs.advanced.settings import KnowledgeSettings
from lgos_demo_graphs.model import DemoAPISettings
from lgos_demo_graphs.web_search import WebSearchSettings

from tests.support.servers import ROOT

DOCUMENTED = {
    DemoAPISettings: ("openai_base_url", "openai_api_key", "openai_model"),
    WebSearchSettings: ("backend", "url"),
    KnowledgeSettings: (
        "vector_store_base_url",
        "vector_store_api_key",
        "vector_store_id",
        "files_base_url",
        "files_api_key",
    ),
}


def test_every_documented_setting_is_in_env_example() -> None:
    example = (ROOT / ".env.example").read_text()
    for settings, fields in DOCUMENTED.items():
        prefix = str(settings.model_config["env_prefix"])
        for name in fields:
            assert name in settings.model_fields, name
            assert f"\n{prefix}{name.upper()}=" in example, f"{prefix}{name.upper()}"


def test_vector_store_id_comes_from_the_setting_else_the_job_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in ("DEMO_API_VECTOR_STORE_ID", "DEMO_API_VECTOR_STORE_ID_FILE"):
        monkeypatch.delenv(key, raising=False)
    id_file = tmp_path / "vector-store-id"
    settings = KnowledgeSettings(vector_store_id_file=id_file)
    assert settings.resolved_vector_store_id() is None  # the job has not written it yet
    id_file.write_text("vs_written\n")
    assert settings.resolved_vector_store_id() == "vs_written"
    assert KnowledgeSettings(vector_store_id="vs_set", vector_store_id_file=id_file)
    assert (
        KnowledgeSettings(
            vector_store_id="vs_set", vector_store_id_file=id_file
        ).resolved_vector_store_id()
        == "vs_set"
    )
    fallback = KnowledgeSettings(files_base_url="http://files/v1", files_api_key="k")
    assert fallback.store_base_url == "http://files/v1"
    assert fallback.store_api_key is not None and fallback.store_api_key.get_secret_value() == "k"
