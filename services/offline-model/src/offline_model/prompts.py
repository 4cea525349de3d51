"""What the model was sent, read from either API's request body."""

from __future__ import annotations

from typing import Any

from offline_model.answer import Prompt
from offline_model.documents import describe_file, file_data_part
from offline_model.images import Image, image_of


def _image_url(part: dict[str, Any]) -> str | None:
    """The URL of an image part: Responses ``input_image`` or Chat ``image_url``."""
    if part.get("type") == "input_image" and isinstance(part.get("image_url"), str):
        return str(part["image_url"])
    nested = part.get("image_url") if part.get("type") == "image_url" else None
    if isinstance(nested, dict) and isinstance(nested.get("url"), str):
        return str(nested["url"])
    return None


def _text_of(
    content: Any,
    files: list[str],
    images: list[Image] | None = None,
    documents: list[str] | None = None,
) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        if isinstance(part.get("output"), str):
            texts.append(part["output"])
        url = _image_url(part)
        if url is not None and images is not None:
            images.append(image_of(url))
        carried = file_data_part(part)
        if carried is not None and documents is not None:
            documents.append(describe_file(carried))
        file = part.get("file") if part.get("type") == "file" else part
        if isinstance(file, dict) and isinstance(file.get("file_id"), str):
            files.append(file["file_id"])
    return "".join(texts)


def _add_message(prompt: Prompt, message: dict[str, Any]) -> None:
    """File one message's text under its role (Chat messages and Responses message items)."""
    by_role = {
        "system": prompt.instructions,
        "developer": prompt.instructions,
        "user": prompt.user,
        "assistant": prompt.assistant,
        "tool": prompt.tool_outputs,
    }
    role = str(message.get("role"))
    texts = by_role.get(role)
    if texts is None:
        return
    if role == "user":
        # The latest user message's images and files are the ones answered.
        prompt.images, prompt.documents = [], []
        content = message.get("content")
        texts.append(_text_of(content, prompt.files, prompt.images, prompt.documents))
    else:
        texts.append(_text_of(message.get("content"), prompt.files))


def chat_prompt(messages: list[dict[str, Any]]) -> Prompt:
    prompt = Prompt()
    for message in messages:
        _add_message(prompt, message)
    prompt.ends_with_tool_output = bool(messages) and messages[-1].get("role") == "tool"
    return prompt


def responses_prompt(body: dict[str, Any]) -> Prompt:
    prompt = Prompt()
    if isinstance(body.get("instructions"), str):
        prompt.instructions.append(body["instructions"])
    raw = body.get("input")
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw or []
    for item in items:
        kind = item.get("type", "message")
        if kind in ("function_call_output", "custom_tool_call_output"):
            prompt.tool_outputs.append(_text_of(item.get("output"), prompt.files))
        elif kind == "message":
            _add_message(prompt, item)
    last = items[-1].get("type") if items else None
    prompt.ends_with_tool_output = last in ("function_call_output", "custom_tool_call_output")
    return prompt


def input_tokens(prompt: Prompt) -> list[str]:
    return [*prompt.instructions, *prompt.user, *prompt.assistant, *prompt.tool_outputs]
