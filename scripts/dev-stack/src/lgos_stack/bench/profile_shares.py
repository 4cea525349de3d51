"""Where a profiled server spends its time, by component: the shares ``bench_serving --profile``
prints from a ``cProfile`` dump of ``lgos serve``.

Each function's own time (``tottime``) goes to the component its file belongs to. C functions
(``{built-in method ...}``) and the standard library's Python functions go to their callers'
component when all their callers are of one (followed up through such functions): a
``dataclasses.replace`` only LangGraph calls is the graph's cost, a ``json.dumps`` only LGOS calls
is LGOS's. Those called from several components are "shared".
"""

from __future__ import annotations

import pstats
import sysconfig
from collections import defaultdict
from pathlib import Path

GRAPH = (
    "/langgraph",
    "/langchain",
    "/langsmith/",
    "/lgos_stack/bench/graphs.py",
    "/lgos/testing.py",
)
#: (component, path fragments), the first match wins: the benchmark graphs and their fake model
#: (in lgos.testing) before LGOS, as they are the graph's cost.
COMPONENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("graph (LangGraph, LangChain, the fake model)", GRAPH),
    ("LGOS", ("/lgos/",)),
    ("service kit (middleware, framing, metrics)", ("/service_kit/", "/http_framing/")),
    ("HTTP server (uvicorn)", ("/uvicorn/", "/h11/", "/httptools/")),
    ("web framework (Starlette, FastAPI)", ("/starlette/", "/fastapi/")),
    ("validation (pydantic)", ("/pydantic",)),
    ("tracing and metrics libraries", ("/opentelemetry/", "/prometheus_client/")),
    ("event loop (asyncio, uvloop)", ("/asyncio/", "/uvloop/", "/selectors.py")),
)
OTHER = "other libraries"
SHARED = "C built-ins and standard library (shared)"
_STDLIB = sysconfig.get_paths()["stdlib"]

Function = tuple[str, int, str]
Entry = tuple[int, int, float, float, dict[Function, object]]


def component(filename: str) -> str | None:
    """The component of a function defined in ``filename``; None for a C or standard library
    function, which takes its callers' component."""
    for name, fragments in COMPONENTS:
        if any(fragment in filename for fragment in fragments):
            return name
    if filename == "~" or filename.startswith(("<", _STDLIB)):
        return None
    return OTHER


def shares(dump: Path) -> list[tuple[str, float]]:
    """Each component's share of the profiled time, largest first."""
    table: dict[Function, Entry] = pstats.Stats(str(dump)).stats  # type: ignore[attr-defined]
    resolved: dict[Function, str] = {}

    def owner(function: Function, seen: frozenset[Function]) -> str:
        if function in resolved:
            return resolved[function]
        found = component(function[0])
        if found is None:
            callers = table[function][4] if function in table else {}
            owners = {owner(c, seen | {function}) for c in callers if c not in seen}
            found = owners.pop() if len(owners) == 1 else SHARED
        resolved[function] = found
        return found

    totals: dict[str, float] = defaultdict(float)
    for function, (_, _, own, _, _) in table.items():
        totals[owner(function, frozenset())] += own
    whole = sum(totals.values()) or 1.0
    return sorted(((name, own / whole) for name, own in totals.items()), key=lambda x: -x[1])


def table(columns: dict[str, list[tuple[str, float]]]) -> list[str]:
    """A Markdown table of components by ``columns`` (each a label and its shares)."""
    names: list[str] = []
    for found in columns.values():
        names += [name for name, _ in found if name not in names]
    rows = [
        "| component | " + " | ".join(columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for name in names:
        cells = [f"{dict(found).get(name, 0.0) * 100:.1f} %" for found in columns.values()]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows
