"""Ranked retrieval in PostgreSQL: full-text always, blended with pgvector cosine when available.

Full-text matching ORs the query's lexemes (plainto_tsquery would AND them, and a natural question
rarely has every word in one chunk); ``ts_rank_cd`` with normalisation 32 maps rank into [0, 1).
With embeddings, the score is mostly semantic similarity with full-text as a tie-breaker, so exact
term matches still lift a chunk; chunks indexed before embeddings were configured, or by a model
of another dimension, stay findable by their words (comparing vectors of two sizes is an error).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from files_service.db import Pool
from files_service.search.embeddings import vector_literal

SEMANTIC_WEIGHT = 0.8
"""Share of the blended score taken by cosine similarity when embeddings are configured."""

# Expired files leave search at once, like the Files API, before the sweep deletes them.
_LIVE = "(f.expires_at IS NULL OR f.expires_at > extract(epoch FROM now()))"
_QUERY = "replace(plainto_tsquery('english', %(q)s)::text, ' & ', ' | ')::tsquery"

_FULL_TEXT = f"""
SELECT c.file_id, f.filename, c.text, vf.attributes,
       ts_rank_cd(c.tsv, {_QUERY}, 32) AS score
FROM chunks c
JOIN vector_store_files vf USING (vector_store_id, file_id)
JOIN files f ON f.id = c.file_id
WHERE c.vector_store_id = %(store)s AND c.tsv @@ {_QUERY} AND {_LIVE}
ORDER BY score DESC, c.file_id, c.idx
LIMIT %(limit)s
"""

_HYBRID = f"""
SELECT c.file_id, f.filename, c.text, vf.attributes,
       %(w)s * CASE WHEN vector_dims(c.embedding) = %(dims)s
                    THEN greatest(0, 1 - (c.embedding <=> %(v)s::vector)) ELSE 0 END
         + (1 - %(w)s) * ts_rank_cd(c.tsv, {_QUERY}, 32) AS score
FROM chunks c
JOIN vector_store_files vf USING (vector_store_id, file_id)
JOIN files f ON f.id = c.file_id
WHERE c.vector_store_id = %(store)s AND {_LIVE}
  AND (vector_dims(c.embedding) = %(dims)s OR c.tsv @@ {_QUERY})
ORDER BY score DESC, c.file_id, c.idx
LIMIT %(limit)s
"""


@dataclass(frozen=True)
class Hit:
    file_id: str
    filename: str
    score: float
    text: str
    attributes: dict[str, Any]

    def to_object(self) -> dict[str, Any]:
        return {
            "file_id": self.file_id,
            "filename": self.filename,
            "score": self.score,
            "attributes": self.attributes,
            "content": [{"type": "text", "text": self.text}],
        }


async def search(
    pool: Pool,
    store_id: str,
    query: str,
    limit: int,
    *,
    query_vector: list[float] | None = None,
    score_threshold: float = 0.0,
) -> list[Hit]:
    params: dict[str, Any] = {"q": query, "store": store_id, "limit": limit}
    if query_vector is not None:
        params |= {
            "v": vector_literal(query_vector),
            "w": SEMANTIC_WEIGHT,
            "dims": len(query_vector),
        }
    async with pool.connection() as conn:
        cursor = await conn.execute(_HYBRID if query_vector is not None else _FULL_TEXT, params)
        rows = await cursor.fetchall()
    hits = [
        Hit(
            row["file_id"],
            row["filename"],
            round(float(row["score"]), 6),
            row["text"],
            row["attributes"] or {},
        )
        for row in rows
    ]
    return [hit for hit in hits if hit.score >= score_threshold]
