"""Client for an OpenAI-compatible ``/embeddings`` endpoint (MiniLM locally, or any provider)."""

from __future__ import annotations

import httpx
from service_kit.context import inject_httpx

from files_service.settings import FilesSettings


class EmbeddingsError(Exception):
    pass


class EmbeddingsClient:
    def __init__(self, settings: FilesSettings, transport: httpx.AsyncBaseTransport | None = None):
        assert settings.embeddings_url is not None
        headers = {}
        if settings.embeddings_api_key is not None:
            headers["Authorization"] = f"Bearer {settings.embeddings_api_key.get_secret_value()}"
        self.model = settings.embeddings_model
        self.batch_size = settings.embeddings_batch_size
        self.http = httpx.AsyncClient(
            base_url=settings.embeddings_url.rstrip("/") + "/",
            headers=headers,
            timeout=settings.embeddings_timeout,
            transport=transport,
            event_hooks={"request": [inject_httpx]},
        )

    async def embed(self, texts: list[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            vectors.extend(await self._batch(texts[start : start + self.batch_size]))
        return vectors

    async def _batch(self, texts: list[str]) -> list[list[float]]:
        try:
            response = await self.http.post(
                "embeddings", json={"model": self.model, "input": texts}
            )
            response.raise_for_status()
            data = sorted(response.json()["data"], key=lambda item: item["index"])
            vectors = [[float(x) for x in item["embedding"]] for item in data]
        except (httpx.HTTPError, KeyError, TypeError, ValueError) as error:
            raise EmbeddingsError(f"embeddings endpoint failed: {error!r}") from error
        if len(vectors) != len(texts):
            raise EmbeddingsError(f"asked for {len(texts)} embeddings, got {len(vectors)}")
        return vectors

    async def aclose(self) -> None:
        await self.http.aclose()


def vector_literal(vector: list[float]) -> str:
    """pgvector's text form, so no client-side adapter is needed."""
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"
