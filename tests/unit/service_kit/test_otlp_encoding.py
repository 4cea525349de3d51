"""The lean OTLP encoder against OpenTelemetry's own: the bytes parse to the same message for
spans of every shape (attribute types, events, links, statuses, remote parents, trace state,
several resources and scopes), and a value OTLP cannot carry is left out, not fatal."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as reference
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import Event, ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.trace.span import TraceState
from service_kit.lean_spans import LeanSpan, LeanTracer
from service_kit.otlp_encoding import encode_spans

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
TEXT = st.text(max_size=80)  # past the cached length too
SCALAR = st.one_of(st.booleans(), INT64, st.floats(allow_nan=False), TEXT)
VALUE = st.one_of(
    SCALAR,
    st.lists(st.text(max_size=10), max_size=4).map(tuple),
    st.lists(INT64, max_size=4).map(tuple),
    st.lists(st.booleans(), max_size=3).map(tuple),
    st.lists(st.floats(allow_nan=False), max_size=3).map(tuple),
)
ATTRIBUTES = st.dictionaries(st.text(min_size=1, max_size=30), VALUE, max_size=6)
IDS = st.integers(min_value=1, max_value=2**64 - 1)
TRACE_IDS = st.integers(min_value=1, max_value=2**128 - 1)
NANOS = st.integers(min_value=0, max_value=2**63)


@st.composite
def contexts(draw: st.DrawFn, remote: bool | None = None) -> SpanContext:
    state = draw(
        st.lists(
            st.tuples(st.from_regex(r"[a-z][a-z0-9]{0,5}", fullmatch=True), st.just("v1")),
            max_size=2,
            unique_by=lambda kv: kv[0],
        )
    )
    return SpanContext(
        trace_id=draw(TRACE_IDS),
        span_id=draw(IDS),
        is_remote=draw(st.booleans()) if remote is None else remote,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
        trace_state=TraceState(state),
    )


RESOURCES = [Resource({"service.name": "lgos"}), Resource({"service.name": "files"}, "https://s")]
SCOPES = [
    InstrumentationScope("lgos"),
    InstrumentationScope("x", "1.0", "https://x", {"k": 1}),
    None,
]


@st.composite
def spans(draw: st.DrawFn) -> ReadableSpan:
    code = draw(st.sampled_from(list(StatusCode)))
    description = draw(st.none() | TEXT) if code is StatusCode.ERROR else None
    return ReadableSpan(
        name=draw(TEXT),
        context=draw(contexts(remote=False)),
        parent=draw(st.none() | contexts()),
        # An equal copy sometimes: grouped with the original, as OpenTelemetry groups them.
        resource=draw(st.sampled_from([*RESOURCES, Resource({"service.name": "lgos"})])),
        attributes=draw(ATTRIBUTES),
        events=[
            Event(draw(TEXT), draw(ATTRIBUTES), timestamp=draw(NANOS))
            for _ in range(draw(st.integers(0, 2)))
        ],
        links=[Link(draw(contexts()), draw(ATTRIBUTES)) for _ in range(draw(st.integers(0, 2)))],
        kind=draw(st.sampled_from(list(SpanKind))),
        status=Status(code, description),
        start_time=draw(NANOS),
        end_time=draw(NANOS),
        instrumentation_scope=draw(st.sampled_from([*SCOPES, InstrumentationScope("lgos")])),
    )


def parsed(data: bytes) -> ExportTraceServiceRequest:
    return ExportTraceServiceRequest.FromString(data)


@settings(max_examples=300, deadline=None)
@given(st.lists(spans(), max_size=6))
def test_the_same_message_as_opentelemetrys_encoder(batch: list[ReadableSpan]) -> None:
    assert parsed(encode_spans(batch)) == reference(batch)


def test_a_chat_span_round_trips_with_its_values() -> None:
    context = SpanContext(0xABC, 0x12, is_remote=False, trace_flags=TraceFlags(1))
    parent = SpanContext(0xABC, 0x34, is_remote=True, trace_flags=TraceFlags(1))
    span = ReadableSpan(
        name="chat offline-model",
        context=context,
        parent=parent,
        resource=RESOURCES[0],
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": 5,
            "gen_ai.usage.output_tokens": -1,
            "gen_ai.response.finish_reasons": ("stop",),
        },
        kind=SpanKind.CLIENT,
        start_time=1,
        end_time=2,
        instrumentation_scope=SCOPES[0],
    )
    message = parsed(encode_spans([span]))
    (encoded,) = message.resource_spans[0].scope_spans[0].spans
    assert encoded.name == "chat offline-model"
    assert encoded.trace_id == (0xABC).to_bytes(16, "big")
    assert encoded.parent_span_id == (0x34).to_bytes(8, "big")
    assert encoded.kind == 3  # SPAN_KIND_CLIENT
    assert encoded.flags == 0x300  # has-is-remote and is-remote
    values = {kv.key: kv.value for kv in encoded.attributes}
    assert values["gen_ai.usage.output_tokens"].int_value == -1
    reasons = values["gen_ai.response.finish_reasons"].array_value.values
    assert [v.string_value for v in reasons] == ["stop"]


def test_a_value_otlp_cannot_carry_is_left_out() -> None:
    attributes: dict[str, Any] = {"kept": "yes", "too.big": 2**64, "odd": object()}
    span = ReadableSpan(
        name="s",
        context=SpanContext(1, 1, is_remote=False),
        resource=RESOURCES[0],
        attributes=attributes,
    )
    (encoded,) = parsed(encode_spans([span])).resource_spans[0].scope_spans[0].spans
    assert [kv.key for kv in encoded.attributes] == ["kept"]


def test_a_lone_surrogate_is_written_as_a_question_mark() -> None:
    span = ReadableSpan(
        name="bad \ud800 name",
        context=SpanContext(1, 1, is_remote=False),
        resource=RESOURCES[0],
    )
    (encoded,) = parsed(encode_spans([span])).resource_spans[0].scope_spans[0].spans
    assert encoded.name == "bad ? name"


def test_spans_of_one_resource_and_scope_share_one_group() -> None:
    batch = [
        ReadableSpan(
            name=f"s{n}",
            context=SpanContext(1, n + 1, is_remote=False),
            resource=RESOURCES[0],
            instrumentation_scope=SCOPES[0],
        )
        for n in range(3)
    ]
    message = parsed(encode_spans(batch))
    assert len(message.resource_spans) == 1
    assert [s.name for s in message.resource_spans[0].scope_spans[0].spans] == ["s0", "s1", "s2"]


class DrawnIds(IdGenerator):
    """Ids the test draws (Hypothesis replays them), not the random module's."""

    def __init__(self) -> None:
        self.span_id = self.trace_id = 1

    def generate_span_id(self) -> int:
        return self.span_id

    def generate_trace_id(self) -> int:
        return self.trace_id


_IDS = DrawnIds()
_LEAN = InMemorySpanExporter()
# Few attributes a span, so that some are dropped (a count the span then carries).
_PROVIDER = TracerProvider(
    resource=RESOURCES[0], id_generator=_IDS, span_limits=SpanLimits(max_span_attributes=5)
)
_PROVIDER.add_span_processor(SimpleSpanProcessor(_LEAN))
_TRACER = LeanTracer("lgos", _PROVIDER)


@st.composite
def lean_spans(draw: st.DrawFn) -> ReadableSpan:
    """A span of this process's own tracer: mostly the usual kind (attributes only), which the
    encoder reads from the span's fields, sometimes with what sends it the long way."""
    parent = draw(st.none() | contexts())
    _IDS.span_id, _IDS.trace_id = draw(IDS), draw(TRACE_IDS)
    span = _TRACER.start_span(
        draw(TEXT),
        context=None
        if parent is None
        else trace.set_span_in_context(trace.NonRecordingSpan(parent)),
        kind=draw(st.sampled_from(list(SpanKind))),
        attributes=draw(ATTRIBUTES),
        links=[Link(draw(contexts())) for _ in range(draw(st.sampled_from([0, 0, 0, 1])))],
        start_time=draw(NANOS),
    )
    for key, value in draw(ATTRIBUTES).items():
        span.set_attribute(key, value)
    if draw(st.sampled_from([False, False, False, True])):
        span.add_event(draw(TEXT), draw(ATTRIBUTES), timestamp=draw(NANOS))
    if draw(st.sampled_from([False, False, False, True])):
        code = draw(st.sampled_from([StatusCode.OK, StatusCode.ERROR]))
        span.set_status(Status(code, draw(TEXT) if code is StatusCode.ERROR else None))
    span.end(end_time=draw(NANOS))
    [ended] = _LEAN.get_finished_spans()
    _LEAN.clear()
    assert isinstance(ended, LeanSpan)
    return ended


@settings(max_examples=300, deadline=None)
@given(st.lists(lean_spans(), max_size=6))
def test_this_processs_own_spans_encode_as_opentelemetrys_encoder_has_them(
    batch: list[ReadableSpan],
) -> None:
    assert parsed(encode_spans(batch)) == reference(batch)


def test_a_remembered_value_is_not_taken_for_an_equal_value_of_another_type() -> None:
    """1, True and 1.0 are one key to a dict; each is still written as its own type, and an
    integer beyond OTLP's int64 is left out of the lean path as out of the full one."""
    for value in (1, True, 1.0, "1", 1, 2**64):
        _TRACER.start_span("s", attributes={"v": value}).end()
    batch = list(_LEAN.get_finished_spans())
    _LEAN.clear()
    assert all(type(span) is LeanSpan for span in batch)
    message = parsed(encode_spans(batch))
    assert message == reference(batch)
    written = [
        [kv.value.WhichOneof("value") for kv in span.attributes]
        for span in message.resource_spans[0].scope_spans[0].spans
    ]
    assert written == [
        ["int_value"],
        ["bool_value"],
        ["double_value"],
        ["string_value"],
        ["int_value"],
        [],
    ]
