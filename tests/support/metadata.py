"""Request metadata as clients send it to graphs."""

from __future__ import annotations

import json
from typing import Any


def lgos_settings(**values: Any) -> dict[str, str]:
    """Metadata carrying a graph's client settings (the JSON ``lgos_settings`` key)."""
    return {"lgos_settings": json.dumps(values)}
