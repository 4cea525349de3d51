"""First-party spans without the OpenTelemetry SDK span's per-span bookkeeping.

A served request makes three spans of its own (the server span, ``invoke_workflow``, ``chat``).
The SDK's span allocates three locks and three bounded containers for each, cleans every
attribute value through generic type checks and copies itself into a ``ReadableSpan`` when it
ends: measured on the benchmark machine, ≈ 30 µs to start, fill and end a ``chat`` span against
≈ 13 µs for a span of this module, and three spans were most of what tracing cost a do-nothing
request. :class:`LeanTracer` makes the same spans from the same parts of the installed SDK
provider (its sampler, id generator, resource, span limits and span processors), so every
``OTEL_*`` setting and every exporter applies unchanged; only the span object is leaner:

- attributes live in a plain dict: values of the plain types are stored as they are, anything
  else goes through the SDK's own cleaning, and the span limits (count, string length) apply as
  the SDK applies them (the oldest attribute makes way);
- events and links get their bounded containers only when a span has some;
- the SDK's default sampler (``parentbased_always_on``, recognised by its description) is not
  called: its decision (the parent's, else sampled, with the parent's trace state) is made here
  without its two context lookups and result object; any other sampler decides for itself;
- the span hands itself to the processors when it ends (nothing changes it afterwards).

The span is a subclass of the SDK's, so exporters, processors and ``ReadableSpan`` readers see
the type they expect. Like the SDK span it may be read from the exporter's thread; unlike it, it
takes no lock to be written: a span is written by the request that made it, and CPython's dict
operations are atomic. When the installed provider is not the SDK's (none, or another
implementation), spans are that provider's.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from time import time_ns
from types import NoneType
from typing import Any, NamedTuple, cast

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.attributes import _clean_attribute_value
from opentelemetry.context import Context
from opentelemetry.sdk import trace as sdk_trace
from opentelemetry.sdk.trace import SpanProcessor, SynchronousMultiSpanProcessor
from opentelemetry.sdk.trace._tracer_metrics import NoOpTracerMetrics
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.id_generator import RandomIdGenerator
from opentelemetry.sdk.trace.sampling import DEFAULT_ON, Decision, ParentBased
from opentelemetry.sdk.util import BoundedList
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.trace.propagation import _SPAN_KEY
from opentelemetry.trace.span import TraceState
from opentelemetry.util import types

logger = logging.getLogger(__name__)

_PLAIN = frozenset({bool, int, float, bytes, NoneType})
"""Attribute value types the SDK stores unchanged (``str`` too, within the length limit, and
tuples of these)."""
_FLAGS = {
    (sampled, random): TraceFlags(
        (TraceFlags.SAMPLED if sampled else TraceFlags.DEFAULT)
        | (TraceFlags.RANDOM_TRACE_ID if random else TraceFlags.DEFAULT)
    )
    for sampled in (False, True)
    for random in (False, True)
}
"""A new span's flags by whether it is sampled and its trace id random, made once."""
UNSET_STATUS = Status(StatusCode.UNSET)
"""The status every span of this module starts with (one object, shared)."""
_PARENT_BASED_ON: str = DEFAULT_ON.get_description()  # type: ignore[no-untyped-call]
# Enum members and the API's constants, looked up once: an enum member costs a class attribute
# lookup through the enum's metaclass each time (≈ 0.1 µs on Python 3.11).
_RECORD_AND_SAMPLE = Decision.RECORD_AND_SAMPLE
_DROP = Decision.DROP
_NO_TRACE_STATE = trace.DEFAULT_TRACE_STATE
_SAMPLED = int(TraceFlags.SAMPLED)
_RANDOM_TRACE_ID = int(TraceFlags.RANDOM_TRACE_ID)
_random_bits = random.getrandbits
_MAX_TRACE_ID = (1 << 128) - 1
_MAX_SPAN_ID = (1 << 64) - 1


_NO_OPS = frozenset(
    {
        SpanProcessor.on_start,
        SpanProcessor._on_ending,
        BatchSpanProcessor.on_start,
        BatchSpanProcessor._on_ending,
        SimpleSpanProcessor.on_start,
        SimpleSpanProcessor._on_ending,
    }
)
"""The SDK processors' methods that do nothing (``pass``): a span need not call them."""


class _Plan(NamedTuple):
    """What a span calls of a provider's processors, in the SDK's order, without the methods
    that do nothing."""

    processors: tuple[SpanProcessor, ...]
    starting: tuple[Callable[..., None], ...]
    ending: tuple[Callable[[sdk_trace.Span], None], ...]
    ended: tuple[Callable[[sdk_trace.ReadableSpan], None], ...]


_last_plan = _Plan((), (), (), ())


def _plan(processor: SpanProcessor) -> _Plan | None:
    """The calls for ``processor``, when it is the SDK's usual one (the processors added to a
    provider, called in turn); made again whenever a processor is added (a new tuple)."""
    global _last_plan
    if type(processor) is not SynchronousMultiSpanProcessor:
        return None
    processors = processor._span_processors
    plan = _last_plan
    if processors is not plan.processors:
        plan = _last_plan = _Plan(
            processors,
            tuple(p.on_start for p in processors if type(p).on_start not in _NO_OPS),
            tuple(p._on_ending for p in processors if type(p)._on_ending not in _NO_OPS),
            tuple(p.on_end for p in processors),
        )
    return plan


class LeanSpan(sdk_trace.Span):
    """An SDK span made and filled with less work; see the module's docstring."""

    # The SDK's methods kept here (set_status) hold the span's lock while they
    # check that it has not ended; a shared no-op stands in for a lock per span.
    _lock = nullcontext()  # type: ignore[assignment]  # entered and left, never acquired

    def __init__(
        self,
        name: str,
        context: SpanContext,
        parent: SpanContext | None,
        tracer: sdk_trace.Tracer,
        kind: SpanKind,
        attributes: types.Attributes,
        links: Sequence[Link],
        record_exception: bool,
        set_status_on_exception: bool,
        record_end_metrics: Any,
    ) -> None:
        # The SDK span's constructor is skipped on purpose: every field its methods and
        # ReadableSpan's read is set here, without its locks and empty bounded containers.
        self._name = name
        self._context = context
        self._parent = parent
        self._kind = kind
        self._resource = tracer.resource
        self._instrumentation_info = tracer.instrumentation_info
        self._instrumentation_scope = tracer._instrumentation_scope
        self._sampler = tracer.sampler
        self._trace_config = None
        self._span_processor = tracer.span_processor
        limits = tracer._span_limits
        self._limits = limits
        self._max_attributes = limits.max_span_attributes
        self._max_length = limits.max_span_attribute_length
        self._record_exception = record_exception
        self._set_status_on_exception = set_status_on_exception
        self._record_end_metrics = record_end_metrics
        self._status = UNSET_STATUS
        self._start_time: int | None = None
        self._end_time: int | None = None
        self._attributes: dict[str, types.AnyValue] = {}
        self._dropped_attributes = 0
        self._events: Sequence[sdk_trace.Event] = ()
        self._links = self._new_links(links) if links else ()
        if attributes:
            self._set_all(attributes)

    @property
    def dropped_attributes(self) -> int:
        return self._dropped_attributes

    def get_span_context(self) -> SpanContext:
        # The SDK's goes through typing.cast, a function call, to return the same field.
        return self._context  # type: ignore[return-value]  # set in __init__, never None

    def _put(self, key: str, value: types.AnyValue) -> None:
        """Store one cleaned value as the SDK's bounded attributes would."""
        found = self._attributes
        if key in found:
            del found[key]
        elif self._max_attributes is not None and len(found) >= self._max_attributes:
            self._dropped_attributes += 1
            if not found:
                return
            logger.warning("Span attributes are full: the oldest makes way for a new one.")
            del found[next(iter(found))]
        found[key] = value

    def _plain(self, value: object) -> bool:
        kind = type(value)
        if kind is str:
            return self._max_length is None or len(value) <= self._max_length  # type: ignore[arg-type]
        if kind is tuple:  # the SDK would rebuild it item by item, equal
            return all(self._plain(item) for item in value)  # type: ignore[attr-defined]
        return kind in _PLAIN

    def _set_all(self, attributes: Mapping[str, types.AnyValue]) -> None:
        found, limit, length = self._attributes, self._max_attributes, self._max_length
        for key, value in attributes.items():
            kind = type(value)
            if (
                type(key) is str
                and key
                and (
                    kind in _PLAIN
                    or (kind is str and (length is None or len(value) <= length))  # type: ignore[arg-type]
                    or (kind is tuple and self._plain(value))
                )
            ):
                # _put's rule, written out for the usual case: a new key with room left.
                if key not in found and (limit is None or len(found) < limit):
                    found[key] = value
                else:
                    self._put(key, value)
                continue
            # The SDK's rules for anything else, as its set_attributes applies them (keys
            # converted to str where they can be, sequences to tuples, invalid values dropped).
            cleaned = _clean_attribute_value({key: value}, self._max_length)
            self._dropped_attributes += 1 - len(cleaned)
            for cleaned_key, cleaned_value in cleaned.items():
                self._put(cleaned_key, cleaned_value)

    def set_attributes(self, attributes: Mapping[str, types.AnyValue]) -> None:
        if self._end_time is not None:
            logger.warning("Setting attribute on ended span.")
            return
        self._set_all(attributes)

    def set_attribute(self, key: str, value: types.AnyValue) -> None:
        if self._end_time is not None:
            logger.warning("Setting attribute on ended span.")
            return
        if not key or not isinstance(key, str):
            logger.warning("Invalid attribute key %r: dropped.", key)
            self._dropped_attributes += 1
            return
        self._put(
            key, value if self._plain(value) else _clean_attribute_value(value, self._max_length)
        )

    def update_name(self, name: str) -> None:
        # The SDK's check, without its decorator's wrapper and lock (three calls).
        if self._end_time is not None:
            logger.warning("Tried calling update_name on an ended span.")
            return
        self._name = name

    def _add_event(self, event: sdk_trace.EventBase) -> None:
        if self._end_time is not None:
            logger.warning("Calling add_event() on an ended span.")
            return
        if not isinstance(self._events, BoundedList):
            self._events = BoundedList(self._limits.max_events)
        self._events.append(cast(sdk_trace.Event, event))

    def _add_link(self, link: Link) -> None:
        if self._end_time is not None:
            logger.warning("Calling add_link() on an ended span.")
            return
        if not isinstance(self._links, BoundedList):
            self._links = BoundedList(self._limits.max_links)
        self._links.append(link)

    def start(self, start_time: int | None = None, parent_context: Context | None = None) -> None:
        if self._start_time is not None:
            logger.warning("Calling start() on a started span.")
            return
        self._start_time = start_time if start_time is not None else time_ns()
        plan = _plan(self._span_processor)
        if plan is None:
            self._span_processor.on_start(self, parent_context=parent_context)
            return
        for on_start in plan.starting:
            on_start(self, parent_context=parent_context)

    def end(self, end_time: int | None = None) -> None:
        if self._start_time is None:
            raise RuntimeError("Calling end() on a not started span.")
        if self._end_time is not None:
            logger.warning("Calling end() on an ended span.")
            return
        self._end_time = end_time if end_time is not None else time_ns()
        if self._record_end_metrics:
            self._record_end_metrics()
        # The span itself is the readable span: nothing changes it once it has ended.
        plan = _plan(self._span_processor)
        if plan is None:
            self._span_processor._on_ending(self)
            self._span_processor.on_end(self)
            return
        for on_ending in plan.ending:
            on_ending(self)
        for on_end in plan.ended:
            on_end(self)


class LeanTracer(trace.Tracer):
    """A tracer making :class:`LeanSpan` from the parts of an SDK provider: ``provider``, or
    else the global one, followed as OpenTelemetry's proxy tracer follows it. Under a provider
    that is not the SDK's (none yet, or another implementation) each call goes to that
    provider's own tracer."""

    def __init__(self, name: str, provider: trace.TracerProvider | None = None) -> None:
        self._name = name
        self._fixed = provider
        self._provider: trace.TracerProvider | None = None
        self._tracer: trace.Tracer = trace.NoOpTracer()
        self._sdk: sdk_trace.Tracer | None = None
        self._parent_based_on = False
        """The provider samples as the SDK does by default (``parentbased_always_on``)."""
        self._metered = False
        """The provider counts spans (the SDK's own span metrics, off by default)."""

    def _bind(self) -> sdk_trace.Tracer | None:
        # The global provider read as get_tracer_provider reads it once it is set, less its
        # two calls (one a typing.cast) on every span.
        provider = self._fixed or trace._TRACER_PROVIDER or trace.get_tracer_provider()
        # Looked up once per provider: the SDK's get_tracer builds its scope objects and touches
        # the warnings filters on every call (≈ 20 µs).
        if provider is not self._provider:
            self._tracer = provider.get_tracer(self._name)
            # Exactly the SDK's tracer: a subclass may make its spans differently.
            self._sdk = self._tracer if type(self._tracer) is sdk_trace.Tracer else None
            sampler = getattr(self._tracer, "sampler", None)
            self._parent_based_on = (
                type(sampler) is ParentBased and sampler.get_description() == _PARENT_BASED_ON  # type: ignore[no-untyped-call]
            )
            self._metered = self._sdk is not None and (
                type(self._sdk._tracer_metrics) is not NoOpTracerMetrics
            )
            self._provider = provider
        return self._sdk

    def start_span(
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[Link] | None = (),
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
    ) -> trace.Span:
        tracer = self._bind()
        if tracer is None:
            return self._tracer.start_span(
                name,
                context,
                kind,
                attributes,
                links,
                start_time,
                record_exception,
                set_status_on_exception,
            )
        links = links or ()
        # trace.get_current_span written out (four calls), and the parent's fields read as the
        # tuple's items that they are (each property is a call): this runs for every span.
        current = (context if context is not None else otel_context.get_current()).get(_SPAN_KEY)
        parent: SpanContext | None
        # The usual parents first: isinstance with an ABC is a Python call.
        if current is None:
            parent = None
        elif type(current) is LeanSpan:
            parent = current._context
        else:
            parent = current.get_span_context() if isinstance(current, trace.Span) else None
        if not tracer._tracer_config.is_enabled:
            return trace.NonRecordingSpan(parent or trace.INVALID_SPAN_CONTEXT)
        ids = tracer.id_generator
        random_ids = type(ids) is RandomIdGenerator
        if parent is None or not parent[5]:  # is_valid
            parent = None
            if random_ids:  # RandomIdGenerator's own draw, without its call
                trace_id = _random_bits(128)
                while not trace_id:
                    trace_id = _random_bits(128)
                random_trace_id = True
            else:
                trace_id = ids.generate_trace_id()
                random_trace_id = bool(ids.is_trace_id_random())
        else:
            trace_id = parent[0]
            random_trace_id = bool(parent[3] & _RANDOM_TRACE_ID)
        decision: Decision
        trace_state: TraceState | None
        if self._parent_based_on:
            # ParentBased(ALWAYS_ON)'s decision, made without its two context lookups and
            # result object: the parent's, else sampled; the parent's trace state.
            on = parent is None or bool(parent[3] & _SAMPLED)
            decision = _RECORD_AND_SAMPLE if on else _DROP
            if not on:
                attributes = None
            trace_state = parent[4] if parent is not None else None
        else:
            result = tracer.sampler.should_sample(context, trace_id, name, kind, attributes, links)
            decision, attributes = result.decision, result.attributes
            trace_state = result.trace_state
        flags = _FLAGS[decision is _RECORD_AND_SAMPLE, random_trace_id]
        if random_ids:
            span_id = _random_bits(64)
            while not span_id:
                span_id = _random_bits(64)
        else:
            span_id = ids.generate_span_id()
        # SpanContext's own constructor, less its keyword handling (≈ 1 µs a span).
        span_context: SpanContext = tuple.__new__(
            SpanContext,
            (
                trace_id,
                span_id,
                False,
                flags,
                trace_state if trace_state is not None else _NO_TRACE_STATE,
                0 < trace_id <= _MAX_TRACE_ID and 0 < span_id <= _MAX_SPAN_ID,
            ),
        )
        record_end_metrics = (
            tracer._tracer_metrics.start_span(parent, decision) if self._metered else None
        )
        if decision is _DROP:
            return trace.NonRecordingSpan(span_context)
        # Made without the SDK span's __new__, a Python function that only refuses to make
        # the base class itself.
        span = object.__new__(LeanSpan)
        span.__init__(  # type: ignore[misc]
            name,
            span_context,
            parent,
            tracer,
            kind,
            attributes,
            links,
            record_exception,
            set_status_on_exception,
            record_end_metrics,
        )
        span.start(start_time, parent_context=context)
        return span

    @contextmanager
    def start_as_current_span(  # type: ignore[override]
        self,
        name: str,
        context: Context | None = None,
        kind: SpanKind = SpanKind.INTERNAL,
        attributes: types.Attributes = None,
        links: Sequence[Link] | None = (),
        start_time: int | None = None,
        record_exception: bool = True,
        set_status_on_exception: bool = True,
        end_on_exit: bool = True,
    ) -> Iterator[trace.Span]:
        span = self.start_span(
            name,
            context,
            kind,
            attributes,
            links,
            start_time,
            record_exception,
            set_status_on_exception,
        )
        with trace.use_span(
            span,
            end_on_exit=end_on_exit,
            record_exception=record_exception,
            set_status_on_exception=set_status_on_exception,
        ) as current:
            yield current
