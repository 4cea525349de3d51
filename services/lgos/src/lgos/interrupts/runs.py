"""Interrupt runs: start or resume one under its lease, read the pending batch, clean up.

The order is the contract: acquire the run's lease (409 ``run_busy`` when taken); for a resume,
compare the submitted interrupt ids with the complete pending set in the durable checkpoint
(409 ``interrupt_state_conflict`` unless equal); run with exit durability; after the invocation
has drained, expose the new pending batch or delete the finished run's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID, uuid4

import orjson
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from langgraph.types import Command, PregelTask, StateSnapshot
from opentelemetry.trace import SpanContext

from lgos.errors import RunConflictError
from lgos.interrupts.coordinator import Lease, RunCoordinator
from lgos.interrupts.ids import INTERRUPT_TOOL, call_id, paused_response_id
from lgos.interrupts.keys import thread_key
from lgos.interrupts.persistence import PAUSED_IN, FencedSaver, delete_quietly
from lgos.request import GraphRequest
from lgos.runtime.events import FunctionCall, RunOutcome
from lgos.runtime.runner import GraphRunner, RunPlan
from lgos.runtime.spans import span_context_of

logger = logging.getLogger("lgos.interrupts")


def state_conflict(message: str) -> RunConflictError:
    return RunConflictError(message, code="interrupt_state_conflict")


class SecondInterruptError(RuntimeError):
    """A resumed node reached another ``interrupt()``: one per node invocation."""


@dataclass
class InterruptRun:
    """One invocation of an interrupt run, holding its lease until ``close``."""

    run_id: UUID
    thread_id: str
    lease: Lease
    graph: Pregel[Any, Any, Any, Any]
    response_id: str
    command: Command[Any] | None = None
    resumed_tasks: frozenset[str] = frozenset()
    asked: dict[str, Any] = field(default_factory=dict)
    """A resume's paused batch: interrupt id → the payload the graph asked with."""
    paused_in: SpanContext | None = None
    """A resume's: the span the run paused in, when its checkpoint recorded one."""
    paused: bool = field(default=False)
    heartbeat: asyncio.Task[None] | None = field(default=None, repr=False)
    finished: bool = field(default=False)
    """The invocation drained and ``finish`` ran: paused (batch kept) or done (thread deleted)."""
    closed: bool = field(default=False)
    """``close`` ran: the lease is released (a stream closes before its terminal event and
    again when the response ends)."""

    @property
    def config(self) -> RunnableConfig:
        return {"configurable": {"thread_id": self.thread_id}}


class InterruptService:
    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        coordinator: RunCoordinator,
        renew_every: float = 10.0,
    ) -> None:
        self.saver = saver
        self.coordinator = coordinator
        self.renew_every = renew_every

    def _keep_alive(self, run: InterruptRun) -> InterruptRun:
        """Renew the lease while the run executes; a lost lease stops renewing (and writing)."""

        async def beat() -> None:
            while True:
                await asyncio.sleep(self.renew_every)
                if not await self.coordinator.holds(run.lease):
                    break
            logger.warning("interrupt run lost its lease", extra={"thread_id": run.thread_id})

        run.heartbeat = asyncio.create_task(beat())
        return run

    def _bind(self, graph: Pregel[Any, Any, Any, Any], lease: Lease) -> Pregel[Any, Any, Any, Any]:
        return graph.copy(update={"checkpointer": FencedSaver(self.saver, self.coordinator, lease)})

    async def start(
        self,
        graph: Pregel[Any, Any, Any, Any],
        scope: str,
        model: str,
        run_id: UUID | None = None,
    ) -> InterruptRun:
        """A new run; background runs pass the run id they chose at submission."""
        run_id = run_id or uuid4()
        key = thread_key(scope, model, run_id)
        lease = await self.coordinator.acquire(key)
        if lease is None:  # a fresh random key: only a broken coordinator gets here
            raise RuntimeError("could not lease a new interrupt run")
        # Renewed while it works, like a resume: a first run may well outlast the lease TTL.
        return self._keep_alive(
            InterruptRun(run_id, key, lease, self._bind(graph, lease), paused_response_id(run_id))
        )

    async def resume(
        self,
        graph: Pregel[Any, Any, Any, Any],
        scope: str,
        model: str,
        run_id: UUID,
        answers: dict[str, str],
    ) -> InterruptRun:
        key = thread_key(scope, model, run_id)
        lease = await self.coordinator.acquire(key)
        if lease is None:
            raise RunConflictError(
                "This run is already executing; retry once it has paused or finished.",
                code="run_busy",
            )
        run = InterruptRun(run_id, key, lease, self._bind(graph, lease), paused_response_id(run_id))
        try:
            snapshot = await self._snapshot(run)
            pending = _pending(snapshot)
            if not pending:
                raise state_conflict(
                    "No paused run matches previous_response_id; it may have "
                    "completed, expired or belong to another scope."
                )
            if set(answers) != set(pending):
                raise state_conflict(
                    "The outputs do not answer exactly the pending interrupt batch of this run."
                )
        except BaseException:
            await self.coordinator.release(lease)
            raise
        run.command = Command(resume=answers)
        run.asked = {interrupt_id: payload for interrupt_id, (_, payload) in pending.items()}
        run.resumed_tasks = frozenset(task for task, _ in pending.values())
        run.paused_in = span_context_of((snapshot.metadata or {}).get(PAUSED_IN))
        return self._keep_alive(run)

    async def _snapshot(self, run: InterruptRun) -> StateSnapshot:
        return await run.graph.aget_state(run.config, subgraphs=True)

    async def pending(self, run: InterruptRun) -> dict[str, tuple[str, Any]]:
        """Pending interrupt id → (task id, payload), read from the durable checkpoint."""
        return _pending(await self._snapshot(run))

    def prepare(self, runner: GraphRunner, request: GraphRequest, run: InterruptRun) -> RunPlan:
        """The run plan of ``run``: its checkpointed graph, thread and resume command, with
        ``finish`` called once the invocation has drained."""
        return runner.prepare(
            request,
            graph=run.graph,
            thread_id=run.thread_id,
            command=run.command,
            finish=functools.partial(self.finish, run),
            paused_in=run.paused_in,
        )

    async def finish(self, run: InterruptRun, outcome: RunOutcome) -> bool:
        """After the invocation drained: expose the pending batch, or delete the finished run."""
        pending = await self.pending(run)
        if not pending:
            await delete_quietly(self.saver, run.thread_id)
            run.finished = True
            return False
        if any(task in run.resumed_tasks for task, _ in pending.values()):
            raise SecondInterruptError("a resumed node called interrupt() a second time")
        run.paused = run.finished = True
        outcome.function_calls = [
            FunctionCall(call_id(interrupt_id), INTERRUPT_TOOL, orjson.dumps(value).decode())
            for interrupt_id, (_, value) in pending.items()
        ]
        outcome.refusal = None
        outcome.citations = []
        outcome.incomplete_reason = None
        return True

    async def close(self, run: InterruptRun) -> None:
        """Release the lease; a run that failed or was cancelled before producing a batch leaves
        nothing behind (unless its lease was lost: the thread is then someone else's)."""
        if run.closed:
            return
        if run.heartbeat is not None:
            run.heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run.heartbeat
        try:
            if not run.finished and await self.coordinator.holds(run.lease):
                await delete_quietly(self.saver, run.thread_id)
        finally:
            await self.coordinator.release(run.lease)
        run.closed = True


def _pending(snapshot: StateSnapshot) -> dict[str, tuple[str, Any]]:
    """Pending interrupt id → (task id, payload).

    The task is the innermost one that asked: a subgraph that loops back to ask again does so
    from a new node invocation, although its task in the root graph stays the same.
    """
    return {
        interrupt.id: (_asking_task(task), interrupt.value)
        for task in snapshot.tasks
        for interrupt in task.interrupts
    }


def _asking_task(task: PregelTask) -> str:
    if isinstance(task.state, StateSnapshot):
        for inner in task.state.tasks:
            if inner.interrupts:
                return _asking_task(inner)
    return task.id
