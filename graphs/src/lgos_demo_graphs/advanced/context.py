"""The request-scoped context advanced-graph runs with: the client's tools and tool choice."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from langgraph.runtime import Runtime
from lgos import ClientSettings, GraphRequest

from lgos_demo_graphs.advanced.state import AdvancedState


@dataclass(frozen=True, slots=True)
class AdvancedContext:
    tools: Sequence[Mapping[str, Any]] = ()
    """Client functions (MCP tools arrive as ordinary functions)."""
    tool_choice: Any = None
    server_tools: frozenset[str] = field(default_factory=frozenset)
    """The selected server tools: ``web_search`` when the client offered Web search."""

    @property
    def disabled(self) -> bool:
        """``tool_choice="none"``: no client functions and neither search."""
        return bool(self.tool_choice == "none")

    @property
    def web_search(self) -> bool:
        return "web_search" in self.server_tools and not self.disabled


def advanced_context(request: GraphRequest, settings: ClientSettings | None) -> AdvancedContext:
    return AdvancedContext(
        tuple(request.tools), request.tool_choice, frozenset(request.server_tools)
    )


class AdvancedNode(Protocol):
    """A root-graph node: reads the state, runs with the request's context."""

    def __call__(
        self, state: AdvancedState, *, runtime: Runtime[AdvancedContext]
    ) -> Awaitable[dict[str, Any]]: ...
