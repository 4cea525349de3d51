"""Chunking: sizes, overlap, sentence-friendly cuts, strategy validation."""

from __future__ import annotations

import re

import pytest
from files_service.errors import InvalidRequestError
from files_service.indexing.chunking import ChunkingStrategy, chunk_text, parse_strategy
from hypothesis import given
from hypothesis import strategies as st


def words(n: int) -> str:
    return " ".join(f"w{i}" for i in range(n))


def test_short_text_is_one_chunk() -> None:
    assert chunk_text("Hello there. General Kenobi!") == ["Hello there. General Kenobi!"]


def test_empty_text_has_no_chunks() -> None:
    assert chunk_text("") == [] and chunk_text("   \n ") == []


def test_chunks_respect_size_and_overlap() -> None:
    chunks = chunk_text(words(1000), ChunkingStrategy(max_tokens=100, overlap=20))
    assert all(len(c.split()) <= 100 for c in chunks)
    assert chunks[0].split()[-20:] == chunks[1].split()[:20]
    assert chunks[-1].split()[-1] == "w999"


def test_cuts_prefer_sentence_ends() -> None:
    sentence = "This sentence has exactly eight words in it. "
    chunks = chunk_text(sentence * 40, ChunkingStrategy(max_tokens=100, overlap=0))
    assert all(c.endswith(".") for c in chunks)


@given(st.text(max_size=3000), st.integers(100, 300), st.integers(0, 50))
def test_every_word_lands_in_some_chunk(text: str, size: int, overlap: int) -> None:
    chunks = chunk_text(text, ChunkingStrategy(size, overlap))
    assert set(re.findall(r"\w+", text)) <= set(re.findall(r"\w+", " ".join(chunks)))


def test_strategy_parsing() -> None:
    assert parse_strategy(None) == ChunkingStrategy()
    assert parse_strategy({"type": "auto"}) == ChunkingStrategy()
    static = {
        "type": "static",
        "static": {"max_chunk_size_tokens": 200, "chunk_overlap_tokens": 50},
    }
    assert parse_strategy(static) == ChunkingStrategy(200, 50)
    for bad in (
        {"type": "other"},
        {"type": "static"},
        {"type": "static", "static": {"max_chunk_size_tokens": 99, "chunk_overlap_tokens": 0}},
        {"type": "static", "static": {"max_chunk_size_tokens": 200, "chunk_overlap_tokens": 101}},
        {"type": "static", "static": {"max_chunk_size_tokens": 800, "chunk_overlap_tokens": True}},
        {"type": "static", "static": {"max_chunk_size_tokens": True, "chunk_overlap_tokens": 0}},
    ):
        with pytest.raises(InvalidRequestError):
            parse_strategy(bad)
