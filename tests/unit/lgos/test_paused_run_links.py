"""The span context a paused run keeps (a W3C ``traceparent``) and the link a resume makes to it."""

from __future__ import annotations

import pytest
from lgos.runtime.spans import (
    LINK_TYPE,
    PAUSED_RUN,
    current_traceparent,
    link_paused_run,
    span_context_of,
)
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
SPAN_ID = 0x00F067AA0BA902B7
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def test_a_stored_traceparent_names_its_span() -> None:
    found = span_context_of(TRACEPARENT)
    assert found is not None
    assert (found.trace_id, found.span_id, found.is_remote) == (TRACE_ID, SPAN_ID, True)


@pytest.mark.parametrize(
    "stored",
    [
        None,
        42,
        "",
        "not-a-traceparent",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
    ],
)
def test_nothing_or_a_malformed_value_names_no_span(stored: object) -> None:
    assert span_context_of(stored) is None


def test_the_current_span_is_kept_as_its_traceparent() -> None:
    assert current_traceparent() is None
    span = NonRecordingSpan(SpanContext(TRACE_ID, SPAN_ID, False, TraceFlags(1)))
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        assert current_traceparent() == TRACEPARENT
    finally:
        otel_context.detach(token)


def test_a_resume_links_to_the_span_its_run_paused_in_or_to_none() -> None:
    tracer = TracerProvider().get_tracer("test")
    linked, unlinked = tracer.start_span("resume"), tracer.start_span("old run resumed")
    link_paused_run(linked, span_context_of(TRACEPARENT))
    link_paused_run(unlinked, None)
    [link] = linked.links  # type: ignore[attr-defined]
    assert (link.context.trace_id, link.context.span_id) == (TRACE_ID, SPAN_ID)
    assert dict(link.attributes or {}) == {LINK_TYPE: PAUSED_RUN}
    assert not unlinked.links  # type: ignore[attr-defined]
