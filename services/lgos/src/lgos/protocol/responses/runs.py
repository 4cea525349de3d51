"""The run sequence every Responses request follows, foreground or background: open, run, close.

A graph with interrupts runs under its run's lease: ``open_run`` starts or resumes the run and
prepares its plan, and ``OpenRun.close`` releases the lease once the run is over. Any other
graph only has its plan prepared, and nothing to close.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from uuid import UUID

from service_kit import context, metrics
from starlette.requests import Request

from lgos.config import GraphFeature
from lgos.errors import RunConflictError
from lgos.protocol.cancel import run_or_cancel
from lgos.protocol.responses.decode import DecodedResponsesRequest
from lgos.runtime.events import RunOutcome
from lgos.runtime.runner import GraphRunner, RunPlan
from lgos.runtime.spans import link_paused_run, record_answers, resume_span
from lgos.scope import scope_hash
from lgos.state import AppState


@contextmanager
def naming_the_paused_response(graph: str) -> Iterator[None]:
    """A busy or conflicting interrupt run is reported against ``previous_response_id`` (and
    counted)."""
    try:
        yield
    except RunConflictError as conflict:
        conflict.param = "previous_response_id"
        if metrics.enabled():
            metrics.child(metrics.RUN_CONFLICTS, graph, conflict.code or "conflict").inc()
        raise


@dataclass(frozen=True, slots=True)
class OpenRun:
    """One prepared invocation, and what ends it."""

    runner: GraphRunner
    plan: RunPlan
    response_id: str | None = None
    """An interrupt run's Response id (it names the run); ``None``: any fresh id."""
    close: Callable[[], Awaitable[None]] | None = None
    """Releases the run's lease (safe to call twice); ``None`` when there is no lease."""

    async def invoke(self, request: Request) -> RunOutcome:
        """Run to completion, cancelled if the client leaves; then release the lease."""
        try:
            with naming_the_paused_response(self.runner.model):
                return await run_or_cancel(request, self.runner.invoke(self.plan))
        finally:
            if self.close is not None:
                await asyncio.shield(self.close())


async def open_run(
    state: AppState,
    runner: GraphRunner,
    decoded: DecodedResponsesRequest,
    scope: Callable[[], str],
    run_id: UUID | None = None,
) -> OpenRun:
    """Prepare ``decoded`` to run; an interrupt run is started (with ``run_id`` when the caller
    chose it) or resumed under its lease first: 409 while another request holds the lease, or
    when the answers do not match the paused batch. ``scope`` is resolved for interrupt runs
    only, which belong to one."""
    if GraphFeature.INTERRUPTS not in runner.config.features:
        return OpenRun(runner, runner.prepare(decoded.graph_request))
    service = await state.interrupts.service()
    resume = decoded.resume
    trusted = scope()
    context.bind(scope_hash=scope_hash(trusted))
    with naming_the_paused_response(runner.model):
        if resume is None:
            run = await service.start(runner.graph, trusted, runner.model, run_id)
        else:
            with resume_span(runner.model, resume.run_id) as span:
                run = await service.resume(
                    runner.graph, trusted, runner.model, resume.run_id, resume.answers
                )
                record_answers(span, run.asked, resume.answers)
                link_paused_run(span, run.paused_in)
    context.bind(run_id=str(run.run_id), response_id=run.response_id)
    try:
        plan = service.prepare(runner, decoded.graph_request, run)
    except BaseException:
        await service.close(run)
        raise
    return OpenRun(runner, plan, run.response_id, functools.partial(service.close, run))
