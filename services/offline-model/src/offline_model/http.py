"""Small HTTP helpers shared by the two model APIs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any


def truncate(tokens: list[str], limit: Any) -> tuple[list[str], bool]:
    """Cap the answer at ``limit`` tokens, as a provider's max-tokens setting does."""
    if isinstance(limit, int) and 0 < limit < len(tokens):
        return tokens[:limit], True
    return tokens, False


async def paced(tokens: list[str], delay: float) -> AsyncIterator[str]:
    for token in tokens:
        if delay:
            await asyncio.sleep(delay)
        yield token
