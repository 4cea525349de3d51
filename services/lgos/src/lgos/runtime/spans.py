"""The spans of one graph run, following the OpenTelemetry GenAI conventions.

``invoke_workflow <graph>`` covers the run (``gen_ai.conversation.id`` from the request's
``metadata.conversation_id``); LangChain callbacks open ``chat <model>`` for each model call and
``execute_tool <name>`` for each tool, under the span current where the call is made (the run
span, a tool's span, a graph's own span), else the nearest traced ancestor. A tool's span is the
current span while its body runs, so spans the tool makes and the ``traceparent`` of its calls to
other services are its children.
Answering a paused run adds ``lgos.resume <graph>`` beside it: the lease and the check of the
answers against the paused batch, with the run id and the kind of each answer (never its text).
The paused run keeps the span context it paused in (:func:`current_traceparent`, stored with its
checkpoint); the resume span and the resumed run span link to it (``lgos.link.type=paused_run``).
Nothing is recorded when tracing is off. Message content is recorded only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` opts in: then each ``chat`` span carries
``gen_ai.input.messages`` and ``gen_ai.output.messages`` (see :mod:`lgos.runtime.content`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import Token
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import LLMResult
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, StatusCode
from opentelemetry.trace.propagation import _SPAN_KEY
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from service_kit import tracing
from service_kit.lean_spans import LeanSpan

from lgos.runtime import content

LINK_TYPE = "lgos.link.type"
#: A link to the span a resumed run paused in (in the trace of the request that paused it).
PAUSED_RUN = "paused_run"
_W3C = TraceContextTextMapPropagator()


def current_traceparent() -> str | None:
    """The W3C ``traceparent`` of the current span; ``None`` when there is none."""
    carrier: dict[str, str] = {}
    _W3C.inject(carrier)
    return carrier.get("traceparent")


def span_context_of(traceparent: object) -> SpanContext | None:
    """The span context a stored ``traceparent`` names; ``None`` when absent or malformed."""
    if not isinstance(traceparent, str):
        return None
    found = trace.get_current_span(_W3C.extract({"traceparent": traceparent})).get_span_context()
    return found if found.is_valid else None


def paused_run_links(paused_in: SpanContext | None) -> list[Link]:
    return [] if paused_in is None else [Link(paused_in, {LINK_TYPE: PAUSED_RUN})]


def start_run_span(
    graph: str, conversation_id: str | None, paused_in: SpanContext | None = None
) -> Span:
    """The run span; a resumed run links to the span its run paused in."""
    attributes: dict[str, str] = {tracing.OPERATION: "invoke_workflow", tracing.AGENT_NAME: graph}
    if conversation_id:
        attributes[tracing.CONVERSATION_ID] = conversation_id
    return tracing.tracer().start_span(
        f"invoke_workflow {graph}",
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        links=paused_run_links(paused_in),
    )


RUN_ID = "lgos.run.id"
ANSWER_KINDS = "lgos.interrupt.answer.kinds"
ANSWER_CHOICES = "lgos.interrupt.answer.choices"


def answer_kind(asked: Any, answer: str) -> str:
    """``choice`` when ``answer`` is one of the ``choices`` the interrupt offered, else ``text``."""
    choices = asked.get("choices") if isinstance(asked, Mapping) else None
    if isinstance(choices, list) and answer in [str(c) for c in choices]:
        return "choice"
    return "text"


@contextmanager
def resume_span(graph: str, run_id: UUID) -> Iterator[Span]:
    """The span of answering the paused run ``run_id``; an error (a busy run, answers that do
    not match the batch) is recorded by its code and raised on."""
    attributes = {tracing.AGENT_NAME: graph, RUN_ID: str(run_id)}
    with tracing.current_span(
        f"lgos.resume {graph}", SpanKind.INTERNAL, attributes, _conflict_code
    ) as span:
        yield span


def link_paused_run(span: Span, paused_in: SpanContext | None) -> None:
    """Link the resume span to the span the run paused in (old runs stored none: no link)."""
    for link in paused_run_links(paused_in):
        span.add_link(link.context, link.attributes)


def _conflict_code(error: Exception) -> str:
    return getattr(error, "code", None) or tracing.error_type(error)


def record_answers(span: Span, asked: Mapping[str, Any], answers: Mapping[str, str]) -> None:
    """Each answer's kind, by interrupt id; the offered choice for answers that picked one
    (a value the graph offered, not the user's text)."""
    ordered = [(answers[key], answer_kind(asked.get(key), answers[key])) for key in sorted(answers)]
    span.set_attribute(ANSWER_KINDS, [kind for _, kind in ordered])
    picked = [answer for answer, kind in ordered if kind == "choice"]
    if picked:
        span.set_attribute(ANSWER_CHOICES, picked)


class SpanRecorder(BaseCallbackHandler):
    """Model and tool spans of one run, children of the span current in the run (or of a traced
    ancestor, else ``root``).

    ``run_inline``: LangChain then calls these methods in the caller's own context, never in a
    copy or another thread. ``BaseTool.arun``/``run`` call ``on_tool_start`` and
    ``on_tool_end``/``on_tool_error`` in one context and run the tool body in a copy taken in
    between, so the tool's span is attached in ``on_tool_start`` and detached at its end, and
    parallel tool calls (each its own task) each see their own. A model span is never made
    current: ``agenerate`` calls ``on_llm_end`` in tasks of its own, where it could not be
    detached.
    """

    run_inline = True
    ignore_chain: bool = True  # the base class's is a read-only property
    """Chains matter only while a tool's span is open: a model or tool under a chain that started
    inside a tool finds that tool's span through them. Any other chain's ancestors hold no span,
    so skipping their events (four a request, ≈ 50 µs) changes no parent. An attribute kept equal
    to ``not self.attached`` by hand, not a property: LangChain reads it at every chain event."""

    def __init__(self, root: Span) -> None:
        self.root = root
        self.trace_id = root.get_span_context()[0]  # the tuple's item: the property is a call
        self.capture = tracing.capture_message_content()
        # Keyed by the run ids' integers: a UUID's hash is a Python call, its int is a field.
        self.spans: dict[int, Span] = {}
        self.parents: dict[int, int | None] = {}
        self.attached: dict[int, Token[Context]] = {}

    def _parent(self, parent_run_id: UUID | None) -> Any:
        context = otel_context.get_current()
        # The current span read from the context in hand (trace.get_current_span would read
        # the context again); a lean span is known by its type, as isinstance on the Span ABC
        # is a Python call.
        here = context.get(_SPAN_KEY)
        if (
            (type(here) is LeanSpan or isinstance(here, Span))
            and here.is_recording()
            and here.get_span_context()[0] == self.trace_id
        ):
            return context
        current = parent_run_id.int if parent_run_id is not None else None
        while current is not None:
            if current in self.spans:
                return trace.set_span_in_context(self.spans[current])
            current = self.parents.get(current)
        return trace.set_span_in_context(self.root)

    def _start(self, run_id: UUID, parent_run_id: UUID | None, name: str, **attrs: Any) -> Span:
        self.parents[run_id.int] = parent_run_id.int if parent_run_id is not None else None
        span = self.spans[run_id.int] = tracing.tracer().start_span(
            name,
            context=self._parent(parent_run_id),
            kind=SpanKind.CLIENT if attrs.get(tracing.OPERATION) == "chat" else SpanKind.INTERNAL,
            attributes={k: v for k, v in attrs.items() if v is not None},
        )
        return span

    def _end(self, run_id: UUID, error: BaseException | None = None) -> None:
        token = self.attached.pop(run_id.int, None)
        if token is not None:
            otel_context.detach(token)
            self.ignore_chain = not self.attached
        span = self.spans.pop(run_id.int, None)
        if span is None:
            return
        if error is not None:
            span.set_attribute("error.type", type(error).__name__)
            span.set_status(StatusCode.ERROR)
        span.end()

    def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self.parents[run_id.int] = parent_run_id.int if parent_run_id is not None else None

    def on_chat_model_start(
        self,
        serialized: Any,
        messages: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        invocation_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        metadata = metadata or {}
        params = invocation_params or {}
        model = params.get("model") or params.get("model_name") or metadata.get("ls_model_name")
        span = self._start(
            run_id,
            parent_run_id,
            f"chat {model}" if model else "chat",
            **{
                tracing.OPERATION: "chat",
                tracing.PROVIDER: metadata.get("ls_provider"),
                tracing.REQUEST_MODEL: model,
            },
        )
        if self.capture and messages and span.is_recording():
            span.set_attribute(tracing.INPUT_MESSAGES, content.input_messages(messages[0]))

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        span = self.spans.get(run_id.int)
        if span is not None and response.generations and response.generations[0]:
            generation = response.generations[0][0]
            message = getattr(generation, "message", None)
            meta = getattr(message, "response_metadata", None) or {}
            usage = getattr(message, "usage_metadata", None) or {}
            response_id = meta.get("id") or getattr(message, "id", None)
            reason = _finish_reason(message)
            if self.capture:
                choices = [getattr(g, "message", None) for g in response.generations[0]]
                returned = [m for m in choices if isinstance(m, BaseMessage)]
                span.set_attribute(tracing.OUTPUT_MESSAGES, content.output_messages(returned))
            found = {
                tracing.RESPONSE_ID: response_id,
                tracing.RESPONSE_MODEL: meta.get("model_name") or meta.get("model"),
                tracing.INPUT_TOKENS: usage.get("input_tokens"),
                tracing.OUTPUT_TOKENS: usage.get("output_tokens"),
                tracing.FINISH_REASONS: (str(reason),) if reason else None,
            }
            span.set_attributes({k: v for k, v in found.items() if v is not None})
        self._end(run_id)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)

    def on_tool_start(
        self,
        serialized: Any,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        name = (serialized or {}).get("name") or "tool"
        span = self._start(
            run_id,
            parent_run_id,
            f"execute_tool {name}",
            **{
                tracing.OPERATION: "execute_tool",
                tracing.TOOL_NAME: name,
                tracing.TOOL_TYPE: "function",
                tracing.TOOL_CALL_ID: kwargs.get("tool_call_id"),
            },
        )
        self.attached[run_id.int] = otel_context.attach(trace.set_span_in_context(span))
        self.ignore_chain = False

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, error)


def _finish_reason(message: Any) -> Any:
    meta = getattr(message, "response_metadata", None) or {}
    return meta.get("finish_reason") or meta.get("status")
