"""What each component waits for before it starts: the stack starts everything whose needs are
healthy at once, so independent components (the databases, SearXNG, the embeddings, the model,
Open WebUI's slow start) start side by side instead of one after another."""

from __future__ import annotations

from collections.abc import Iterable

NEEDS: dict[str, tuple[str, ...]] = {
    "postgres": (),
    "redis": (),
    "searxng": (),
    "embeddings": (),
    "offline-model": (),
    # Both stand apart: Prometheus scrapes whatever answers; a service exporting before Phoenix
    # is up loses only its first spans.
    "prometheus": (),
    "phoenix": (),
    # The embeddings are needed only to index an upload, never to start: the knowledge store
    # LGOS's setup creates starts empty, and the stack is up only once every part is healthy.
    "files": ("postgres",),
    "mcp-db": ("postgres",),
    # Its setup creates the knowledge store in the Files service; the id it hands on is what
    # the second instance and the worker serve with.
    "lgos": ("postgres", "redis", "searxng", "offline-model", "files"),
    # Both start beside the first instance, once its setup has run (SETUP_NEEDS).
    "lgos-2": ("postgres", "redis", "searxng", "offline-model", "files"),
    "lgos-worker": ("postgres", "redis", "searxng", "offline-model", "files"),
    # Its setup publishes the instances' catalog.
    "gateway": ("lgos", "lgos-2", "mcp-db", "files"),
    "chainlit": ("postgres", "gateway"),
    # Its process needs nothing of ours to start (≈ 40 s, the longest); its ready step installs
    # the pipe with the gateway's catalog (READY_NEEDS).
    "open-webui": (),
}
"""Component -> the components that must be healthy before it starts."""

READY_NEEDS: dict[str, tuple[str, ...]] = {"open-webui": ("gateway",)}
"""Component -> what must be healthy (and ready) before its ready step runs."""

SETUP_NEEDS: dict[str, tuple[str, ...]] = {"lgos-2": ("lgos",), "lgos-worker": ("lgos",)}
"""Component -> the components whose setup must have run (their process started, not yet
healthy) before it starts: lgos's setup hands the knowledge store's id to the other two."""


def needs(name: str, planned: Iterable[str]) -> tuple[str, ...]:
    """What ``name`` waits for among the ``planned`` components (a skipped one is not waited
    for); a component missing from ``NEEDS`` waits for every planned one before it."""
    planned = list(planned)
    if name not in NEEDS:
        return tuple(planned[: planned.index(name)])
    return tuple(n for n in NEEDS[name] if n in planned)


def ready_needs(name: str, planned: Iterable[str]) -> tuple[str, ...]:
    planned = list(planned)
    return tuple(n for n in READY_NEEDS.get(name, ()) if n in planned)


def setup_needs(name: str, planned: Iterable[str]) -> tuple[str, ...]:
    planned = list(planned)
    return tuple(n for n in SETUP_NEEDS.get(name, ()) if n in planned)
