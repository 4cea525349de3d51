"""What a graph author declares: ``GraphConfig``, its features, and the registry of graphs.

``ClientSettings`` and the request adapters' signatures live with ``GraphRequest`` in ``request``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from lgos.request import ClientSettings, ContextFactory, RequestToInput

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage
    from langgraph.pregel import Pregel

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class GraphFeature(StrEnum):
    """Optional runtime behaviour a graph opts into; advertised in ``lgos.features``."""

    INTERRUPTS = "interrupts"
    """The graph may pause at LangGraph ``interrupt()``; resumable only through Responses."""
    BACKGROUND = "background"
    """The graph accepts ``background=true`` Responses (polling-only)."""
    CLIENT_EVENTS = "client_events"
    """The graph publishes ``status_event()`` progress: streaming Responses show commentary."""
    FILE_INPUTS = "file_inputs"
    """The graph reads ``input_file`` attachments (Files API ids) from user messages."""
    MCP_TOOLS = "mcp_tools"
    """The graph calls client functions, so clients may attach their gateway's MCP tools."""


MAX_EXAMPLES = 8
MAX_EXAMPLE_LABEL = 60
MAX_EXAMPLE_PROMPT = 500


@dataclass(frozen=True, slots=True)
class GraphExample:
    """One example prompt a UI may offer as a starter: a short ``label`` and the ``prompt`` sent.

    Advertised in ``lgos.examples``; clients show the label and send the prompt as typed text.
    """

    label: str
    prompt: str

    def __post_init__(self) -> None:
        for name, value, limit in (
            ("label", self.label, MAX_EXAMPLE_LABEL),
            ("prompt", self.prompt, MAX_EXAMPLE_PROMPT),
        ):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"GraphExample.{name} must be non-empty text")
            if value != value.strip() or len(value) > limit:
                raise ValueError(
                    f"GraphExample.{name} must have no surrounding whitespace and at most "
                    f"{limit} characters"
                )
            if any(ord(c) < 32 and c != "\n" for c in value) or "\x7f" in value:
                raise ValueError(f"GraphExample.{name} must not contain control characters")
        if "\n" in self.label:
            raise ValueError("GraphExample.label must be one line")

    def to_json(self) -> dict[str, str]:
        return {"label": self.label, "prompt": self.prompt}


def _examples(items: Sequence[GraphExample]) -> tuple[GraphExample, ...]:
    if isinstance(items, (str, bytes)):
        raise ValueError("GraphConfig.examples must be a sequence of GraphExample")
    examples = tuple(items)
    if not all(isinstance(e, GraphExample) for e in examples):
        raise ValueError("GraphConfig.examples must hold GraphExample values")
    if len(examples) > MAX_EXAMPLES:
        raise ValueError(f"GraphConfig.examples holds at most {MAX_EXAMPLES} examples")
    labels = [e.label for e in examples]
    if len(set(labels)) != len(labels):
        raise ValueError("GraphConfig.examples labels must be unique")
    return examples


GraphFactory = Callable[[], "Pregel[Any, Any, Any, Any]"]
OutputToMessage = Callable[[Any], "AIMessage | None"]


@dataclass(frozen=True, kw_only=True)
class GraphConfig:
    """One servable graph and the adapters between OpenAI requests and its own schema.

    ``graph`` is a compiled graph or a zero-argument factory that builds one at app start-up.
    Adapters default to a ``{"messages": [...]}`` state: the request's LangChain messages go in,
    the last ``AIMessage`` of ``state["messages"]`` comes out, and the validated settings become
    the LangGraph runtime context.
    """

    graph: Pregel[Any, Any, Any, Any] | GraphFactory
    description: str
    features: frozenset[GraphFeature] = frozenset()
    client_settings: type[ClientSettings] | None = None
    server_tools: Sequence[str] = ()
    client_tools: Sequence[str] = ()
    examples: Sequence[GraphExample] = ()
    """Example prompts clients may offer as starters (at most eight, unique labels)."""
    request_to_input: RequestToInput | None = None
    context_factory: ContextFactory | None = None
    output_to_message: OutputToMessage | None = None

    def __post_init__(self) -> None:
        if not self.description.strip():
            raise ValueError("GraphConfig.description must not be empty")
        object.__setattr__(self, "features", frozenset(GraphFeature(f) for f in self.features))
        object.__setattr__(self, "examples", _examples(self.examples))
        overlap = set(self.server_tools) & set(self.client_tools)
        if overlap:
            raise ValueError(f"tools cannot be both server and client tools: {sorted(overlap)}")
        if self.client_settings is not None:
            try:
                self.client_settings()
            except ValidationError as exc:
                raise ValueError(
                    f"{self.client_settings.__name__}: every client setting needs a default"
                ) from exc

    def settings_defaults(self) -> dict[str, Any]:
        if self.client_settings is None:
            return {}
        return self.client_settings().model_dump(mode="json")

    def settings_schema(self) -> dict[str, Any]:
        if self.client_settings is None:
            schema: dict[str, Any] = {
                "type": "object",
                "properties": {},
                "additionalProperties": False,
            }
        else:
            schema = self.client_settings.model_json_schema()
        return {"$schema": JSON_SCHEMA_DIALECT, **schema}


def validate_model_id(name: str) -> str:
    """Model ids become URL path segments and gateway names (``lgos/<graph>``)."""
    if not name or not name.strip():
        raise ValueError("a model id must not be empty")
    if name != name.strip() or "/" in name:
        raise ValueError(f"invalid model id {name!r}: no '/' or surrounding whitespace allowed")
    return name


@dataclass
class GraphRegistry(Mapping[str, GraphConfig]):
    """The graphs one LGOS app serves, by model id, in registration order."""

    graphs: dict[str, GraphConfig] = field(default_factory=dict)
    created: int = field(default_factory=lambda: int(time.time()))

    def __post_init__(self) -> None:
        for name in self.graphs:
            validate_model_id(name)

    @classmethod
    def of(
        cls, items: Mapping[str, GraphConfig] | Iterable[tuple[str, GraphConfig]]
    ) -> GraphRegistry:
        registry = cls()
        pairs = items.items() if isinstance(items, Mapping) else items
        for name, config in pairs:
            registry.register(name, config)
        return registry

    def merge(self, *others: GraphRegistry) -> GraphRegistry:
        """A new registry: this one's graphs, then each of ``others``' in order (this one's
        ``created``). A model id registered twice is refused, as ``register`` refuses it."""
        merged = GraphRegistry(graphs=dict(self.graphs), created=self.created)
        for other in others:
            for name, config in other.items():
                merged.register(name, config)
        return merged

    def register(self, name: str, config: GraphConfig) -> None:
        validate_model_id(name)
        if name in self.graphs:
            raise ValueError(f"model id {name!r} is already registered")
        self.graphs[name] = config

    def __getitem__(self, name: str) -> GraphConfig:
        return self.graphs[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.graphs)

    def __len__(self) -> int:
        return len(self.graphs)
