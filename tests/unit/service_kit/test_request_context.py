"""X-Request-Id on every response (answers, errors, unhandled 500s, streams), a hostile id
replaced, the request's fields on every log line it causes, one closing ``request`` line."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
from fastapi import FastAPI, HTTPException
from fastapi.responses import StreamingResponse
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from service_kit import context, tracing
from service_kit.lean_spans import LeanTracer
from service_kit.logs import configure_logging
from service_kit.request_context import install

TRACE = "0af7651916cd43dd8448eb211c80319c"
TRACEPARENT = f"00-{TRACE}-b7ad6b7169203331-01"


@pytest.fixture
def logged() -> Iterator[io.StringIO]:
    """What the JSON log lines of the app and the kit say."""
    loggers = [logging.getLogger("service_kit"), logging.getLogger("kit_app")]
    saved = [(lg, lg.handlers[:], lg.level, lg.propagate) for lg in loggers]
    buffer = io.StringIO()
    for logger in loggers:
        configure_logging("info", logger.name)
        handler = logger.handlers[0]
        assert isinstance(handler, logging.StreamHandler)
        handler.setStream(buffer)
    yield buffer
    for logger, handlers, level, propagate in saved:
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


def app_with_context(seen: list[dict[str, str]], finished: list[tuple[object, ...]]) -> FastAPI:
    app = FastAPI()
    log = logging.getLogger("kit_app")

    @app.get("/items/{item_id}")
    async def item(item_id: str) -> dict[str, str]:
        context.bind(response_id=f"resp_{item_id}", model="m")
        log.info("working")
        # A task started by the request inherits its fields.
        await asyncio.create_task(asyncio.sleep(0))
        seen.append(context.outgoing_headers())
        return {"id": item_id}

    @app.get("/missing")
    async def missing() -> None:
        raise HTTPException(404, "nope")

    @app.get("/broken")
    async def broken() -> None:
        raise RuntimeError("boom")

    @app.get("/stream")
    async def stream() -> StreamingResponse:
        async def chunks() -> AsyncIterator[bytes]:
            yield b"data: 1\n\n"
            seen.append(context.outgoing_headers())
            yield b"data: 2\n\n"

        return StreamingResponse(chunks(), media_type="text/event-stream")

    install(app, on_response=lambda *args: finished.append(args))
    return app


def client(app: FastAPI) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://kit")


def lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


async def test_every_response_carries_an_id_and_a_valid_caller_id_is_kept(
    logged: io.StringIO,
) -> None:
    seen: list[dict[str, str]] = []
    finished: list[tuple[object, ...]] = []
    async with client(app_with_context(seen, finished)) as http:
        kept = await http.get(
            "/items/7?secret=q", headers={"X-Request-Id": "abc-123", "traceparent": TRACEPARENT}
        )
        generated = [
            await http.get(path) for path in ("/items/8", "/missing", "/broken", "/nothing")
        ]
        async with http.stream("GET", "/stream", headers={"X-Request-Id": "s-1"}) as streamed:
            assert streamed.headers["x-request-id"] == "s-1"
            body = await streamed.aread()
    assert body == b"data: 1\n\ndata: 2\n\n"
    assert kept.headers["x-request-id"] == "abc-123"
    assert [r.status_code for r in generated] == [200, 404, 500, 404]
    ids = [r.headers["x-request-id"] for r in generated]
    assert all(i.startswith("req_") and len(i) == 36 for i in ids) and len(set(ids)) == 4
    # Calls made for the request carry its id and the caller's trace context.
    # With a tracer provider set (by any earlier test in the process), the span id passed on is
    # the request's own span, a child in the caller's trace; without one, the caller's as sent.
    assert seen[0]["X-Request-Id"] == "abc-123"
    assert re.fullmatch(f"00-{TRACE}-[0-9a-f]{{16}}-01", seen[0]["traceparent"])
    assert seen[1]["X-Request-Id"] == ids[0] and TRACE not in seen[1].get("traceparent", "")
    assert seen[2]["X-Request-Id"] == "s-1" and TRACE not in seen[2].get("traceparent", "")
    records = lines(logged.getvalue())
    working = [r for r in records if r["event"] == "working"]
    assert working[0]["request_id"] == "abc-123" and working[0]["trace_id"] == TRACE
    assert working[0]["response_id"] == "resp_7" and working[0]["model"] == "m"
    assert "traceparent" not in working[0]
    done = [r for r in records if r["event"] == "request"]
    assert [(r["route"], r["status"]) for r in done] == [
        ("/items/{item_id}", 200),
        ("/items/{item_id}", 200),
        ("/missing", 404),
        ("/broken", 500),
        ("unmatched", 404),
        ("/stream", 200),
    ]
    assert [r["request_id"] for r in done] == ["abc-123", *ids, "s-1"]
    assert all(isinstance(r["duration_ms"], float) for r in done)
    assert "secret=q" not in json.dumps(records)  # the query is never logged
    assert [(m, r, s) for m, r, s, _ in finished][3] == ("GET", "/broken", 500)
    # Nothing leaks into the caller's own context.
    assert context.current() == {}


@pytest.mark.parametrize(
    "hostile",
    [
        "",
        "a" * 129,
        "has space",
        "semi;colon",
        'quote"d',
        "<script>",
        "tab\there",
        "caf\u00e9".encode().decode("latin-1"),
    ],
)
async def test_a_hostile_id_is_replaced_not_echoed(hostile: str) -> None:
    async with client(app_with_context([], [])) as http:
        response = await http.get(
            "/items/1", headers=[(b"X-Request-Id", hostile.encode("latin-1"))]
        )
    assert response.status_code == 200
    assert response.headers["x-request-id"].startswith("req_")
    assert response.headers["x-request-id"] != hostile


async def test_the_longest_id_is_kept() -> None:
    longest = "a.b_c:d+e/f=g-" + "z" * (context.MAX_REQUEST_ID - 14)
    async with client(app_with_context([], [])) as http:
        response = await http.get("/items/1", headers={"X-Request-Id": longest})
    assert response.headers["x-request-id"] == longest


async def test_a_duplicate_id_header_from_the_app_is_not_sent_twice() -> None:
    app = FastAPI()

    @app.get("/")
    async def own() -> StreamingResponse:
        return StreamingResponse(iter([b"x"]), headers={"X-Request-Id": "app-chose"})

    install(app)
    async with client(app) as http:
        response = await http.get("/", headers={"X-Request-Id": "caller"})
    assert response.headers.get_list("x-request-id") == ["caller"]


@pytest.mark.parametrize(
    ("value", "trace"),
    [
        (TRACEPARENT, TRACE),
        (f" {TRACEPARENT} ", TRACE),
        (None, None),
        ("00-" + "0" * 32 + "-b7ad6b7169203331-01", None),
        (f"00-{TRACE}-" + "0" * 16 + "-01", None),
        (f"ff-{TRACE}-b7ad6b7169203331-01", None),
        (f"00-{TRACE.upper()}-b7ad6b7169203331-01", None),
        (f"00-{TRACE}-b7ad6b7169203331", None),
        ("garbage", None),
    ],
)
def test_trace_ids_come_only_from_a_valid_traceparent(value: str | None, trace: str | None) -> None:
    assert context.trace_id_of(value) == trace


def test_bound_and_fresh_restore_what_was_there() -> None:
    with context.fresh(request_id="r1"):
        context.bind(model="m", run_id=None)
        with context.bound(status="completed"):
            assert context.current() == {"request_id": "r1", "model": "m", "status": "completed"}
        assert context.current() == {"request_id": "r1", "model": "m"}
        with context.fresh(response_id="x"):
            assert context.request_id() is None
        assert context.request_id() == "r1"
    assert context.current() == {}


async def test_the_server_span_names_a_failure_by_its_type_and_leaves_no_context_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "tracer", lambda: LeanTracer("test", provider))
    async with client(app_with_context([], [])) as http:
        assert (await http.get("/broken")).status_code == 500
        assert (await http.get("/items/7", headers={"traceparent": TRACEPARENT})).status_code == 200
        # The request's span is no longer current once it has been answered.
        assert not trace.get_current_span().get_span_context().is_valid
    broken, item = exporter.get_finished_spans()
    assert broken.name == "GET /broken" and broken.kind == trace.SpanKind.SERVER
    assert broken.parent is None
    assert broken.status.status_code == trace.StatusCode.ERROR
    assert (broken.attributes or {})["error.type"] == "RuntimeError"
    # The exception's message may hold content: it stays out of the span.
    assert "boom" not in repr(broken.status.description) + repr(dict(broken.attributes or {}))
    assert item.name == "GET /items/{item_id}" and item.status.status_code == trace.StatusCode.UNSET
    assert item.parent is not None and format(item.parent.span_id, "016x") == "b7ad6b7169203331"
    assert format(item.context.trace_id, "032x") == TRACE
    assert "error.type" not in (item.attributes or {})
