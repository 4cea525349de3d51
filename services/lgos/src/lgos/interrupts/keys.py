"""Checkpoint thread keys: fixed length, derived from a trusted scope, the model and the run."""

from __future__ import annotations

import hashlib
from uuid import UUID


def thread_key(scope: str, model: str, run_id: UUID) -> str:
    digest = hashlib.sha256(f"{len(scope)}:{scope}|{len(model)}:{model}|{run_id.hex}".encode())
    return f"lgos-run-{digest.hexdigest()}"
