"""Langfuse's settings, the session rule and the processor that puts a request's session on every
one of its spans (in-memory spans; the export itself is tested against the recorded ingestion
contract in tests/integration/test_langfuse_export.py)."""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator

import pytest
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, Tracer
from service_kit import langfuse
from service_kit.langfuse import SESSION_ID, LangfuseSettingsError, SessionSpans

SECRET = "sk-lf-unit-secret-4711"


@pytest.fixture(autouse=True)
def no_langfuse_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PUBLIC_KEY", "SECRET_KEY", "BASE_URL", "HOST", "TIMEOUT"):
        monkeypatch.delenv(f"LANGFUSE_{name}", raising=False)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("conv-42", None),
        ("a" * 200, None),
        ("~!@# \t" * 10, None),  # any ASCII
        ("a" * 201, "too_long"),
        ("café", "not_ascii"),
        ("會話" * 150, "not_ascii"),
    ],
)
def test_langfuse_takes_ascii_sessions_of_at_most_200_characters(
    value: str, problem: str | None
) -> None:
    assert langfuse.session_problem(value) == problem


def test_off_without_keys_and_on_with_both(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not langfuse.settings().enabled
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    found = langfuse.settings()
    assert found.enabled
    assert found.endpoint == "https://cloud.langfuse.com/api/public/otel/v1/traces"
    assert SECRET not in repr(found) and SECRET not in str(found)


@pytest.mark.parametrize(
    ("base_url", "host", "endpoint"),
    [
        ("http://langfuse.internal:3000/", None, "http://langfuse.internal:3000"),
        (None, "https://us.cloud.langfuse.com", "https://us.cloud.langfuse.com"),
        ("https://eu.example", "https://ignored.example", "https://eu.example"),
    ],
)
def test_the_base_url_then_the_older_host_name(
    monkeypatch: pytest.MonkeyPatch, base_url: str | None, host: str | None, endpoint: str
) -> None:
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    for name, value in (("LANGFUSE_BASE_URL", base_url), ("LANGFUSE_HOST", host)):
        if value is not None:
            monkeypatch.setenv(name, value)
    assert langfuse.settings().endpoint == f"{endpoint}/api/public/otel/v1/traces"


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"LANGFUSE_PUBLIC_KEY": "pk-lf-1"}, "LANGFUSE_SECRET_KEY"),
        ({"LANGFUSE_SECRET_KEY": SECRET}, "LANGFUSE_PUBLIC_KEY"),
        ({"LANGFUSE_BASE_URL": "ftp://langfuse.example"}, "LANGFUSE_BASE_URL"),
        ({"LANGFUSE_HOST": f"https://pk:{SECRET}@langfuse.example"}, "LANGFUSE_HOST"),
        ({"LANGFUSE_TIMEOUT": "0"}, "LANGFUSE_TIMEOUT"),
        ({"LANGFUSE_TIMEOUT": "soon"}, "LANGFUSE_TIMEOUT"),
    ],
)
def test_invalid_settings_name_the_variable_never_the_secret(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], named: str
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(LangfuseSettingsError) as raised:
        langfuse.settings()
    assert named in str(raised.value)
    assert SECRET not in str(raised.value)


@pytest.fixture
def traced() -> Iterator[tuple[Tracer, InMemorySpanExporter, SessionSpans]]:
    """A private tracer provider with the session processor (the global one is left alone)."""
    sessions = SessionSpans()
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(sessions)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider.get_tracer("test"), exporter, sessions
    provider.shutdown()


def sessions_by_name(spans: tuple[ReadableSpan, ...]) -> dict[str, object]:
    return {s.name: (s.attributes or {}).get(SESSION_ID) for s in spans}


def test_every_span_of_the_request_gets_the_session_even_one_opened_before(
    traced: tuple[Tracer, InMemorySpanExporter, SessionSpans],
) -> None:
    tracer, exporter, sessions = traced

    def request_with_conversation() -> None:
        with tracer.start_as_current_span("POST /v1/responses"):
            with tracer.start_as_current_span("lgos.resume"):
                pass  # ended before the session was known: it cannot change any more
            with tracer.start_as_current_span("decode"):
                sessions.apply("conv-42")
            with tracer.start_as_current_span("invoke_workflow"):
                tracer.start_span("chat offline-model").end()  # a child started afterwards

    def request_without() -> None:
        with tracer.start_as_current_span("POST /v1/chat/completions"):
            sessions.apply(None)
            tracer.start_span("chat other").end()

    # Each request runs in a task of its own, in a fresh context.
    contextvars.Context().run(request_with_conversation)
    contextvars.Context().run(request_without)
    assert sessions_by_name(exporter.get_finished_spans()) == {
        "POST /v1/responses": "conv-42",
        "lgos.resume": None,
        "decode": "conv-42",
        "invoke_workflow": "conv-42",
        "chat offline-model": "conv-42",
        "POST /v1/chat/completions": None,
        "chat other": None,
    }


def test_a_span_under_a_callers_remote_parent_takes_the_session_in_force(
    traced: tuple[Tracer, InMemorySpanExporter, SessionSpans],
) -> None:
    """A background job runs under the submitting request's traceparent, in a new context."""
    tracer, exporter, sessions = traced
    remote = propagate.extract({"traceparent": f"00-{'ab' * 16}-{'cd' * 8}-01"})

    def job() -> None:
        sessions.apply("conv-7")
        with tracer.start_as_current_span("invoke_workflow background-report", context=remote):
            tracer.start_span("chat offline-model").end()

    contextvars.Context().run(job)
    spans = exporter.get_finished_spans()
    assert sessions_by_name(spans) == {
        "invoke_workflow background-report": "conv-7",
        "chat offline-model": "conv-7",
    }
    assert {format(s.context.trace_id, "032x") for s in spans} == {"ab" * 16}


def test_concurrent_requests_keep_their_own_sessions(
    traced: tuple[Tracer, InMemorySpanExporter, SessionSpans],
) -> None:
    tracer, exporter, sessions = traced
    first = tracer.start_span("first")
    second = tracer.start_span("second")

    def in_request(span: Span, session: str, child: str) -> Span:
        with trace.use_span(span):
            sessions.apply(session)
            return tracer.start_span(child)

    child_a = contextvars.Context().run(in_request, first, "conv-a", "child a")
    child_b = contextvars.Context().run(in_request, second, "conv-b", "child b")
    for span in (child_a, child_b, first, second):
        span.end()
    assert sessions_by_name(exporter.get_finished_spans()) == {
        "child a": "conv-a",
        "child b": "conv-b",
        "first": "conv-a",
        "second": "conv-b",
    }


@pytest.mark.parametrize(("value", "reason"), [("a" * 201, "too_long"), ("ç" * 12, "not_ascii")])
def test_a_value_langfuse_would_drop_is_left_off_and_logged_without_it(
    traced: tuple[Tracer, InMemorySpanExporter, SessionSpans],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    value: str,
    reason: str,
) -> None:
    tracer, exporter, sessions = traced
    monkeypatch.setattr(langfuse, "_processor", sessions)
    with caplog.at_level(logging.INFO, "service_kit.langfuse"):
        with tracer.start_as_current_span("POST /v1/responses"):
            langfuse.set_session(value)
            tracer.start_span("invoke_workflow").end()
    assert sessions_by_name(exporter.get_finished_spans()) == {
        "invoke_workflow": None,
        "POST /v1/responses": None,
    }
    [record] = [r for r in caplog.records if r.getMessage() == "langfuse_session_skipped"]
    assert (record.reason, record.length) == (reason, len(value))  # type: ignore[attr-defined]
    assert value not in caplog.text


def test_without_langfuse_a_conversation_sets_nothing_and_logs_nothing(
    traced: tuple[Tracer, InMemorySpanExporter, SessionSpans],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    tracer, exporter, _ = traced
    monkeypatch.setattr(langfuse, "_processor", None)
    with caplog.at_level(logging.DEBUG, "service_kit.langfuse"):
        with tracer.start_as_current_span("POST /v1/responses"):
            langfuse.set_session("a" * 300)
            langfuse.set_session("conv-1")
    assert sessions_by_name(exporter.get_finished_spans()) == {"POST /v1/responses": None}
    assert caplog.records == []
