"""The curated public surface: what graph authors and deployers import from ``lgos``."""

from __future__ import annotations

import inspect

import lgos


def test_every_public_name_resolves() -> None:
    for name in lgos.__all__:
        assert getattr(lgos, name) is not None, name


def test_scopes_are_public_and_the_app_default() -> None:
    default = inspect.signature(lgos.create_app).parameters["scope_resolver"].default
    assert default is lgos.shared_scope
    assert lgos.shared_scope(None) == lgos.SHARED_SCOPE  # type: ignore[arg-type]
