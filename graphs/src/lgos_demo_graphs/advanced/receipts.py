"""Note receipts in the LangGraph Store: what was approved and where its bytes went.

The Store keeps only the receipt (content digest, filename, file id, index status), never a
second copy of the note. A save consults it first, so retrying an uncertain upload finds the
earlier file instead of uploading the same note twice.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from langgraph.store.base import BaseStore

NAMESPACE = ("advanced-graph", "note-receipts")

ReceiptStatus = Literal["uploading", "uploaded", "completed", "in_progress", "failed"]
"""``uploading``: an upload was started and may or may not have reached the Files service."""


class Receipt(TypedDict):
    digest: str
    filename: str
    file_id: str | None
    status: ReceiptStatus


class Receipts:
    def __init__(self, store: BaseStore) -> None:
        self.store = store

    async def get(self, note_id: str) -> Receipt | None:
        item = await self.store.aget(NAMESPACE, note_id)
        return _receipt(item.value) if item is not None else None

    async def put(self, note_id: str, receipt: Receipt) -> None:
        await self.store.aput(NAMESPACE, note_id, dict(receipt), index=False)


def _receipt(value: dict[str, Any]) -> Receipt:
    return Receipt(
        digest=str(value["digest"]),
        filename=str(value["filename"]),
        file_id=value.get("file_id"),
        status=value["status"],
    )
