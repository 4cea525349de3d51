"""Hot endpoints served past FastAPI's per-request machinery, still documented by FastAPI.

For every request FastAPI resolves the included router's route context, solves the endpoint's
dependencies (a walk over its parameters with a cache of sub-dependencies) and opens two exit
stacks for dependencies with ``yield``. For an endpoint that takes only the request and
dependencies computed from the request, none of that does anything, and on a served short
answer it costs about as much as all of the service's own code. :func:`serve_directly` puts a
plain Starlette route in front of each such :class:`~fastapi.routing.APIRoute`: same path,
methods and endpoint, its dependencies called directly (``app.dependency_overrides``
honoured). The APIRoute stays registered, so the OpenAPI document still describes it, but its
methods never reach it. Exceptions take the same way as before: the app's exception handlers,
through Starlette's handling around the endpoint.

Only shapes that need no solving are taken; anything else (path, query, header, cookie or body
parameters, dependencies with ``yield`` or of their own, synchronous ones, router-level ones)
is refused with :class:`TypeError` when the route is installed, not met at a request.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute, APIRouter
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import Scope

Dependency = Callable[[Request], Awaitable[Any]]

_SPECIAL_PARAMETERS = (
    "websocket_param_name",
    "http_connection_param_name",
    "response_param_name",
    "background_tasks_param_name",
    "security_scopes_param_name",
)


def _refuse(route: APIRoute, why: str) -> TypeError:
    return TypeError(f"{sorted(route.methods or ())} {route.path} cannot be served directly: {why}")


def _has_parameters(dependant: Dependant) -> bool:
    """Whether FastAPI would read anything but the request itself for it."""
    params = (
        dependant.path_params,
        dependant.query_params,
        dependant.header_params,
        dependant.cookie_params,
        dependant.body_params,
    )
    return any(params) or any(getattr(dependant, n) for n in _SPECIAL_PARAMETERS)


def _dependencies(route: APIRoute) -> list[tuple[str, Dependency]]:
    """The endpoint's keyword arguments besides the request: each a dependency's name and the
    async function of the request that computes it."""
    dependant = route.dependant
    if _has_parameters(dependant):
        raise _refuse(route, "it takes parameters other than the request and dependencies")
    found: list[tuple[str, Dependency]] = []
    for dependency in dependant.dependencies:
        call = dependency.call
        if dependency.name is None:
            raise _refuse(route, "it has a dependency whose value it does not take")
        if not inspect.iscoroutinefunction(call):
            raise _refuse(route, f"{dependency.name} is not an async function")
        if (
            _has_parameters(dependency)
            or dependency.dependencies
            or dependency.request_param_name is None
            or len(inspect.signature(call).parameters) != 1
        ):
            raise _refuse(route, f"{dependency.name} needs more than the request")
        found.append((dependency.name, call))
    return found


class DirectRoute(Route):
    """An :class:`APIRoute`'s endpoint as a plain Starlette route (see the module)."""

    def __init__(self, route: APIRoute) -> None:
        if not inspect.iscoroutinefunction(route.endpoint):
            raise _refuse(route, "the endpoint is not an async function")
        self.documented = route
        dependencies = _dependencies(route)
        request_name = route.dependant.request_param_name
        endpoint = route.endpoint

        async def handle(request: Request) -> Response:
            overrides = request.app.dependency_overrides
            arguments = {
                name: await overrides.get(call, call)(request) for name, call in dependencies
            }
            if request_name is not None:
                arguments[request_name] = request
            response = await endpoint(**arguments)
            if not isinstance(response, Response):
                raise TypeError(f"{route.path} answered {type(response).__name__}, not a Response")
            return response

        super().__init__(
            route.path,
            handle,
            methods=sorted(route.methods or ()),
            name=route.name,
            include_in_schema=False,
        )

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        # As APIRoute does: the route names the request's template in logs, metrics and spans.
        match, child_scope = super().matches(scope)
        if match is not Match.NONE:
            child_scope["route"] = self
        return match, child_scope


def serve_directly(app: FastAPI, router: APIRouter, *endpoints: Callable[..., Any]) -> None:
    """Serve these endpoint functions of ``router`` directly, ahead of every other route.

    ``router`` is one the app includes without a prefix (the direct routes take the paths the
    router gives); an endpoint the router does not route is an error.
    """
    direct: list[BaseRoute] = []
    for endpoint in endpoints:
        routes = [r for r in router.routes if isinstance(r, APIRoute) and r.endpoint is endpoint]
        if not routes:
            raise ValueError(f"{endpoint.__qualname__} is not an endpoint of this router")
        direct.extend(DirectRoute(route) for route in routes)
    app.router.routes[:0] = direct
