"""Background creation: validate now, queue a job that runs the graph, answer with a snapshot.

The job reuses the streaming encoder and keeps its terminal Response object, so snapshots carry
partial output, usage and failure reasons exactly as foreground Responses do.
"""

from __future__ import annotations

import functools
import hashlib
import time
from typing import Any
from uuid import uuid4

import orjson
from starlette.requests import Request

from lgos.background.backend import IdempotencyKey, IdempotencyKeyReusedError, Snapshot
from lgos.config import GraphFeature
from lgos.errors import InvalidRequestError
from lgos.interrupts.ids import paused_response_id
from lgos.interrupts.runs import ConflictError, InterruptRun
from lgos.protocol.responses.decode import DecodedResponsesRequest
from lgos.protocol.responses.events import encode_stream
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


async def create_background(
    request: Request,
    state: AppState,
    runner: GraphRunner,
    decoded: DecodedResponsesRequest,
    body: dict[str, Any],
) -> Snapshot:
    scope = state.scope_resolver(request)
    idempotency = idempotency_of(request, scope, body)
    interrupts = GraphFeature.INTERRUPTS in runner.config.features
    resume = decoded.resume
    # Background runs choose their run id (and so their Response id) at submission.
    run_id = (resume.run_id if resume else uuid4()) if interrupts else None
    shell = ResponseShell(
        model=runner.model,
        request=decoded,
        previous_response_id=resume.previous_response_id if resume else None,
        background=True,
    )
    if run_id is not None:  # interrupt runs: the Response id carries the run id
        shell.id = paused_response_id(run_id)

    async def job(publish: Any) -> Snapshot:
        publish(shell.build("in_progress", []))
        run: InterruptRun | None = None
        service = await state.interrupts.service() if interrupts else None
        if service is not None:
            try:
                if resume is None:
                    run = await service.start(runner.graph, scope, runner.model, run_id)
                else:
                    run = await service.resume(
                        runner.graph, scope, runner.model, resume.run_id, resume.answers
                    )
            except ConflictError as conflict:
                # A stale or racing background answer fails its own Response.
                failed = shell.build("failed", [], failed=True)
                failed["error"]["message"] = f"{conflict.code}: {conflict.message}"
                return failed
        try:
            if service is not None and run is not None:
                plan = runner.prepare(
                    decoded.graph_request,
                    graph=run.graph,
                    thread_id=run.thread_id,
                    command=run.command,
                    finish=functools.partial(service.finish, run),
                )
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

    try:
        return await state.background.submit(shell.build("queued", []), scope, job, idempotency)
    except IdempotencyKeyReusedError:
        raise InvalidRequestError(
            "This Idempotency-Key was already used with a different request.",
            code="idempotency_key_reused",
            status_code=422,
        ) from None
