"""Running one registered graph for one request, streaming or not.

Both protocols call this; neither knows LangGraph stream modes. The runner owns assistant text
parity: streamed deltas must add up to the final message's text.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.pregel import Pregel
from langgraph.types import Durability, StreamMode
from opentelemetry.trace import SpanContext

from lgos.config import GraphConfig
from lgos.errors import (
    ContextLengthExceededError,
    InternalServerError,
    LeaseLostError,
    LGOSError,
    RunConflictError,
    ServiceUnavailableError,
)
from lgos.outages import is_outage
from lgos.request import GraphRequest
from lgos.runtime.events import RunEvent, RunOutcome, StatusUpdate, TextDelta
from lgos.runtime.metering import RunMeter
from lgos.runtime.outcome import outcome_of
from lgos.runtime.server_tools import ToolTracker
from lgos.runtime.usage import RunObserver
from lgos.status import read_status

logger = logging.getLogger("lgos.runtime")


class ParityError(RuntimeError):
    """Streamed assistant text does not add up to the final message's text."""


def default_input(request: GraphRequest) -> dict[str, Any]:
    return {"messages": list(request.messages)}


def default_output(state: Any) -> AIMessage | None:
    messages = state.get("messages") if isinstance(state, dict) else None
    if not messages:
        return None
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return message
    return None


def stopped_at_interrupts(final_state: Any) -> bool:
    """A run that paused at interrupts has no final answer of this turn."""
    return isinstance(final_state, dict) and bool(final_state.get("__interrupt__"))


def translate_failure(exc: BaseException, *, model: str) -> LGOSError:
    """Map a failure inside a graph run to the error the client may see; log the details."""
    if isinstance(exc, LGOSError):
        return exc
    if isinstance(exc, ContextOverflowError):
        logger.warning("model context window exceeded", extra={"model": model})
        return ContextLengthExceededError()
    if isinstance(exc, LeaseLostError):
        # Another request took the run over (its lease expired, or Redis lost it): the run's
        # outcome is theirs, and this one wrote nothing.
        logger.warning("interrupt run lost its lease", extra={"model": model})
        return RunConflictError(
            "This run was taken over by another request; retry once it has paused or finished.",
            code="run_busy",
        )
    if is_outage(exc):
        logger.warning("graph run lost its storage", extra={"model": model, "error": repr(exc)})
        return ServiceUnavailableError()
    logger.error("graph run failed", exc_info=exc, extra={"model": model})
    return InternalServerError()


@dataclass(slots=True)
class RunPlan:
    """One prepared invocation: graph input, runtime context, run config and its observer."""

    input: Any
    context: Any
    config: RunnableConfig
    observer: RunObserver
    offered_functions: frozenset[str]
    server_tools: frozenset[str]
    graph: Pregel[Any, Any, Any, Any]
    finish: Callable[[RunOutcome], Awaitable[bool]] | None = None
    """Called once the invocation has drained; returns True when the run paused."""
    paused_in: SpanContext | None = None
    """A resumed run's: the span its run paused in (its run span links to it)."""


class GraphRunner:
    """A compiled graph plus its adapters, ready to serve requests."""

    def __init__(self, model: str, config: GraphConfig, graph: Pregel[Any, Any, Any, Any]) -> None:
        self.model = model
        self.config = config
        self.graph = graph
        self._to_input = config.request_to_input or default_input
        self._to_message = config.output_to_message or default_output

    def attach_store(self, store: Any) -> None:
        """Serve the graph with the deployment's LangGraph Store (application data)."""
        self.graph = self.graph.copy(update={"store": store})

    def validate(self, request: GraphRequest, *, resuming: bool = False) -> None:
        """Apply the graph's adapters for their errors only: a background request is judged at
        submission, as in the foreground, although it runs later (a resume's input is the answer
        to the pause, which no adapter converts)."""
        if not resuming:
            self._to_input(request)
        self._context(request)

    def _context(self, request: GraphRequest) -> Any:
        if self.config.context_factory is not None:
            return self.config.context_factory(request, request.settings)
        return request.settings

    def prepare(
        self,
        request: GraphRequest,
        *,
        graph: Pregel[Any, Any, Any, Any] | None = None,
        thread_id: str | None = None,
        command: Any = None,
        finish: Callable[[RunOutcome], Awaitable[bool]] | None = None,
        paused_in: SpanContext | None = None,
    ) -> RunPlan:
        """Apply the graph's adapters; errors they raise reject the request before any output.

        Interrupt runs pass their checkpointed graph copy, thread and resume command.
        """
        graph_input = command if command is not None else self._to_input(request)
        context = self._context(request)
        observer = RunObserver()
        metadata: dict[str, Any] = {"lgos_model": self.model}
        if request.conversation_id is not None:
            metadata["conversation_id"] = request.conversation_id
        run_config: RunnableConfig = {
            "callbacks": [observer],
            "run_name": self.model,
            "metadata": metadata,
        }
        if thread_id is not None:
            run_config["configurable"] = {"thread_id": thread_id}
        offered = frozenset(str(tool["name"]) for tool in request.tools)
        return RunPlan(
            graph_input,
            context,
            run_config,
            observer,
            offered,
            frozenset(request.server_tools),
            graph or self.graph,
            finish,
            paused_in,
        )

    async def invoke(self, plan: RunPlan) -> RunOutcome:
        """Run to completion; raises ``LGOSError`` (already logged) on failure.

        Requests that select server tools consume root-graph updates to report the tool
        activity; everything else calls the graph once for its durable result.
        """
        try:
            if plan.server_tools or plan.finish is not None:
                outcome: RunOutcome | None = None
                async for event in self._run(plan, stream_text=False):
                    if isinstance(event, RunOutcome):
                        outcome = event
                assert outcome is not None
                return outcome
            with RunMeter(self.model, plan.config, plan.paused_in) as meter, meter.current():
                state = await self.graph.ainvoke(plan.input, plan.config, context=plan.context)
                meter.outcome = "completed"
            return outcome_of(self._to_message(state), plan.observer.usage, plan.offered_functions)
        except Exception as exc:
            raise translate_failure(exc, model=self.model) from exc

    def stream(self, plan: RunPlan) -> AsyncIterator[RunEvent]:
        """Yield answer deltas, statuses and tool activity as they happen, then the outcome.

        Raises whatever the graph raises (or ``ParityError``); callers translate it with
        ``translate_failure`` once they have kept what was already streamed.
        """
        return self._run(plan, stream_text=True)

    async def _run(self, plan: RunPlan, *, stream_text: bool) -> AsyncIterator[RunEvent]:
        with RunMeter(self.model, plan.config, plan.paused_in) as meter:
            events = self._run_metered(plan, meter, stream_text=stream_text)
            async for event in meter.iterate(events):
                yield event

    async def _run_metered(
        self, plan: RunPlan, meter: RunMeter, *, stream_text: bool
    ) -> AsyncIterator[RunEvent]:
        observer = plan.observer
        private_ids = observer.private_message_ids
        tracker = ToolTracker(plan.server_tools) if plan.server_tools else None
        modes: list[StreamMode] = ["values"]
        if stream_text:
            modes += ["messages", "custom"]
        if tracker is not None:
            modes.append("updates")
        streamed: list[str] = []
        final_state: Any = None
        # Interrupt runs store state only when the invocation pauses or finishes.
        durability: Durability | None = "exit" if plan.finish is not None else None
        # subgraphs=True: statuses and answer tokens of nodes inside subgraphs reach the client;
        # nested updates and values stay private (only the root graph's count).
        async for namespace, mode, data in plan.graph.astream(
            plan.input,
            plan.config,
            context=plan.context,
            stream_mode=modes,
            durability=durability,
            subgraphs=True,
        ):
            if namespace and mode not in ("messages", "custom"):
                continue
            if mode == "messages":
                chunk = data[0]
                if isinstance(chunk, AIMessage) and chunk.id not in private_ids:
                    text = chunk.text
                    if text:
                        if not streamed:
                            meter.first_delta()
                        streamed.append(text)
                        yield TextDelta(text)
            elif mode == "custom":
                description = read_status(data)
                if description:
                    yield StatusUpdate(description)
            elif mode == "updates":
                assert tracker is not None
                for event in tracker.observe(data):
                    yield event
            else:
                final_state = data
        paused = False
        if plan.finish is not None and stopped_at_interrupts(final_state):
            outcome = RunOutcome(text="".join(streamed), usage=observer.usage)
            paused = await plan.finish(outcome)
        else:
            outcome = outcome_of(
                self._to_message(final_state), observer.usage, plan.offered_functions
            )
            if plan.finish is not None:
                paused = await plan.finish(outcome)
        if tracker is not None:
            outcome.tool_activity = tracker.finish()
        meter.outcome = "paused" if paused else "completed"
        if stream_text and not paused:
            if not streamed:
                if outcome.text:
                    meter.first_delta()
                    yield TextDelta(outcome.text)
            elif "".join(streamed) != outcome.text:
                raise ParityError("streamed text does not match the final assistant message")
        yield outcome
