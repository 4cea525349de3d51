"""The deterministic answer a person reads: a pure function of what the model was sent.

It never repeats the instructions. It says what it read and quotes the evidence it was given:

- attachments the caller inlined as ``Attached file NAME (ID):`` blocks are named and quoted
  (and a message that asks about an attached file without one is told to attach it); an
  ``Attached image NAME (ID):`` line is paired with the message's next image part, whose type
  and pixel size are said (the stand-in has no vision: it reads the image's header); an
  ``Attached PDF NAME (ID):`` line is paired with the next file part carrying ``file_data``,
  whose name and size are said (the stand-in reads no PDF);
- search results keep their marker: Web lines ``[n] Title URL snippet`` are quoted with their
  exact URL, knowledge lines ``[K#] filename (file id ID): text`` with their label;
- any other tool output is quoted, shortened;
- an instruction line starting ``Tell the user:`` is passed on (a fact the caller wants said);
- with nothing of that, the answer says which path the request took (plain chat, no sources).

Every answer starts with the stand-in's label. ``OFFLINE_MODEL_ECHO=true`` switches to the debug
answer (:func:`offline_model.answer.echo_answer`) for tests that must see what reached the model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from offline_model.answer import LABEL, Prompt, echo_answer
from offline_model.images import Image

TELL = "Tell the user:"
QUOTE_CHARS = 200
TOOL_CHARS = 600
EVIDENCE_LINES = 3
_ATTACHED = re.compile(r"\n*(\[?)Attached (file|image|PDF) ")
_IMAGE_HEAD = re.compile(r"(?P<name>.+?) \((?P<id>[^()\s]+)\):")
_FILE_HEAD = re.compile(r"(?P<name>.+?) \((?P<id>[^()\s]+)\):\n(?P<text>.*)", re.DOTALL)
_WEB = re.compile(r"^\[(?P<n>\d+)\] (?P<title>.*?) ?(?P<url>https?://\S+)(?: (?P<snippet>.*))?$")
_KNOWLEDGE = re.compile(r"^\[(?P<label>K\d+)\] (?P<where>.+? \(file id [^)]+\)): (?P<text>.*)$")
_ASKS_ABOUT_A_FILE = re.compile(
    r"\b(attached|attachment|this file|the file|uploaded)\b", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class Attachment:
    sentence: str
    name: str = ""
    file_id: str = ""
    text: str | None = None
    """The attached file's text, when one was inlined."""


def compose_answer(prompt: Prompt, *, echo: bool = False) -> str:
    """The readable answer; ``echo`` is the debug answer quoting everything that was sent."""
    return echo_answer(prompt) if echo else readable_answer(prompt)


def short(text: str, limit: int = QUOTE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def split_attachments(
    message: str, images: Sequence[Image] = (), documents: Sequence[str] = ()
) -> tuple[str, list[Attachment]]:
    """The typed request, and each inlined attachment as a sentence naming and quoting it (an
    ``Attached image`` or ``Attached PDF`` line is paired with the message's next image or file
    part, described)."""
    pieces = _ATTACHED.split(message)
    request = pieces[0]
    attachments: list[Attachment] = []
    unpaired = list(images)
    files = list(documents)
    # split() with two groups yields: text, bracket, kind, body, bracket, kind, body, ...
    for bracket, kind, body in zip(pieces[1::3], pieces[2::3], pieces[3::3], strict=False):
        if bracket:  # "[Attached file NAME (ID): why it was not read.]"
            what = short(body.strip().rstrip("]").rstrip("."))
            attachments.append(Attachment(f"I could not read the attached file {what}."))
            continue
        if kind == "image":
            attachments.append(_image_sentence(body, unpaired))
            continue
        if kind == "PDF":
            attachments.append(_file_sentence(body, files))
            continue
        head = _FILE_HEAD.match(body)
        if head is None:
            attachments.append(Attachment(f'An attachment came as "{short(body)}".'))
            continue
        text = head["text"].strip()
        quoted = f': "{short(text)}"' if text else ", which is empty"
        sentence = f"I read the attached file {head['name']} ({head['id']}){quoted}."
        attachments.append(Attachment(sentence, head["name"], head["id"], text))
    attachments.extend(Attachment(f"I received {image.describe()}.") for image in unpaired)
    attachments.extend(Attachment(f"I received {file} as file input.") for file in files)
    return request.strip(), attachments


def _file_sentence(body: str, unpaired: list[str]) -> Attachment:
    head = _IMAGE_HEAD.match(body)
    named = f"{head['name']} ({head['id']})" if head else short(body.strip())
    if not unpaired:
        return Attachment(f"The attached PDF {named} did not reach me as a file.")
    return Attachment(f"I received the attached PDF {named} as file input: {unpaired.pop(0)}.")


def _image_sentence(body: str, unpaired: list[Image]) -> Attachment:
    head = _IMAGE_HEAD.match(body)
    named = f"{head['name']} ({head['id']})" if head else short(body.strip())
    if not unpaired:
        return Attachment(f"The attached image {named} did not reach me as an image.")
    image = unpaired.pop(0)
    return Attachment(f"I looked at the attached image {named}: {image.describe()}.")


def quote_evidence(output: str) -> list[str]:
    """One line per result kept (its marker or URL first), at most three per tool output."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    quoted: list[str] = []
    for line in lines:
        web, knowledge = _WEB.match(line), _KNOWLEDGE.match(line)
        if web:
            snippet = f' — "{short(web["snippet"])}"' if web["snippet"] else ""
            quoted.append(f"[{web['n']}] {web['title'].strip()} — {web['url']}{snippet}")
        elif knowledge:
            quoted.append(
                f'[{knowledge["label"]}] {knowledge["where"]}: "{short(knowledge["text"])}"'
            )
    if quoted:
        return quoted[:EVIDENCE_LINES]
    return [f'A tool returned: "{short(compact(output), TOOL_CHARS)}"'] if output.strip() else []


def _unwrap(value: Any) -> Any:
    """JSON that carries JSON in its strings (an MCP result's text) read as one value."""
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return _unwrap(json.loads(value))
        except ValueError:
            return value
    if isinstance(value, dict):
        return {key: _unwrap(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unwrap(item) for item in value]
    return value


def compact(output: str) -> str:
    """A JSON tool output on one line, nested JSON strings unwrapped; other text unchanged."""
    unwrapped = _unwrap(output)
    return output if isinstance(unwrapped, str) else json.dumps(unwrapped, ensure_ascii=False)


def told(instruction: str) -> list[str]:
    """The facts an instruction asks to pass on: the rest of each ``Tell the user:`` line."""
    return [
        line.strip()[len(TELL) :].strip()
        for line in instruction.splitlines()
        if line.strip().startswith(TELL) and line.strip()[len(TELL) :].strip()
    ]


def readable_answer(prompt: Prompt) -> str:
    request, attachments = split_attachments(prompt.latest, prompt.images, prompt.documents)
    lines = [f'{LABEL} You asked: "{short(request)}".']
    for attachment in attachments:
        lines.append(attachment.sentence)
    if not attachments and _ASKS_ABOUT_A_FILE.search(request) and not prompt.tool_outputs:
        lines.append("No file came with this message: attach one and ask again.")
    evidence = [line for output in prompt.tool_outputs for line in quote_evidence(output)]
    if evidence:
        lines.append("From the evidence I was given:")
        lines.extend(f"- {line}" for line in evidence)
    for instruction in prompt.instructions:
        lines.extend(told(instruction))
    if len(lines) == 1:
        lines.append(
            "This is plain chat: no tools and no sources were used. I am a deterministic "
            "stand-in without a language model; connect a real model for a real answer."
        )
    earlier = len(prompt.user) - 1 + len(prompt.assistant)
    if earlier > 0:
        lines.append(f"(I also saw {earlier} earlier messages of this conversation.)")
    return "\n".join(lines)
