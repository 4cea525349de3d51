"""A SearXNG offline engine over a local, seeded corpus (no web access on these machines).

Loaded by absolute path from the generated settings; ``corpus_path`` names the JSON corpus.
Documents score by how many query words they contain (title words count double).
"""

from __future__ import annotations

import json
import re
import typing as t

from searx.enginelib import EngineAbout
from searx.result_types import EngineResults

engine_type = "offline"
categories = ["general"]
disabled = False
timeout = 2.0
paging = False
about = EngineAbout(
    results="JSON",
    description="Seeded local corpus for the LGOS demo stack (offline stand-in for web search).",
)

corpus_path = ""
_documents: list[dict[str, str]] = []
_WORD = re.compile(r"[a-z0-9]+")


def init(engine_settings: dict[str, t.Any]) -> bool:
    global _documents
    with open(engine_settings["corpus_path"], encoding="utf-8") as corpus:
        _documents = json.load(corpus)
    return True


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def search(query: str, params: t.Any) -> EngineResults:
    results = EngineResults()
    wanted = _words(query)
    scored = []
    for document in _documents:
        score = 2 * len(wanted & _words(document["title"])) + len(
            wanted & _words(document["content"])
        )
        if score:
            scored.append((score, document))
    scored.sort(key=lambda pair: -pair[0])
    for _, document in scored[:5]:
        results.add(
            results.types.MainResult(
                url=document["url"], title=document["title"], content=document["content"]
            )
        )
    return results
