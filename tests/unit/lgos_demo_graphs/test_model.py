"""Which model the demo graphs use: offline-model unless a real provider key is configured."""

from __future__ import annotations

from lgos_demo_graphs.model import DemoAPISettings, chat_model
from pydantic import SecretStr


def test_offline_model_without_a_key() -> None:
    model = chat_model(DemoAPISettings(offline_model_url="http://127.0.0.1:3999/v1"))
    assert model.model_name == "offline-model"
    assert model.openai_api_base == "http://127.0.0.1:3999/v1"
    assert model.stream_usage is True


def test_a_key_switches_to_the_configured_provider() -> None:
    settings = DemoAPISettings(
        openai_api_key=SecretStr("sk-real"),
        openai_base_url="https://gateway.invalid/v1",
        openai_model="some-model",
    )
    model = chat_model(settings)
    assert model.model_name == "some-model"
    assert model.openai_api_base == "https://gateway.invalid/v1"
    assert model.openai_api_key is not None
    assert model.openai_api_key.get_secret_value() == "sk-real"
    # Streamed usage must be requested explicitly through a non-OpenAI base URL.
    assert model.stream_usage is True


def test_environment_variables_are_read(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("DEMO_API_OPENAI_API_KEY", "sk-env")
    monkeypatch.setenv("DEMO_API_OPENAI_MODEL", "env-model")
    settings = DemoAPISettings()
    assert not settings.offline
    assert chat_model(settings).model_name == "env-model"


def test_empty_variables_count_as_unset(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    # compose passes ${DEMO_API_OPENAI_API_KEY:-} through as an empty string
    monkeypatch.setenv("DEMO_API_OPENAI_API_KEY", "")
    monkeypatch.setenv("DEMO_API_OPENAI_BASE_URL", "")
    assert DemoAPISettings().offline


def test_no_per_chunk_timer(monkeypatch: object) -> None:
    """langchain-openai's per-chunk asyncio.wait_for (a task per token) stays off, even with its
    environment default set; DEMO_API_MODEL_TIMEOUT's HTTP read timeout bounds a stall."""
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setenv("LANGCHAIN_OPENAI_STREAM_CHUNK_TIMEOUT_S", "30")
    model = chat_model(DemoAPISettings(model_timeout=7))
    assert model.stream_chunk_timeout is None
    assert model.request_timeout == 7
