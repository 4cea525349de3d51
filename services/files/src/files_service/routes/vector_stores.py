"""The vector-store subset ``advanced-graph`` uses: stores, attached files, search."""

from __future__ import annotations

import logging
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field
from service_kit.responses import JSONResponse
from starlette.responses import Response

from files_service import file_records, ids, vector_records
from files_service.deps import PoolDep, StateDep, require_key
from files_service.errors import InvalidRequestError, NotFoundError, UpstreamError
from files_service.indexing.chunking import parse_strategy
from files_service.pagination import Order, PageRequest
from files_service.search import ranking
from files_service.search.embeddings import EmbeddingsError

logger = logging.getLogger("files_service.vector_stores")

router = APIRouter(
    prefix="/v1/vector_stores", tags=["vector stores"], dependencies=[Depends(require_key)]
)

Attributes = dict[str, str | float | bool]


class Body(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ExpiresAfter(Body):
    anchor: Literal["last_active_at"]
    days: int = Field(ge=1, le=365)


class CreateStore(Body):
    name: str = Field(default="", max_length=256)
    metadata: dict[str, str] | None = Field(default=None, max_length=16)
    file_ids: list[str] = Field(default_factory=list, max_length=500)
    chunking_strategy: dict[str, Any] | None = None
    expires_after: ExpiresAfter | None = None


class AttachFile(Body):
    file_id: str
    attributes: Attributes | None = Field(default=None, max_length=16)
    chunking_strategy: dict[str, Any] | None = None


class RankingOptions(Body):
    ranker: Literal["none", "auto", "default-2024-11-15"] = "auto"
    score_threshold: float = Field(default=0.0, ge=0, le=1)


MAX_QUERY_CHARS = 4096
"""Search text longer than this is not a query (and overflows PostgreSQL's tsquery limits)."""


class Search(Body):
    query: str | list[str]
    max_num_results: int = Field(default=10, ge=1, le=50)
    filters: dict[str, Any] | None = None
    ranking_options: RankingOptions | None = None
    rewrite_query: bool = False


async def _store(pool: PoolDep, store_id: str) -> dict[str, Any]:
    store = await vector_records.get_store(pool, store_id)
    if store is None:
        raise NotFoundError("vector store", store_id, "vector_store_id")
    return store


async def _usable_store(pool: PoolDep, store_id: str) -> dict[str, Any]:
    """An expired store can still be read and deleted, but not searched or added to (using it
    would also renew ``last_active_at`` and bring it back)."""
    store = await _store(pool, store_id)
    if store["status"] == "expired":
        raise InvalidRequestError(
            f"Vector store '{store_id}' has expired.",
            param="vector_store_id",
            code="vector_store_expired",
        )
    return store


async def _attach(
    state: StateDep,
    store_id: str,
    file_id: str,
    strategy_field: dict[str, Any] | None,
    attributes: Attributes | None,
) -> dict[str, Any]:
    strategy = parse_strategy(strategy_field)
    if await file_records.get(state.pool, file_id) is None:
        raise NotFoundError("file", file_id, "file_id")
    result = await vector_records.attach(
        state.pool,
        store_id,
        file_id,
        strategy.to_object(),
        attributes,
        state.settings.indexing_timeout,
    )
    if result is None:
        raise NotFoundError("file", file_id, "file_id")
    attached, new = result
    if new:
        state.indexer.schedule(store_id, file_id, strategy)
    return attached


@router.post("")
async def create_store(state: StateDep, body: CreateStore) -> Response:
    parse_strategy(body.chunking_strategy)  # reject a bad strategy before creating anything
    for file_id in body.file_ids:
        if await file_records.get(state.pool, file_id) is None:
            raise NotFoundError("file", file_id, "file_ids")
    store_id = ids.vector_store_id()
    days = body.expires_after.days if body.expires_after else None
    await vector_records.create_store(state.pool, store_id, body.name, body.metadata, days)
    for file_id in body.file_ids:
        await _attach(state, store_id, file_id, body.chunking_strategy, None)
    return JSONResponse(await _store(state.pool, store_id))


@router.get("")
async def list_stores(
    pool: PoolDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    order: Order = "desc",
    after: str | None = None,
    before: str | None = None,
) -> Response:
    page = PageRequest(limit=limit, order=order, after=after, before=before)
    return JSONResponse(await vector_records.list_stores(pool, page))


@router.get("/{vector_store_id}")
async def retrieve_store(pool: PoolDep, vector_store_id: str) -> Response:
    return JSONResponse(await _store(pool, vector_store_id))


@router.delete("/{vector_store_id}")
async def delete_store(pool: PoolDep, vector_store_id: str) -> Response:
    if not await vector_records.delete_store(pool, vector_store_id):
        raise NotFoundError("vector store", vector_store_id, "vector_store_id")
    return JSONResponse({"id": vector_store_id, "object": "vector_store.deleted", "deleted": True})


@router.post("/{vector_store_id}/files")
async def attach_file(state: StateDep, vector_store_id: str, body: AttachFile) -> Response:
    await _usable_store(state.pool, vector_store_id)
    attached = await _attach(
        state, vector_store_id, body.file_id, body.chunking_strategy, body.attributes
    )
    await vector_records.touch_store(state.pool, vector_store_id)
    return JSONResponse(attached)


@router.get("/{vector_store_id}/files")
async def list_store_files(
    pool: PoolDep,
    vector_store_id: str,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    order: Order = "desc",
    after: str | None = None,
    before: str | None = None,
    filter: Literal["in_progress", "completed", "failed", "cancelled"] | None = None,
) -> Response:
    await _store(pool, vector_store_id)
    page = PageRequest(limit=limit, order=order, after=after, before=before)
    return JSONResponse(await vector_records.list_files(pool, vector_store_id, page, filter))


@router.get("/{vector_store_id}/files/{file_id}")
async def retrieve_store_file(pool: PoolDep, vector_store_id: str, file_id: str) -> Response:
    await _store(pool, vector_store_id)
    attached = await vector_records.get_file(pool, vector_store_id, file_id)
    if attached is None:
        raise NotFoundError("vector store file", file_id, "file_id")
    return JSONResponse(attached)


@router.delete("/{vector_store_id}/files/{file_id}")
async def detach_file(pool: PoolDep, vector_store_id: str, file_id: str) -> Response:
    """Removes the file from the store and its chunks from search; the file itself stays."""
    await _store(pool, vector_store_id)
    if not await vector_records.detach(pool, vector_store_id, file_id):
        raise NotFoundError("vector store file", file_id, "file_id")
    return JSONResponse({"id": file_id, "object": "vector_store.file.deleted", "deleted": True})


@router.post("/{vector_store_id}/search")
async def search(state: StateDep, vector_store_id: str, body: Search) -> Response:
    await _usable_store(state.pool, vector_store_id)
    if body.filters is not None:
        raise InvalidRequestError(
            "Attribute filters are not supported by this Files service.",
            param="filters",
            code="unsupported_parameter",
        )
    queries = [body.query] if isinstance(body.query, str) else body.query
    text = " ".join(q for q in queries if q.strip())
    if not text:
        raise InvalidRequestError("'query' must not be empty.", param="query")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidRequestError(
            f"'query' must be at most {MAX_QUERY_CHARS} characters.", param="query"
        )
    vector = None
    if state.embeddings is not None:
        try:
            vector = (await state.embeddings.embed([text]))[0]
        except EmbeddingsError as error:
            logger.error("query embedding failed", exc_info=error)
            raise UpstreamError("The embeddings endpoint failed; try again later.") from error
    threshold = body.ranking_options.score_threshold if body.ranking_options else 0.0
    hits = await ranking.search(
        state.pool,
        vector_store_id,
        text,
        body.max_num_results,
        query_vector=vector,
        score_threshold=threshold,
    )
    await vector_records.touch_store(state.pool, vector_store_id)
    return JSONResponse(
        {
            "object": "vector_store.search_results.page",
            "search_query": queries,
            "data": [hit.to_object() for hit in hits],
            "has_more": False,
            "next_page": None,
        }
    )
