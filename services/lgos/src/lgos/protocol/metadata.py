"""OpenAI ``metadata`` limits, the reserved ``lgos_`` prefix and runtime-settings resolution."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from langchain_core.messages import BaseMessage
from pydantic import ValidationError

from lgos.config import GraphConfig
from lgos.errors import InvalidRequestError
from lgos.request import ClientSettings, GraphRequest, Protocol, ToolChoice

MAX_PAIRS = 16
MAX_KEY_CHARS = 64
MAX_VALUE_CHARS = 512
RESERVED_PREFIX = "lgos_"
SETTINGS_KEY = "lgos_settings"
CONVERSATION_KEY = "conversation_id"
SETTINGS_PARAM = f"metadata.{SETTINGS_KEY}"
KNOWN_RESERVED_KEYS = frozenset({SETTINGS_KEY})


@dataclass(frozen=True, slots=True)
class ResolvedMetadata:
    """Client metadata split into what LGOS consumes and what passes through to the graph."""

    passthrough: dict[str, str]
    conversation_id: str | None
    settings: ClientSettings | None

    def graph_request(
        self,
        protocol: Protocol,
        model: str,
        messages: Sequence[BaseMessage],
        *,
        stream: bool,
        tools: Sequence[Mapping[str, Any]],
        tool_choice: ToolChoice | None,
        server_tools: Sequence[str] = (),
        instructions: str | None = None,
    ) -> GraphRequest:
        """The decoded request, with this metadata's share of it."""
        return GraphRequest(
            model=model,
            protocol=protocol,
            messages=messages,
            stream=stream,
            metadata=self.passthrough,
            conversation_id=self.conversation_id,
            settings=self.settings,
            tools=tools,
            tool_choice=tool_choice,
            server_tools=server_tools,
            instructions=instructions,
        )


def check_metadata(metadata: Any) -> dict[str, str]:
    """Enforce OpenAI's metadata shape: at most 16 string pairs of bounded length."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidRequestError("metadata must be an object of string pairs.", param="metadata")
    if len(metadata) > MAX_PAIRS:
        raise InvalidRequestError(
            f"metadata may hold at most {MAX_PAIRS} pairs; got {len(metadata)}.",
            param="metadata",
        )
    for key, value in metadata.items():
        if len(key) > MAX_KEY_CHARS:
            raise InvalidRequestError(
                f"metadata keys may be at most {MAX_KEY_CHARS} characters.", param="metadata"
            )
        if not isinstance(value, str):
            raise InvalidRequestError("metadata values must be strings.", param=f"metadata.{key}")
        if len(value) > MAX_VALUE_CHARS:
            raise InvalidRequestError(
                f"metadata values may be at most {MAX_VALUE_CHARS} characters.",
                param=f"metadata.{key}",
            )
        if key.startswith(RESERVED_PREFIX) and key not in KNOWN_RESERVED_KEYS:
            raise InvalidRequestError(
                f"metadata keys starting with '{RESERVED_PREFIX}' are reserved by LGOS.",
                param=f"metadata.{key}",
            )
    return metadata


def resolve_settings(config: GraphConfig, raw: str | None) -> ClientSettings | None:
    """Shallow-merge ``metadata.lgos_settings`` over the registered defaults, then validate."""
    settings_model = config.client_settings
    if raw is None:
        return settings_model() if settings_model is not None else None
    try:
        supplied = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise InvalidRequestError(
            "metadata.lgos_settings must be a JSON object string.", param=SETTINGS_PARAM
        ) from None
    if not isinstance(supplied, dict):
        raise InvalidRequestError(
            "metadata.lgos_settings must be a JSON object string.", param=SETTINGS_PARAM
        )
    if settings_model is None:
        if supplied:
            raise InvalidRequestError("This model has no client settings.", param=SETTINGS_PARAM)
        return None
    merged = {**config.settings_defaults(), **supplied}
    try:
        # Strict JSON validation accepts exactly what the advertised JSON Schema describes:
        # "yes" is no boolean and "1" no integer, as they would be in lax mode.
        return settings_model.model_validate_json(orjson.dumps(merged), strict=True)
    except ValidationError as exc:
        raise InvalidRequestError(
            f"Invalid runtime settings: {describe_validation_error(exc)}", param=SETTINGS_PARAM
        ) from None


def resolve_metadata(config: GraphConfig, metadata: Mapping[str, str]) -> ResolvedMetadata:
    passthrough = {k: v for k, v in metadata.items() if not k.startswith(RESERVED_PREFIX)}
    return ResolvedMetadata(
        passthrough=passthrough,
        conversation_id=metadata.get(CONVERSATION_KEY),
        settings=resolve_settings(config, metadata.get(SETTINGS_KEY)),
    )


def describe_validation_error(exc: ValidationError) -> str:
    """A short, client-safe summary of a pydantic error (field paths and messages only)."""
    parts = []
    for error in exc.errors(include_url=False, include_input=False):
        location = ".".join(str(p) for p in error["loc"])
        parts.append(f"{location}: {error['msg']}" if location else str(error["msg"]))
    return "; ".join(parts)
