"""Element files (shown files, attachments) on local disk, served back to their thread's author.

Chainlit's data layer keeps element rows in PostgreSQL but needs a storage client for the bytes
and ships only cloud ones; without it a reloaded thread shows elements with no file. Bytes live
under ``CHAINLIT_FILES_DIR`` by a digest of their object key (a key never chooses a path), and
``GET /lgos/elements/{key}`` serves them only to the logged-in author of the key's thread.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from chainlit.auth import get_current_user
from chainlit.data import get_data_layer
from chainlit.data.storage_clients.base import BaseStorageClient
from chainlit.server import app
from fastapi import Depends, HTTPException
from fastapi.responses import FileResponse
from fastapi.routing import APIRoute

ROUTE = "/lgos/elements"
INLINE = ("image/png", "image/jpeg", "image/gif", "image/webp")


class DiskStorageClient(BaseStorageClient):
    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def path(self, object_key: str) -> Path:
        return self.root / hashlib.sha256(object_key.encode()).hexdigest()

    async def upload_file(
        self,
        object_key: str,
        data: bytes | str,
        mime: str = "application/octet-stream",
        overwrite: bool = True,
        content_disposition: str | None = None,
    ) -> dict[str, Any]:
        payload = data.encode() if isinstance(data, str) else data
        target = self.path(object_key)

        def write() -> None:
            if target.exists() and not overwrite:
                return
            partial = target.with_suffix(".part")
            partial.write_bytes(payload)
            partial.replace(target)
            target.with_suffix(".json").write_text(json.dumps({"mime": mime}))

        await asyncio.to_thread(write)
        return {"object_key": object_key, "url": await self.get_read_url(object_key)}

    async def delete_file(self, object_key: str) -> bool:
        target = self.path(object_key)
        existed = target.exists()
        target.unlink(missing_ok=True)
        target.with_suffix(".json").unlink(missing_ok=True)
        return existed

    async def get_read_url(self, object_key: str) -> str:
        return f"{ROUTE}/{quote(object_key, safe='/')}"

    async def close(self) -> None:
        return None


def thread_of(object_key: str) -> str | None:
    parts = object_key.split("/")
    return parts[1] if len(parts) >= 4 and parts[0] == "threads" and parts[2] == "files" else None


def install_route(storage: DiskStorageClient) -> None:
    async def element(key: str, user: Any = Depends(get_current_user)) -> FileResponse:  # noqa: B008
        thread_id = thread_of(key)
        data_layer = get_data_layer()
        target = storage.path(key)
        if thread_id is None or data_layer is None or not target.exists():
            raise HTTPException(404, "not found")
        try:
            author = await data_layer.get_thread_author(thread_id)
        except ValueError:
            raise HTTPException(404, "not found") from None
        if user is None or author != user.identifier:
            raise HTTPException(404, "not found")
        meta = json.loads(target.with_suffix(".json").read_text())
        mime = str(meta.get("mime") or "application/octet-stream")
        return FileResponse(
            target,
            media_type=mime if mime in INLINE else "application/octet-stream",
            headers={"X-Content-Type-Options": "nosniff"},
            content_disposition_type="inline" if mime in INLINE else "attachment",
            filename=key.rsplit("/", 1)[-1],
        )

    app.add_api_route(f"{ROUTE}/{{key:path}}", element, methods=["GET"])
    # Chainlit's catch-all frontend route was registered first: ours must come before it.
    route = app.router.routes.pop()
    assert isinstance(route, APIRoute)
    app.router.routes.insert(0, route)
