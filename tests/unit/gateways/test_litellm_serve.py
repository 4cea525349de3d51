"""The LiteLLM runner points LiteLLM's default OpenAI credentials at the Files service."""

from __future__ import annotations

from lgos_gateways.litellm_serve import files_defaults


def test_files_service_becomes_the_default_openai_upstream() -> None:
    env = {"FILES_API_BASE": "http://files:3006/v1", "FILES_API_KEY": "fk"}
    assert files_defaults(env) == {
        "OPENAI_BASE_URL": "http://files:3006/v1",
        "OPENAI_API_KEY": "fk",
    }


def test_nothing_changes_without_a_files_service() -> None:
    assert files_defaults({"OPENAI_API_KEY": "sk-real"}) == {}
