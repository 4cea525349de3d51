"""Integration fixtures: a fresh PostgreSQL database per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.shared_state import fresh_database


@pytest.fixture(scope="module")
def postgres_uri() -> Iterator[str]:
    with fresh_database() as uri:
        yield uri
