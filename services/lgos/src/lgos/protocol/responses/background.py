"""Background creation: validate now, queue a job that runs the graph, answer with a snapshot.

``create_background`` turns a validated request into a plain-JSON ``BackgroundJob``;
``execute_job`` runs one in any process (this one, or an ``lgos worker``). The job reuses the
streaming encoder and keeps its terminal Response object, so snapshots carry partial output, usage
and failure reasons exactly as foreground Responses do.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any
from uuid import UUID, uuid4

import orjson
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from service_kit import context, langfuse
from starlette.requests import Request

from lgos.background.backend import (
    BackgroundJob,
    IdempotencyKey,
    IdempotencyKeyReusedError,
    Publish,
    Snapshot,
)
from lgos.config import GraphFeature
from lgos.errors import InvalidRequestError, RunConflictError, UnprocessableEntityError
from lgos.interrupts.ids import paused_response_id
from lgos.protocol.ids import response_id
from lgos.protocol.responses.decode import DecodedResponsesRequest, decode
from lgos.protocol.responses.encode import encode_stream
from lgos.protocol.responses.items import ResponseShell
from lgos.protocol.responses.runs import open_run
from lgos.runtime.runner import GraphRunner
from lgos.scope import scope_hash
from lgos.state import AppState

IDEMPOTENCY_HEADER = "idempotency-key"
PROGRESS_INTERVAL = 0.25


def idempotency_of(request: Request, scope: str, body: dict[str, Any]) -> IdempotencyKey | None:
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    if not key or len(key) > 255:
        raise InvalidRequestError("Idempotency-Key must be 1 to 255 characters.")
    digest = hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return IdempotencyKey(scope, key, digest)


def _shell(
    runner: GraphRunner, decoded: DecodedResponsesRequest, job: BackgroundJob
) -> ResponseShell:
    return ResponseShell(
        model=runner.model,
        request=decoded,
        id=job.response_id,
        background=True,
        created_at=job.created_at,
    )


async def create_background(
    request: Request,
    state: AppState,
    runner: GraphRunner,
    decoded: DecodedResponsesRequest,
    body: dict[str, Any],
) -> Snapshot:
    resume = decoded.resume
    runner.validate(decoded.graph_request, resuming=resume is not None)
    scope = state.scope_resolver(request)
    idempotency = idempotency_of(request, scope, body)
    run_id: UUID | None = None
    if GraphFeature.INTERRUPTS in runner.config.features:
        # Background runs choose their run id (and so their Response id) at submission.
        run_id = resume.run_id if resume else uuid4()
    job = BackgroundJob(
        response_id=paused_response_id(run_id) if run_id else response_id(),
        scope=scope,
        model=runner.model,
        body=body,
        created_at=int(time.time()),
        run_id=str(run_id) if run_id else None,
        request_id=context.request_id(),
        traceparent=context.outgoing_headers().get(context.TRACEPARENT_HEADER),
        decoded=decoded,
    )
    context.bind(response_id=job.response_id)
    trace.get_current_span().add_event(
        "lgos.background.queued", {"lgos.response.id": job.response_id}
    )
    queued = _shell(runner, decoded, job).build("queued", [])
    try:
        return await state.background.submit(queued, job, idempotency)
    except IdempotencyKeyReusedError:
        raise UnprocessableEntityError(
            "This Idempotency-Key was already used with a different request.",
            code="idempotency_key_reused",
        ) from None


async def execute_job(state: AppState, job: BackgroundJob, publish: Publish) -> Snapshot:
    """Run one background job from its stored request, in whichever process holds it; its run
    span continues the submitting request's trace."""
    carrier = {context.TRACEPARENT_HEADER: job.traceparent} if job.traceparent else {}
    token = otel_context.attach(propagate.extract(carrier))
    try:
        return await _execute_in_context(state, job, publish)
    finally:
        otel_context.detach(token)


async def _execute_in_context(state: AppState, job: BackgroundJob, publish: Publish) -> Snapshot:
    with context.fresh(
        request_id=job.request_id,
        response_id=job.response_id,
        run_id=job.run_id,
        model=job.model,
        scope_hash=scope_hash(job.scope),
    ):
        return await _execute_job(state, job, publish)


async def _execute_job(state: AppState, job: BackgroundJob, publish: Publish) -> Snapshot:
    runner = state.runner_for(job.model)
    decoded: DecodedResponsesRequest = job.decoded or decode(job.body, runner.model, runner.config)
    langfuse.set_session(decoded.graph_request.conversation_id)
    shell = _shell(runner, decoded, job)
    publish(shell.build("in_progress", []))
    try:
        run = await open_run(
            state,
            runner,
            decoded,
            lambda: job.scope,
            UUID(job.run_id) if job.run_id else None,
        )
    except RunConflictError as conflict:
        # A stale or racing background answer fails its own Response, once it is checked
        # under the run's lease.
        failed = shell.build("failed", [], failed=True)
        failed["error"]["message"] = f"{conflict.code}: {conflict.message}"
        return failed
    try:
        published = 0.0

        def progress(output: list[dict[str, Any]]) -> None:
            # In-progress snapshots show partial output, at most every PROGRESS_INTERVAL.
            nonlocal published
            now = time.monotonic()
            if now - published >= PROGRESS_INTERVAL:
                published = now
                publish(shell.build("in_progress", output))

        terminal: list[Snapshot] = []
        async for _ in encode_stream(
            runner, run.plan, shell, progress, on_terminal=terminal.append
        ):
            pass  # nobody reads this stream: its snapshots are the output
        return terminal[0]
    finally:
        if run.close is not None:
            await run.close()
