"""Deterministic structured output: JSON that fits a requested ``json_schema``.

Values are filled from the schema and the prompt by fixed rules, so callers can see what reached
the model:

- a string ``enum`` holding the intents ``chat``/``research``/``save``/``research_and_save`` gets
  the latest user message classified by keywords ("search", "find", "look up", and recalling
  "what did we save" or "my notes" ask for research; "remember", "save", "note this" ask for a
  save; both give ``research_and_save``);
- ``markdown`` gets a Markdown note: the title as a heading, then the note text of the first
  user message (what follows its first colon, else all of it) as a sentence or, when a file's
  text is inlined in it (``Attached file NAME (ID):``), that file's key points (its first
  sentences, one per line), each later user message as a revision line, and the stand-in label;
- ``title`` gets ``Key points of NAME`` for an attached file, else the note's subject, never the
  whole note again: its first words (after "the", "that"…) up to the first verb-like word (a
  small list, or a word ending in -s after the first), at most four, capitalised; a note that
  is all subject is titled "Note". Without a colon, a leading "remember (that)" or "save this"
  is the request, not the note;
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
_TITLE_WORDS = 4
KEY_POINTS = 5
POINT_CHARS = 160
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LEADING = frozenset({"a", "an", "the", "that", "this", "these", "those"})
_VERB_WORDS = (
    "is are was were be been am has have had do does did will would shall should can could may "
    "might must need needs happen happens go goes get gets run runs stay stays live lives"
)
_TAIL_WORDS = (
    "on in at of for to from with by about every each after before during until when if "
    "because and or but"
)
_VERBS, _TAIL = frozenset(_VERB_WORDS.split()), frozenset(_TAIL_WORDS.split())
"""A subject ends before a common verb or a word that starts a predicate's tail."""
_REQUEST = re.compile(
    r"^\s*(please\s+)?(remember|save|note\s+(this|that)(\s+down)?|(make|take|keep)\s+a\s+note)"
    r"(\s+(that|this))?\b\s*",
    re.IGNORECASE,
)
"""How a save request without a colon starts ("remember that …"): not part of the note."""


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
    if colon and after.strip():
        return after.strip()
    return (_REQUEST.sub("", request) or request).strip()


def _ends_subject(words: list[str], index: int, taken: int) -> bool:
    word = words[index].lower()
    if word in _VERBS or word in _TAIL or word.isdigit():
        return True
    following = words[index + 1].lower() if index + 1 < len(words) else ""
    # "rotates", "expires": a third-person verb after the subject's first word, unless a
    # verb follows it ("release notes live …").
    return (
        taken > 0
        and word.endswith("s")
        and not word.endswith(("ss", "us", "is"))
        and following not in _VERBS
    )


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
    words = [w.strip(".,;:!?\"'()") for w in note_text(prompt).split()]
    words = [w for w in words if w]
    start = 0
    while start < len(words) - 1 and words[start].lower() in _LEADING:
        start += 1
    subject: list[str] = []
    for index in range(start, len(words)):
        if _ends_subject(words, index, len(subject)) or len(subject) == _TITLE_WORDS:
            break
        subject.append(words[index])
    if not subject or len(subject) == len(words) - start:
        return "Note"  # all subject: the title would only repeat the note
    title = " ".join(subject)
    return title[0].upper() + title[1:]


def note_sentence(prompt: Prompt) -> str:
    """The note text as a sentence: capitalised, ending with a full stop."""
    text = note_text(prompt)
    if not text:
        return ""
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def note_markdown(prompt: Prompt) -> str:
    """The request's text as a sentence, or an attached file's key points when one came."""
    _, files = _request(prompt)
    lines = [f"# {note_title(prompt)}", ""]
    if files:
        for file in files:
            lines += [f"From {file.name} ({file.file_id}):", ""]
            lines += [f"- {point}" for point in key_points(file.text or "")]
            lines.append("")
        lines.pop()
    else:
        lines.append(note_sentence(prompt))
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
