"""Images Open WebUI sends inline: for a vision model it puts each attached image into the chat
message as an ``image_url`` part holding a ``data:`` URL. The pipe uploads them to the Files
service like any attachment, so the graph reads them as ``input_file`` parts."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_IMAGE_BYTES = 10 * 1024 * 1024
"""The largest decoded image the pipe uploads (checked before decoding, too)."""

IMAGE_SUFFIXES = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
"""The image types a graph is sent as image input."""

IMAGE_PARTS = ("image_url", "input_image")
DATA_URL = re.compile(
    r"data:(?P<mime>[\w.+-]+/[\w.+-]+)(?P<params>(?:;[^,;]*)*?);base64,(?P<data>.*)", re.S
)


class InlineImageError(ValueError):
    """An inline image the pipe will not upload; the message is for the person."""


@dataclass(frozen=True)
class InlineImage:
    name: str
    mime: str
    data: bytes

    @property
    def key(self) -> str:
        """Its key in the chat's uploaded files (the same image is uploaded once)."""
        return "inline:" + hashlib.sha256(self.data).hexdigest()


def image_urls(message: Mapping[str, Any]) -> list[str]:
    """The URLs of a chat message's image parts, in order."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    urls: list[str] = []
    for part in content:
        if not (isinstance(part, Mapping) and part.get("type") in IMAGE_PARTS):
            continue
        value = part.get("image_url")
        url = value.get("url") if isinstance(value, Mapping) else value
        urls.append(url if isinstance(url, str) else "")
    return urls


def decoded_image(url: str, limit: int = MAX_IMAGE_BYTES) -> InlineImage:
    """A ``data:`` URL as the image it holds; anything else raises :class:`InlineImageError`."""
    match = DATA_URL.fullmatch(url.strip())
    if match is None:
        raise InlineImageError("only images sent inline (base64 data URLs) can be attached")
    mime = match["mime"].lower()
    if mime not in IMAGE_SUFFIXES:
        raise InlineImageError(f"{mime} is not a PNG, JPEG, GIF or WebP image")
    encoded = "".join(match["data"].split())
    # Three bytes per four characters: too large is known before anything is decoded.
    if len(encoded) // 4 * 3 > limit + 2:
        raise InlineImageError(f"the image is larger than the {limit // (1024 * 1024)} MB limit")
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise InlineImageError("the image data is not valid base64") from None
    if not data:
        raise InlineImageError("the image is empty")
    if len(data) > limit:
        raise InlineImageError(f"the image is larger than the {limit // (1024 * 1024)} MB limit")
    digest = hashlib.sha256(data).hexdigest()[:12]
    return InlineImage(f"image-{digest}.{IMAGE_SUFFIXES[mime]}", mime, data)


def inline_images(
    messages: Sequence[Mapping[str, Any]], limit: int = MAX_IMAGE_BYTES
) -> list[InlineImage]:
    """The images of the latest user message (earlier ones were uploaded with their turn)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return [decoded_image(url, limit) for url in image_urls(message)]
    return []
