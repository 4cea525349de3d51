"""The small knowledge interface advanced-graph depends on: search, upload, index, attachments.

``OpenAIKnowledge`` (``openai_knowledge``) implements it over OpenAI-compatible Files and
vector-store endpoints; any other implementation can replace it without touching the graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

IndexStatus = Literal["completed", "in_progress", "failed"]
"""Where a stored note's indexing stands: ``completed`` means later searches can find it."""


class KnowledgeUnavailableError(RuntimeError):
    """The Files or vector-store service failed or did not answer (a transport failure, a 5xx).

    Raised instead of the client library's own errors, so the graph can retry an uncertain
    write without knowing which library made it.
    """


@dataclass(frozen=True, slots=True)
class KnowledgeHit:
    file_id: str
    filename: str
    text: str
    score: float


@dataclass(frozen=True, slots=True)
class StoredFile:
    """An attachment as the Files service holds it."""

    file_id: str
    filename: str
    size: int
    data: bytes | None
    """The bytes, or None when ``size`` is over the limit the reader was given (not fetched)."""


class Knowledge(Protocol):
    """Shared, reviewed knowledge: where approved notes live and research looks."""

    async def search(self, query: str, limit: int) -> list[KnowledgeHit]: ...

    async def find_upload(self, filename: str, digest: str) -> str | None:
        """The id of an earlier upload of exactly these bytes under this name, if any."""
        ...

    async def upload(self, filename: str, content: bytes) -> str:
        """Store the bytes; returns the new file id."""
        ...

    async def index(self, file_id: str, wait_seconds: float) -> IndexStatus:
        """Attach the file to the knowledge store; wait up to ``wait_seconds`` for its indexing."""
        ...


class FileReader(Protocol):
    """Resolves a user's ``input_file`` attachment by its Files API id."""

    async def read(self, file_id: str, max_bytes: int) -> StoredFile:
        """The file's name and size, and its bytes unless there are more than ``max_bytes``."""
        ...
