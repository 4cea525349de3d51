"""Endpoints served directly: answered without FastAPI's route handler, the same answers and
errors, still in the OpenAPI document; shapes that would need FastAPI's solving are refused
when installed."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Annotated, Any

import httpx
import pytest
from fastapi import APIRouter, Depends, FastAPI, Header, Request
from fastapi.responses import JSONResponse
from service_kit.direct_routes import DirectRoute, serve_directly
from starlette.responses import Response


class Teapot(Exception):
    pass


async def get_greeting(request: Request) -> str:
    return str(request.app.state.greeting)


GreetingDep = Annotated[str, Depends(get_greeting)]
router = APIRouter()


@router.post("/v1/greet", response_model=None)
async def greet(request: Request, greeting: GreetingDep) -> Response:
    body = await request.body()
    if body == b"teapot":
        raise Teapot
    route = request.scope["route"]
    served_by = f"{type(route).__name__} {route.path}"
    return JSONResponse({"greeting": greeting, "body": body.decode(), "route": served_by})


@router.post("/v1/plain", response_model=None)
async def plain(request: Request) -> Response:
    return JSONResponse({"route": type(request.scope["route"]).__name__})


@router.get("/v1/untouched")
async def untouched(request: Request) -> dict[str, str]:
    return {"route": type(request.scope["route"]).__name__}


def make_app() -> FastAPI:
    app = FastAPI()
    app.state.greeting = "hello"
    app.include_router(router)

    @app.exception_handler(Teapot)
    async def teapot(request: Request, exc: Teapot) -> Response:
        return JSONResponse({"error": "teapot"}, status_code=418)

    serve_directly(app, router, greet, plain)
    return app


async def call(app: FastAPI, method: str, path: str, body: bytes = b"") -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await client.request(method, path, content=body)


async def test_a_direct_endpoint_answers_with_its_dependencies() -> None:
    answer = await call(make_app(), "POST", "/v1/greet", b"hi")
    assert answer.status_code == 200
    assert answer.json() == {
        "greeting": "hello",
        "body": "hi",
        "route": "DirectRoute /v1/greet",
    }
    assert (await call(make_app(), "POST", "/v1/plain")).json() == {"route": "DirectRoute"}


async def test_other_routes_keep_fastapi() -> None:
    assert (await call(make_app(), "GET", "/v1/untouched")).json() == {"route": "APIRoute"}


async def test_dependency_overrides_are_honoured() -> None:
    app = make_app()

    async def other(request: Request) -> str:
        return "overridden"

    app.dependency_overrides[get_greeting] = other
    assert (await call(app, "POST", "/v1/greet")).json()["greeting"] == "overridden"


async def test_exceptions_reach_the_apps_handlers() -> None:
    answer = await call(make_app(), "POST", "/v1/greet", b"teapot")
    assert (answer.status_code, answer.json()) == (418, {"error": "teapot"})


async def test_another_method_is_still_405() -> None:
    answer = await call(make_app(), "GET", "/v1/greet")
    assert answer.status_code == 405
    assert answer.headers["allow"] == "POST"


def test_the_openapi_document_still_describes_them() -> None:
    paths = make_app().openapi()["paths"]
    assert set(paths) == {"/v1/greet", "/v1/plain", "/v1/untouched"}
    assert "post" in paths["/v1/greet"]


async def test_an_endpoint_answering_no_response_is_an_error() -> None:
    bad = APIRouter()

    @bad.post("/v1/bad", response_model=None)
    async def answers_a_dict(request: Request) -> Any:
        return {"not": "a response"}

    app = FastAPI()
    app.include_router(bad)
    serve_directly(app, bad, answers_a_dict)
    with pytest.raises(TypeError, match="answered dict, not a Response"):
        await call(app, "POST", "/v1/bad")


async def _sync_dependency(request: Request) -> str:
    return ""


def _sync(request: Request) -> str:
    return ""


async def _two_arguments(request: Request, x_name: Annotated[str, Header()]) -> str:
    return x_name


async def _nested(request: Request, greeting: GreetingDep) -> str:
    return greeting


async def _yielding(request: Request) -> AsyncIterator[str]:
    yield ""


def _route_with(signature: Callable[..., Any], **route: Any) -> Callable[[], None]:
    def install() -> None:
        refused = APIRouter()
        refused.post("/v1/refused", response_model=None, **route)(signature)
        app = FastAPI()
        app.include_router(refused)
        serve_directly(app, refused, signature)

    return install


async def query_parameter(request: Request, limit: int) -> Response:
    return Response()


async def sync_dependency(request: Request, value: Annotated[str, Depends(_sync)]) -> Response:
    return Response()


async def header_dependency(
    request: Request, value: Annotated[str, Depends(_two_arguments)]
) -> Response:
    return Response()


async def nested_dependency(request: Request, value: Annotated[str, Depends(_nested)]) -> Response:
    return Response()


async def yielding_dependency(
    request: Request, value: Annotated[str, Depends(_yielding)]
) -> Response:
    return Response()


async def unused_dependency(request: Request) -> Response:
    return Response()


def sync_endpoint(request: Request) -> Response:
    return Response()


@pytest.mark.parametrize(
    ("install", "why"),
    [
        (_route_with(query_parameter), "parameters other than the request"),
        (_route_with(sync_dependency), "value is not an async function"),
        (_route_with(header_dependency), "value needs more than the request"),
        (_route_with(nested_dependency), "value needs more than the request"),
        (_route_with(yielding_dependency), "value is not an async function"),
        (
            _route_with(unused_dependency, dependencies=[Depends(_sync_dependency)]),
            "a dependency whose value it does not take",
        ),
        (_route_with(sync_endpoint), "the endpoint is not an async function"),
    ],
)
def test_shapes_that_need_solving_are_refused_when_installed(
    install: Callable[[], None], why: str
) -> None:
    with pytest.raises(TypeError, match=why):
        install()


def test_an_endpoint_the_router_does_not_route_is_refused() -> None:
    app = make_app()
    with pytest.raises(ValueError, match="not an endpoint of this router"):
        serve_directly(app, router, get_greeting)


def test_the_direct_route_keeps_the_documented_one() -> None:
    app = make_app()
    direct = [r for r in app.router.routes if isinstance(r, DirectRoute)]
    assert [(r.path, r.documented.endpoint) for r in direct] == [
        ("/v1/greet", greet),
        ("/v1/plain", plain),
    ]
