"""The graphs a gateway serves, read from its native catalog (never from LGOS directly).

LiteLLM: ``GET /model/info`` → ``data[].model_info.lgos`` (an object), routed by ``model_name``.
Bifrost: ``GET /v1/models?provider=lgos`` → ``data[].additional_attributes.lgos`` (a JSON string;
its ``/openai/v1/models`` conversion drops the attributes).

A gateway model named ``lgos/<graph>`` whose extension is missing or unreadable is still a graph
(plain text chat works through the standard API) and is marked ``limited``; other entries without
an extension (e.g. the Files service's operator entry) are not graphs and are skipped.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

GatewayType = Literal["litellm", "bifrost"]
"""The value of ``OPENAI_GATEWAY_TYPE``: which native catalog route the reader uses."""

log = logging.getLogger("lgos_ui")

GRAPH_PREFIX = "lgos/"
DEFAULT_GRAPH = "advanced-graph"
"""The graph both UIs open on when the gateway serves it: the showcase."""
BIFROST_PROVIDER = "lgos"


class CatalogError(RuntimeError):
    """The gateway's catalog could not be read (transport failure, status, malformed body)."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


@dataclass(frozen=True, slots=True)
class Example:
    """One of a graph's example prompts (``lgos.examples``): a UI shows ``label``, sends
    ``prompt``."""

    label: str
    prompt: str


@dataclass(frozen=True, slots=True)
class GraphEntry:
    """One graph as a UI offers it."""

    model: str
    """The gateway model name requests use (``lgos/<graph>``)."""
    graph: str
    description: str
    features: frozenset[str] = frozenset()
    server_tools: tuple[str, ...] = ()
    client_tools: tuple[str, ...] = ()
    settings_schema: Mapping[str, Any] = field(default_factory=dict)
    settings_defaults: Mapping[str, Any] = field(default_factory=dict)
    examples: tuple[Example, ...] = ()
    limited: bool = False
    """No readable ``lgos`` extension: offer plain text chat only, and say so."""

    def has(self, feature: str) -> bool:
        return feature in self.features

    @property
    def label(self) -> str:
        return self.graph


LIMITED_NOTICE = (
    "Limited functionality: the gateway publishes no LGOS metadata for this graph, so only "
    "plain text chat is offered (no settings, files, tools, reviews or background runs)."
)


def _strings(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list):
        return ()
    return tuple(v for v in value if isinstance(v, str))


MAX_EXAMPLES = 8
MAX_EXAMPLE_TEXT = 500


def _examples(value: Any) -> tuple[Example, ...]:
    """Readable examples only (text label and prompt), at most eight; others are ignored."""
    if not isinstance(value, list):
        return ()
    examples: list[Example] = []
    for item in value:
        if not isinstance(item, Mapping):
            continue
        label, prompt = item.get("label"), item.get("prompt")
        if isinstance(label, str) and isinstance(prompt, str) and label.strip() and prompt.strip():
            examples.append(
                Example(label.strip()[:MAX_EXAMPLE_TEXT], prompt.strip()[:MAX_EXAMPLE_TEXT])
            )
    return tuple(examples[:MAX_EXAMPLES])


def entry_from_extension(model: str, lgos: Any) -> GraphEntry:
    """A graph entry from the ``lgos`` extension (an object, or ``None`` when absent)."""
    graph = model[len(GRAPH_PREFIX) :] if model.startswith(GRAPH_PREFIX) else model
    if not isinstance(lgos, Mapping):
        return GraphEntry(model=model, graph=graph, description="", limited=True)
    settings = lgos.get("client_settings")
    schema: Mapping[str, Any] = {}
    defaults: Mapping[str, Any] = {}
    if isinstance(settings, Mapping):
        if isinstance(settings.get("json_schema"), Mapping):
            schema = settings["json_schema"]
        if isinstance(settings.get("defaults"), Mapping):
            defaults = settings["defaults"]
    description = lgos.get("description")
    return GraphEntry(
        model=model,
        graph=graph,
        description=description if isinstance(description, str) else "",
        features=frozenset(_strings(lgos.get("features"))),
        server_tools=_strings(lgos.get("server_tools")),
        client_tools=_strings(lgos.get("client_tools")),
        settings_schema=schema,
        settings_defaults=defaults,
        examples=_examples(lgos.get("examples")),
    )


def _graph_or_skip(model: Any, lgos: Any) -> GraphEntry | None:
    if not isinstance(model, str) or not model:
        return None
    if lgos is None and not model.startswith(GRAPH_PREFIX):
        return None
    return entry_from_extension(model, lgos)


def parse_litellm_model_info(payload: Any) -> list[GraphEntry]:
    """Graphs from LiteLLM's ``/model/info`` body, in catalog order, one per model name."""
    entries: dict[str, GraphEntry] = {}
    for item in _data(payload):
        info = item.get("model_info")
        lgos = info.get("lgos") if isinstance(info, Mapping) else None
        entry = _graph_or_skip(item.get("model_name"), lgos)
        if entry is not None:
            entries.setdefault(entry.model, entry)
    return list(entries.values())


def parse_bifrost_models(payload: Any) -> list[GraphEntry]:
    """Graphs from Bifrost's native ``/v1/models`` body; ``additional_attributes.lgos`` is JSON."""
    entries: dict[str, GraphEntry] = {}
    for item in _data(payload):
        attributes = item.get("additional_attributes")
        raw = attributes.get("lgos") if isinstance(attributes, Mapping) else None
        lgos: Any = None
        if isinstance(raw, str):
            try:
                lgos = json.loads(raw)
            except ValueError:
                lgos = "unreadable"  # a graph with a broken extension is still a graph
        model = item.get("id")
        if lgos == "unreadable" and isinstance(model, str):
            entries.setdefault(model, entry_from_extension(model, None))
            continue
        entry = _graph_or_skip(model, lgos)
        if entry is not None:
            entries.setdefault(entry.model, entry)
    return list(entries.values())


def default_entry(
    entries: Sequence[GraphEntry], preferred: str = DEFAULT_GRAPH
) -> GraphEntry | None:
    """The graph a new chat opens on: ``preferred`` when served, else the catalog's first."""
    for entry in entries:
        if entry.graph == preferred:
            return entry
    return entries[0] if entries else None


def _data(payload: Any) -> Sequence[Mapping[str, Any]]:
    if not isinstance(payload, Mapping) or not isinstance(payload.get("data"), list):
        raise CatalogError("the gateway's catalog has no 'data' list")
    return [item for item in payload["data"] if isinstance(item, Mapping)]


def gateway_root(base_url: str) -> str:
    """``http://host:3000/v1`` → ``http://host:3000`` (native routes live beside ``/v1``)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


async def fetch_catalog(
    http: httpx.AsyncClient, base_url: str, api_key: str, gateway_type: GatewayType
) -> list[GraphEntry]:
    """Read the gateway's native catalog; raises :class:`CatalogError` on any failure."""
    root = gateway_root(base_url)
    headers = {"Authorization": f"Bearer {api_key}"}
    if gateway_type == "litellm":
        url, params, parse = f"{root}/model/info", {}, parse_litellm_model_info
    else:
        url, params, parse = (
            f"{root}/v1/models",
            {"provider": BIFROST_PROVIDER},
            parse_bifrost_models,
        )
    try:
        response = await http.get(url, params=params, headers=headers)
    except httpx.HTTPError as exc:
        raise CatalogError(
            f"the gateway's catalog is unreachable: {exc.__class__.__name__}"
        ) from exc
    if response.status_code != 200:
        raise CatalogError(
            f"the gateway's catalog answered {response.status_code}",
            status_code=response.status_code,
        )
    try:
        payload = response.json()
    except ValueError as exc:
        raise CatalogError("the gateway's catalog is not JSON") from exc
    return parse(payload)


class CatalogCache:
    """The catalog, re-read after ``ttl`` seconds or when the gateway changes; on a failed read
    the last good list stays and :attr:`error` says why."""

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self.entries: list[GraphEntry] = []
        self.error: str | None = None
        self._key: tuple[str, str, str] | None = None
        self._fetched = 0.0
        self._lock = asyncio.Lock()

    async def get(
        self,
        base_url: str,
        api_key: str,
        gateway_type: GatewayType,
        http: httpx.AsyncClient | None = None,
    ) -> list[GraphEntry]:
        """The graphs; without ``http`` a short-lived client reads the catalog when it is due."""
        key = (base_url, gateway_type, api_key)
        async with self._lock:
            fresh = self._fetched and time.monotonic() - self._fetched < self.ttl
            if fresh and key == self._key:
                return self.entries
            own = http is None
            client = http or httpx.AsyncClient(timeout=httpx.Timeout(15.0, connect=5.0))
            try:
                self.entries = await fetch_catalog(client, base_url, api_key, gateway_type)
                self.error = None
                self._fetched, self._key = time.monotonic(), key
            except CatalogError as exc:
                log.warning("catalog read failed: %s", exc)
                self.error = str(exc)
            finally:
                if own:
                    await client.aclose()
            return self.entries
