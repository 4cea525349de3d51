"""The LiteLLM runner points LiteLLM's default OpenAI credentials at the Files service, and turns
LiteLLM's own tracing on by the standard ``OTEL_*`` variables alone."""

from __future__ import annotations

import pytest
from lgos_gateways.litellm_serve import files_defaults, tracing_defaults

ENDPOINT = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}


def test_files_service_becomes_the_default_openai_upstream() -> None:
    env = {"FILES_API_BASE": "http://files:3006/v1", "FILES_API_KEY": "fk"}
    assert files_defaults(env) == {
        "OPENAI_BASE_URL": "http://files:3006/v1",
        "OPENAI_API_KEY": "fk",
    }


def test_nothing_changes_without_a_files_service() -> None:
    assert files_defaults({"OPENAI_API_KEY": "sk-real"}) == {}


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": ""},
        {**ENDPOINT, "OTEL_SDK_DISABLED": "true"},
        {**ENDPOINT, "OTEL_TRACES_EXPORTER": "none"},
        # LiteLLM's own switch alone (it would print every span to stdout) is overruled.
        {"LITELLM_OTEL_V2": "true"},
    ],
)
def test_litellm_traces_nothing_unless_an_endpoint_is_named(env: dict[str, str]) -> None:
    assert tracing_defaults(env) == {"LITELLM_OTEL_V2": "false"}


@pytest.mark.parametrize(
    "env", [ENDPOINT, {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}]
)
def test_an_endpoint_turns_litellms_own_tracing_on_over_otlp_http(env: dict[str, str]) -> None:
    assert tracing_defaults({**env, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}) == {
        "LITELLM_OTEL_V2": "true",
        "OTEL_EXPORTER": "otlp_http",
        "OTEL_SERVICE_NAME": "litellm",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "no_content",
    }


def test_the_service_name_and_the_content_opt_in_carry_over() -> None:
    env = {
        **ENDPOINT,
        "OTEL_SERVICE_NAME": "gateway-eu",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
    }
    defaults = tracing_defaults(env)
    assert defaults["OTEL_SERVICE_NAME"] == "gateway-eu"
    # LiteLLM's spelling of the same opt-in ("true" alone would record nothing there).
    assert defaults["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] == "span_only"
