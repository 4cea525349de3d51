"""Deterministic structured output: JSON that fits a requested ``json_schema``.

Values are filled from the schema and the prompt by fixed rules, so callers can see what reached
the model:

- a string ``enum`` holding the intents ``chat``/``research``/``save``/``research_and_save`` gets
  the latest user message classified by keywords ("search", "find", "look up", and recalling
  "what did we save" or "my notes" ask for research; "remember", "save", "note this" ask for a
  save; both give ``research_and_save``);
- ``markdown`` gets a Markdown note: a title, the note text of the first user message (what
  follows its first colon, else all of it) or, when a file's text is inlined in it
  (``Attached file NAME (ID):``), that file's key points (its first sentences, one per line),
  each later user message as a revision line, and the stand-in label;
- ``title`` gets the first words of that note text, or ``Key points of NAME``;
- any other enum gets its first value, strings the latest user message, numbers 0, booleans
  false, arrays [], objects their properties filled the same way.
"""

from __future__ import annotations

import re
from typing import Any

from offline_model.answer import LABEL, Prompt
from offline_model.compose import Attachment, short, split_attachments

INTENTS = frozenset({"chat", "research", "save", "research_and_save"})
_RESEARCH = re.compile(r"\b(search|find|look\s+(it\s+)?up|lookup|research)\b", re.IGNORECASE)
_SAVE = re.compile(
    r"\b(remember|save|note\s+(this|that|down)|(make|take|keep)\s+a\s+note)\b", re.IGNORECASE
)
_RECALL = re.compile(
    r"\b(what|which|where)\s+(did|have)\s+(we|i)\s+(save|saved|note|noted)\b"
    r"|\b(did|have)\s+(we|i)\s+(save|saved)\b|\bsaved\s+notes?\b|\b(my|our)\s+notes\b",
    re.IGNORECASE,
)
_TITLE_WORDS = 8
KEY_POINTS = 5
POINT_CHARS = 160
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def classify(text: str) -> str:
    """Recalling what was saved ("what did we save", "my notes") is research, not a save."""
    recall = bool(_RECALL.search(text))
    research = recall or bool(_RESEARCH.search(text))
    save = bool(_SAVE.search(_RECALL.sub(" ", text)))
    if research and save:
        return "research_and_save"
    if save:
        return "save"
    return "research" if research else "chat"


def _request(prompt: Prompt) -> tuple[str, list[Attachment]]:
    """The first user message (the save request) without its inlined attachments, and those."""
    request, attachments = split_attachments(prompt.user[0] if prompt.user else "")
    return request, [a for a in attachments if a.text]


def note_text(prompt: Prompt) -> str:
    request, _ = _request(prompt)
    _, colon, after = request.partition(":")
    return (after if colon and after.strip() else request).strip()


def key_points(text: str) -> list[str]:
    """The first sentences of a text, one per point: headings and list marks dropped."""
    points: list[str] = []
    for line in text.splitlines():
        line = line.strip().lstrip("#*->• ").strip()
        points.extend(part for part in _SENTENCE_END.split(line) if part.strip())
        if len(points) >= KEY_POINTS:
            break
    return [short(point, POINT_CHARS) for point in points[:KEY_POINTS]]


def note_title(prompt: Prompt) -> str:
    _, files = _request(prompt)
    if files:
        return f"Key points of {files[0].name}"
    words = note_text(prompt).split()
    title = " ".join(words[:_TITLE_WORDS]).rstrip(".,;:!?")
    return title or "Note"


def note_markdown(prompt: Prompt) -> str:
    """The request's text, or an attached file's key points when a file came with it."""
    _, files = _request(prompt)
    lines = [f"# {note_title(prompt)}", ""]
    if files:
        for file in files:
            lines += [f"From {file.name} ({file.file_id}):", ""]
            lines += [f"- {point}" for point in key_points(file.text or "")]
            lines.append("")
        lines.pop()
    else:
        lines.append(note_text(prompt))
    revisions = [text.strip() for text in prompt.user[1:] if text.strip()]
    if revisions:
        lines += ["", *(f"- Revision: {text}" for text in revisions)]
    lines += ["", f"_{LABEL}_", ""]
    return "\n".join(lines)


def _fill(schema: Any, prompt: Prompt, name: str = "") -> Any:
    if not isinstance(schema, dict):
        return None
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        if set(enum) >= INTENTS:
            return classify(prompt.latest)
        return enum[0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties") or {}
        return {key: _fill(value, prompt, key) for key, value in properties.items()}
    if kind == "array":
        return []
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return 0
    if name == "markdown":
        return note_markdown(prompt)
    if name == "title":
        return note_title(prompt)
    if "anyOf" in schema:
        return _fill(next(iter(schema["anyOf"]), None), prompt, name)
    return prompt.latest


def json_schema_of(body: dict[str, Any]) -> dict[str, Any] | None:
    """The schema a Responses request's ``text.format`` asks for, if it is ``json_schema``."""
    text = body.get("text")
    form = text.get("format") if isinstance(text, dict) else None
    if isinstance(form, dict) and form.get("type") == "json_schema":
        schema = form.get("schema")
        return schema if isinstance(schema, dict) else {}
    return None


def structured_answer(schema: dict[str, Any], prompt: Prompt) -> Any:
    return _fill(schema, prompt)
