"""``DEMO_API_*`` settings of advanced-graph: the Files service, the knowledge vector store and
the limits on reading an attachment.

The model and the web-search backend use the settings every demo graph shares
(``lgos_demo_graphs.model``, ``lgos_demo_graphs.web_search``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class KnowledgeSettings(BaseSettings):
    """Where attachments are read and reviewed notes are stored and searched."""

    model_config = SettingsConfigDict(env_prefix="DEMO_API_", extra="ignore", env_ignore_empty=True)

    files_base_url: str = Field(
        default="http://127.0.0.1:3006/v1",
        description="OpenAI-compatible Files API: attachments are read and notes uploaded here.",
    )
    files_api_key: SecretStr | None = Field(
        default=None,
        description="Bearer key of the Files API (the Files service's FILES_API_KEYS).",
    )
    vector_store_base_url: str | None = Field(
        default=None, description="OpenAI-compatible vector-store API; empty: files_base_url."
    )
    vector_store_api_key: SecretStr | None = Field(
        default=None, description="Its bearer key; empty: files_api_key."
    )
    vector_store_id: str | None = Field(
        default=None,
        description="The knowledge vector store; unset (and no id file): no knowledge.",
    )
    vector_store_id_file: Path | None = Field(
        default=None,
        description="A file holding the id, written by the one-shot knowledge job (compose).",
    )
    vector_store_name: str = Field(
        default="lgos-knowledge",
        description="The name the one-shot knowledge job creates (or finds) the store under.",
    )
    knowledge_max_results: int = Field(default=4, ge=1, le=50)
    knowledge_index_timeout: float = Field(
        default=20.0, gt=0, description="Seconds a save waits for its note to be indexed."
    )
    files_timeout: float = Field(default=30.0, gt=0)
    max_attachment_bytes: int = Field(
        default=10 * 1024 * 1024,
        ge=1,
        le=512 * 1024 * 1024,
        description="Largest attachment read, in bytes; a larger one is named as too large.",
    )
    max_attachment_pages: int = Field(
        default=30,
        ge=1,
        le=2000,
        description="PDF pages read from one attachment; the answer says when pages were left.",
    )
    max_attachment_chars: int = Field(
        default=20_000,
        ge=1,
        le=1_000_000,
        description="Characters of one attachment's text the model is sent; more are left out.",
    )

    pdf_input: Literal["text", "file"] = Field(
        default="text",
        description=(
            "How the answer model is sent a PDF: text (its extracted text) or file (the PDF "
            "itself as file input, for a model that accepts PDFs; within the page limit)."
        ),
    )

    def resolved_vector_store_id(self) -> str | None:
        """The configured id, else the id file's content (read when needed: the job may run
        after this process started)."""
        if self.vector_store_id:
            return self.vector_store_id
        if self.vector_store_id_file is not None:
            try:
                return self.vector_store_id_file.read_text().strip() or None
            except OSError:
                return None
        return None

    @property
    def store_base_url(self) -> str:
        return self.vector_store_base_url or self.files_base_url

    @property
    def store_api_key(self) -> SecretStr | None:
        return self.vector_store_api_key or self.files_api_key
