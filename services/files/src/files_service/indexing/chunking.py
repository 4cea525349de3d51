"""Split text into overlapping chunks measured in tokens.

Tokens are approximated by words and punctuation runs: close enough to model tokens for sizing
chunks, and free of a tokenizer dependency. Chunks are cut back to a sentence or line end when one
lies in the last fifth of the window, so a chunk rarely stops mid-sentence.
"""

from __future__ import annotations

import re
from array import array
from dataclasses import dataclass

_TOKEN = re.compile(r"\w+|[^\w\s]+")
_BREAK = re.compile(r"[.!?]$|\n")

DEFAULT_MAX_TOKENS = 800
DEFAULT_OVERLAP = 400


@dataclass(frozen=True)
class ChunkingStrategy:
    max_tokens: int = DEFAULT_MAX_TOKENS
    overlap: int = DEFAULT_OVERLAP

    def to_object(self) -> dict[str, object]:
        return {
            "type": "static",
            "static": {
                "max_chunk_size_tokens": self.max_tokens,
                "chunk_overlap_tokens": self.overlap,
            },
        }


def parse_strategy(value: object) -> ChunkingStrategy:
    """The ``chunking_strategy`` request field (``auto``, ``static`` or absent), validated."""
    from files_service.errors import InvalidRequestError

    if value is None:
        return ChunkingStrategy()
    if not isinstance(value, dict) or value.get("type") not in ("auto", "static"):
        raise InvalidRequestError(
            "chunking_strategy must be {'type': 'auto'} or {'type': 'static', 'static': {...}}.",
            param="chunking_strategy",
        )
    if value["type"] == "auto":
        return ChunkingStrategy()
    static = value.get("static")
    if not isinstance(static, dict):
        raise InvalidRequestError("static chunking needs 'static'.", param="chunking_strategy")
    size, overlap = static.get("max_chunk_size_tokens"), static.get("chunk_overlap_tokens")
    # bool is an int subclass: `true` is not a token count.
    if not isinstance(size, int) or isinstance(size, bool) or not 100 <= size <= 4096:
        raise InvalidRequestError(
            "max_chunk_size_tokens must be an integer from 100 to 4096.",
            param="chunking_strategy.static.max_chunk_size_tokens",
        )
    if not isinstance(overlap, int) or isinstance(overlap, bool) or not 0 <= overlap <= size // 2:
        raise InvalidRequestError(
            "chunk_overlap_tokens must be an integer from 0 to half of max_chunk_size_tokens.",
            param="chunking_strategy.static.chunk_overlap_tokens",
        )
    return ChunkingStrategy(size, overlap)


def chunk_text(text: str, strategy: ChunkingStrategy = ChunkingStrategy()) -> list[str]:
    # Token offsets in two int64 arrays: a tuple per token costs ~100 bytes, which for a file
    # at the index size limit (tens of millions of tokens) would be gigabytes.
    starts, ends = array("q"), array("q")
    for match in _TOKEN.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    chunks: list[str] = []
    start = 0
    while start < len(starts):
        end = min(start + strategy.max_tokens, len(starts))
        if end < len(starts):
            end = _sentence_end(text, starts, ends, start, end, strategy.max_tokens // 5)
        piece = text[starts[start] : ends[end - 1]].strip()
        if piece:
            chunks.append(piece)
        if end == len(starts):
            break
        start = max(end - strategy.overlap, start + 1)
    return chunks


def _sentence_end(
    text: str, starts: array[int], ends: array[int], start: int, end: int, window: int
) -> int:
    for cut in range(end, max(start + 1, end - window), -1):
        following = text[ends[cut - 1] : starts[cut]] if cut < len(starts) else ""
        if _BREAK.search(text[starts[cut - 1] : ends[cut - 1]]) or "\n" in following:
            return cut
    return end
