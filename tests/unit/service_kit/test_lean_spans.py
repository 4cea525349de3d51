"""First-party spans made by the lean tracer against the SDK's own: the same operations on a span
from each, under the same provider and span limits, end in the same exported span (name, kind,
parent, attributes with the SDK's cleaning and limits, events, links, status, drop counts). The
provider's sampler decides as for the SDK's spans, and a provider that is not the SDK's makes
its own spans."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.sdk.environment_variables import OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, ParentBased, TraceIdRatioBased
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    StatusCode,
    TraceFlags,
    TraceState,
)
from service_kit import lean_spans
from service_kit.lean_spans import LeanSpan, LeanTracer


class Opaque:
    """A value OpenTelemetry cannot represent (no string form of its own)."""


class Named:
    def __str__(self) -> str:
        return "named"


KEYS = st.one_of(st.sampled_from(["a", "b", "c", "d", ""]), st.text(max_size=3), st.integers(0, 3))
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.binary(max_size=4),
)
VALUES = st.one_of(
    SCALARS,
    st.lists(st.one_of(st.integers(), st.text(max_size=8)), max_size=3),
    st.lists(st.text(max_size=8), max_size=3).map(tuple),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.just(Opaque()),
    st.just(Named()),
)
MAPPINGS = st.dictionaries(KEYS, VALUES, max_size=4)
LIMIT = st.one_of(st.integers(0, 4), st.just(SpanLimits.UNSET))
CONTEXT = SpanContext(0x5CE, 0xA1, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("set_attribute"), KEYS, VALUES),
        st.tuples(st.just("set_attributes"), MAPPINGS),
        st.tuples(st.just("add_event"), st.text(max_size=4), MAPPINGS),
        st.tuples(st.just("add_link"), MAPPINGS),
        st.tuples(
            st.just("set_status"),
            st.sampled_from(list(StatusCode)),
            st.none() | st.text(max_size=6),
        ),
        st.tuples(st.just("update_name"), st.text(max_size=6)),
        st.tuples(st.just("record_exception"), st.text(max_size=6)),
        st.tuples(st.just("end")),
    ),
    max_size=10,
)


def provider(
    limits: SpanLimits, sampler: Any = None
) -> tuple[TracerProvider, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    made = TracerProvider(
        sampler=sampler, resource=Resource({"service.name": "t"}), span_limits=limits
    )
    made.add_span_processor(SimpleSpanProcessor(exporter))
    return made, exporter


def apply(span: trace.Span, operations: list[tuple[Any, ...]]) -> None:
    for name, *arguments in operations:
        if name == "record_exception":
            span.record_exception(ValueError(arguments[0]))
        elif name == "add_link":
            span.add_link(CONTEXT, arguments[0])
        elif name == "end":
            span.end()
        else:
            getattr(span, name)(*arguments)
    span.end()


def seen(span: ReadableSpan) -> dict[str, Any]:
    """What an exporter reads of a span, but for its own ids and times."""
    return {
        "name": span.name,
        "kind": span.kind,
        "parent": span.parent,
        "attributes": dict(span.attributes or {}),
        "dropped_attributes": span.dropped_attributes,
        "events": [
            (event.name, dict(event.attributes or {}), event.dropped_attributes)
            for event in span.events
        ],
        "dropped_events": span.dropped_events,
        "links": [
            (link.context, dict(link.attributes or {}), link.dropped_attributes)
            for link in span.links
        ],
        "dropped_links": span.dropped_links,
        "status": (span.status.status_code, span.status.description),
        "resource": span.resource.attributes,
        "scope": span.instrumentation_scope,
        "sampled": span.context.trace_flags.sampled if span.context else None,
        "trace": span.context.trace_id if span.context else None,
        "ended": span.end_time is not None and span.start_time is not None,
    }


@settings(max_examples=300, deadline=None)
@given(
    attributes=MAPPINGS,
    links=st.lists(MAPPINGS, max_size=2),
    operations=OPERATIONS,
    kind=st.sampled_from(list(SpanKind)),
    limits=st.builds(
        SpanLimits,
        max_span_attributes=LIMIT,
        max_span_attribute_length=LIMIT,
        max_events=LIMIT,
        max_links=LIMIT,
        max_event_attributes=LIMIT,
        max_link_attributes=LIMIT,
    ),
)
def test_a_lean_span_exports_what_the_sdks_span_exports(
    attributes: dict[Any, Any],
    links: list[dict[Any, Any]],
    operations: list[tuple[Any, ...]],
    kind: SpanKind,
    limits: SpanLimits,
) -> None:
    made, exporter = provider(limits)
    parent = trace.set_span_in_context(trace.NonRecordingSpan(CONTEXT))
    for tracer in (made.get_tracer("lgos"), LeanTracer("lgos", made)):
        span = tracer.start_span(
            "chat model",
            context=parent,
            kind=kind,
            attributes=attributes,
            links=[Link(CONTEXT, found) for found in links],
        )
        apply(span, operations)
    sdk, lean = exporter.get_finished_spans()
    assert isinstance(lean, LeanSpan) and not isinstance(sdk, LeanSpan)
    assert seen(lean) == seen(sdk)


def test_spans_of_a_request_nest_and_end_in_order() -> None:
    made, exporter = provider(SpanLimits())
    tracer = LeanTracer("lgos", made)
    with tracer.start_as_current_span("POST /v1/responses", kind=SpanKind.SERVER) as server:
        with tracer.start_as_current_span("invoke_workflow g") as run:
            tracer.start_span("chat m", attributes={"gen_ai.operation.name": "chat"}).end()
        assert trace.get_current_span() is server
    chat, workflow, request = exporter.get_finished_spans()
    assert [chat.name, workflow.name] == ["chat m", "invoke_workflow g"]
    assert request.name == "POST /v1/responses"
    assert chat.parent == run.get_span_context() and workflow.parent == server.get_span_context()
    assert request.parent is None
    assert len({chat.context.trace_id, workflow.context.trace_id, request.context.trace_id}) == 1
    assert not server.is_recording()
    server.set_attribute("late", 1)  # ignored once ended, as the SDK's span ignores it
    assert "late" not in (request.attributes or {})


def test_an_exception_leaving_the_block_marks_the_span_as_the_sdk_does() -> None:
    made, exporter = provider(SpanLimits())
    for tracer in (made.get_tracer("lgos"), LeanTracer("lgos", made)):
        try:
            with tracer.start_as_current_span("failing"):
                raise RuntimeError("boom")
        except RuntimeError:
            pass
    sdk, lean = exporter.get_finished_spans()
    assert (lean.status.status_code, lean.status.description) == (
        sdk.status.status_code,
        sdk.status.description,
    )
    assert [e.name for e in lean.events] == [e.name for e in sdk.events] == ["exception"]


def test_the_providers_sampler_decides_as_for_the_sdks_spans() -> None:
    made, _ = provider(SpanLimits(), sampler=TraceIdRatioBased(0.5))
    sdk, lean = made.get_tracer("lgos"), LeanTracer("lgos", made)
    decisions = set()
    for trace_id in range(1, 2**64, 2**58 + 12345):
        remote = SpanContext(trace_id, 1, is_remote=True)
        parent = trace.set_span_in_context(trace.NonRecordingSpan(remote))
        both = [t.start_span("s", context=parent) for t in (sdk, lean)]
        flags = [span.get_span_context().trace_flags.sampled for span in both]
        recording = [span.is_recording() for span in both]
        assert flags[0] == flags[1] and recording[0] == recording[1]
        assert all(span.get_span_context().trace_id == trace_id for span in both)
        decisions.add(flags[0])
        for span in both:
            span.end()
    assert decisions == {True, False}  # the ratio decided both ways


@pytest.mark.parametrize("state", [TraceState(), TraceState([("vendor", "v1")])])
def test_the_default_sampler_decides_for_lean_spans_as_for_the_sdks(state: TraceState) -> None:
    made, exporter = provider(SpanLimits())  # OTEL_TRACES_SAMPLER unset: parentbased_always_on
    sdk, lean = made.get_tracer("lgos"), LeanTracer("lgos", made)
    parents: list[SpanContext | None] = [None]
    for remote in (True, False):
        for flags in (TraceFlags.DEFAULT, TraceFlags.SAMPLED):
            parents.append(SpanContext(7, 9, remote, TraceFlags(flags), state))
    for parent in parents:
        context = None if parent is None else trace.set_span_in_context(NonRecordingSpan(parent))
        both = [t.start_span("s", context=context, attributes={"k": 1}) for t in (sdk, lean)]
        made_contexts = [span.get_span_context() for span in both]
        assert [span.is_recording() for span in both] == [
            parent is None or parent.trace_flags.sampled
        ] * 2
        assert made_contexts[0].trace_flags == made_contexts[1].trace_flags
        assert made_contexts[0].trace_state == made_contexts[1].trace_state
        if parent is not None:
            assert made_contexts[1].trace_id == parent.trace_id
        for span in both:
            span.end()
    assert lean._parent_based_on  # the lean tracer's shortcut decided, not the sampler
    exported = exporter.get_finished_spans()
    assert len(exported) == 6  # no parent, and the two sampled ones: an SDK and a lean span each
    for sdk_span, lean_span in zip(exported[::2], exported[1::2], strict=True):
        assert isinstance(lean_span, LeanSpan)
        # A root span's trace id is new for each; the rest must match.
        assert {**seen(lean_span), "trace": None} == {**seen(sdk_span), "trace": None}


def test_an_unsampled_span_is_not_recorded_and_keeps_its_context() -> None:
    made, exporter = provider(SpanLimits(), sampler=ParentBased(ALWAYS_OFF))
    tracer = LeanTracer("lgos", made)
    root = tracer.start_span("dropped")
    assert not root.is_recording() and root.get_span_context().is_valid
    assert not root.get_span_context().trace_flags.sampled
    parent = trace.set_span_in_context(trace.NonRecordingSpan(CONTEXT))
    child = tracer.start_span("kept", context=parent)
    assert child.is_recording() and child.get_span_context().trace_id == CONTEXT.trace_id
    root.end()
    child.end()
    assert [span.name for span in exporter.get_finished_spans()] == ["kept"]


def test_a_provider_that_is_not_the_sdks_makes_its_own_spans() -> None:
    tracer = LeanTracer("lgos", trace.NoOpTracerProvider())
    span = tracer.start_span("s")
    assert not isinstance(span, LeanSpan) and not span.is_recording()


class Watching(SpanProcessor):
    """Writes down every call a span makes on it."""

    def __init__(self, name: str, calls: list[tuple[str, str, str]]) -> None:
        self.name, self.calls = name, calls

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.calls.append((self.name, "on_start", span.name))

    def _on_ending(self, span: Any) -> None:
        self.calls.append((self.name, "_on_ending", span.name))

    def on_end(self, span: ReadableSpan) -> None:
        self.calls.append((self.name, "on_end", span.name))


def test_processors_get_every_call_of_the_sdks_spans_in_its_order() -> None:
    seen: dict[str, list[tuple[str, str, str]]] = {}
    for side in ("sdk", "lean"):
        made, exporter = provider(SpanLimits())
        calls = seen[side] = []
        made.add_span_processor(Watching("first", calls))
        tracer = made.get_tracer("lgos") if side == "sdk" else LeanTracer("lgos", made)
        outer = tracer.start_span("outer")
        # Added while a span is open: the next span calls it, and so does the open one's end.
        made.add_span_processor(Watching("second", calls))
        tracer.start_span("inner", context=trace.set_span_in_context(outer)).end()
        outer.end()
        assert [span.name for span in exporter.get_finished_spans()] == ["inner", "outer"]
    assert seen["lean"] == seen["sdk"]
    assert ("second", "on_start", "inner") in seen["lean"]
    assert ("second", "on_end", "outer") in seen["lean"]


def test_a_lean_span_continues_the_trace_of_whatever_span_is_current() -> None:
    """Under the SDK's own span, under a remote caller's, under a value that is no span (a new
    trace, as the SDK's tracer starts one): the same parent as the SDK's span gets."""
    made, exporter = provider(SpanLimits())
    sdk_tracer = made.get_tracer("sdk")
    under = {
        "sdk": None,
        "remote": trace.set_span_in_context(NonRecordingSpan(CONTEXT)),
        "no span": trace.set_span_in_context("not a span"),  # type: ignore[arg-type]
    }
    with sdk_tracer.start_as_current_span("sdk parent") as sdk_parent:
        for name, context in under.items():
            for tracer in (sdk_tracer, LeanTracer("lgos", made)):
                tracer.start_span(name, context=context).end()
    spans = exporter.get_finished_spans()
    parents = {span.name: [] for span in spans}
    for span in spans:
        parents[span.name].append(span.parent)
    assert parents["sdk"] == [sdk_parent.get_span_context()] * 2
    assert parents["remote"] == [CONTEXT] * 2
    assert parents["no span"] == [None, None]


def test_a_drawn_id_of_zero_is_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Zero is the invalid trace and span id: the provider's random ids never take it."""
    draws = iter([0, 0x5CE, 0, 0xA1])
    monkeypatch.setattr(lean_spans, "_random_bits", lambda bits: next(draws))
    made, exporter = provider(SpanLimits())
    LeanTracer("lgos", made).start_span("s").end()
    (span,) = exporter.get_finished_spans()
    assert span.context is not None
    assert (span.context.trace_id, span.context.span_id) == (0x5CE, 0xA1)
    assert span.context.trace_flags & TraceFlags.RANDOM_TRACE_ID


def test_the_sdks_own_span_metrics_count_lean_spans_when_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED, "true")
    reader = InMemoryMetricReader()
    made = TracerProvider(meter_provider=MeterProvider(metric_readers=[reader]))
    tracer = LeanTracer("lgos", made)
    tracer.start_span("still open")
    tracer.start_span("ended").end()
    data = reader.get_metrics_data()
    assert data is not None
    totals = {
        metric.name: sum(point.value for point in metric.data.data_points)  # type: ignore[union-attr]
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
    }
    assert totals["otel.sdk.span.started"] == 2
    assert totals["otel.sdk.span.live"] == 1
