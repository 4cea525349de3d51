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
from starlette.requests import Request

from lgos.background.backend import (
    BackgroundJob,
    IdempotencyKey,
    IdempotencyKeyReusedError,
    Publish,
    Snapshot,
)
from lgos.config import GraphFeature
from lgos.errors import ConflictError, InvalidRequestError, UnprocessableEntityError
from lgos.interrupts.ids import paused_response_id
from lgos.interrupts.runs import InterruptRun
from lgos.protocol.ids import response_id
from lgos.protocol.responses.decode import DecodedResponsesRequest, decode
from lgos.protocol.responses.encode import encode_stream
from lgos.protocol.responses.items import ResponseShell
from lgos.runtime.runner import GraphRunner
from lgos.state import AppState

IDEMPOTENCY_HEADER = "idempotency-key"
PROGRESS_INTERVAL = 0.25


def terminal_response(last_chunk: bytes) -> Snapshot:
    """The Response object inside the terminal event of a finished stream."""
    data = last_chunk.rstrip().rsplit(b"\ndata: ", 1)[-1]
    response: Snapshot = orjson.loads(data)["response"]
    return response


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
    resume = decoded.resume
    return ResponseShell(
        model=runner.model,
        request=decoded,
        id=job.response_id,
        previous_response_id=resume.previous_response_id if resume else None,
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
    """Run one background job from its stored request, in whichever process holds it."""
    runner = state.runner_for(job.model)
    decoded = decode(job.body, runner.model, runner.config)
    shell = _shell(runner, decoded, job)
    publish(shell.build("in_progress", []))
    resume = decoded.resume
    run: InterruptRun | None = None
    service = await state.interrupts.service() if job.run_id else None
    if service is not None:
        run_id = UUID(job.run_id)
        try:
            if resume is None:
                run = await service.start(runner.graph, job.scope, runner.model, run_id)
            else:
                run = await service.resume(
                    runner.graph, job.scope, runner.model, run_id, resume.answers
                )
        except ConflictError as conflict:
            # A stale or racing background answer fails its own Response, once it is checked
            # under the run's lease.
            failed = shell.build("failed", [], failed=True)
            failed["error"]["message"] = f"{conflict.code}: {conflict.message}"
            return failed
    try:
        if service is not None and run is not None:
            plan = service.prepare(runner, decoded.graph_request, run)
        else:
            plan = runner.prepare(decoded.graph_request)
        last = b""
        published = 0.0

        def progress(output: list[dict[str, Any]]) -> None:
            # In-progress snapshots show partial output, at most every PROGRESS_INTERVAL.
            nonlocal published
            now = time.monotonic()
            if now - published >= PROGRESS_INTERVAL:
                published = now
                publish(shell.build("in_progress", output))

        async for chunk in encode_stream(runner, plan, shell, progress):
            last = chunk
        return terminal_response(last)
    finally:
        if service is not None and run is not None:
            await service.close(run)
