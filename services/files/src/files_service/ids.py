"""Opaque object ids: a prefix and 24 random base62 characters, never derived from user input."""

from __future__ import annotations

import secrets
import string

_ALPHABET = string.ascii_letters + string.digits


def new_id(prefix: str) -> str:
    return prefix + "".join(secrets.choice(_ALPHABET) for _ in range(24))


def file_id() -> str:
    return new_id("file-")


def vector_store_id() -> str:
    return new_id("vs_")
