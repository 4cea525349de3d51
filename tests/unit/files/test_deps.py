"""The Files service's dependencies are async, as LGOS's are: none costs a thread hop."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from files_service.routes import files, vector_stores


def dependencies(dependant: Dependant) -> Iterator[Any]:
    for sub in dependant.dependencies:
        yield sub.call
        yield from dependencies(sub)


def test_every_route_dependency_is_a_coroutine_function() -> None:
    calls = {
        call
        for router in (files.router, vector_stores.router)
        for route in router.routes
        if isinstance(route, APIRoute)
        for call in dependencies(route.dependant)
    }
    assert {call.__name__ for call in calls} >= {
        "get_state",
        "get_pool",
        "get_storage",
        "require_key",
    }
    assert [call.__name__ for call in calls if not inspect.iscoroutinefunction(call)] == []
