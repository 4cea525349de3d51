"""OTLP protobuf encoding of finished spans, written straight to the wire format.

OpenTelemetry's own encoder builds a protobuf message object for every span, attribute and value
(≈ 35-50 µs a span here), in the exporter's thread, which shares the serving process's
interpreter lock: a traced request paid for its spans' encoding twice over. This encoder writes
the same ``ExportTraceServiceRequest`` bytes directly (≈ 2.5 µs for a span of this process's
own tracer, read from its fields in one loop), remembering the bytes of attribute keys and of
the attributes that repeat on every span (operation and model names, routes, status codes).
Its output parses to the message OpenTelemetry's encoder builds; the tests hold the two side by
side.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanContext, SpanKind

from service_kit.lean_spans import UNSET_STATUS, LeanSpan

_SMALL = [bytes((n,)) for n in range(128)]
_FIXED64 = struct.Struct("<Q").pack
_FIXED32 = struct.Struct("<I").pack
_DOUBLE = struct.Struct("<d").pack
_INT64_WRAP = 1 << 64
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

# Span kinds: OTLP numbers them one above the API's enum (0 is "unspecified").
_KIND = {kind: _SMALL[kind.value + 1] for kind in SpanKind}
_KIND_FIELD = {kind: b"\x30" + _SMALL[kind.value + 1] for kind in SpanKind}
_HAS_IS_REMOTE, _IS_REMOTE = 0x100, 0x200

_KEY_CACHE: dict[str, bytes] = {}
_PAIR_CACHE: dict[tuple[int, str, str], bytes] = {}
_NAME_CACHE: dict[str, bytes] = {}
_CACHE_LIMIT = 4096
"""Entries each cache keeps; it starts over when full (keys and repeated short strings fit)."""
_CACHED_VALUE_CHARS = 64
"""String values up to this length are remembered with their key: the names and ids that repeat
on every span; longer ones (content, when opted in) are encoded each time."""


def _varint(n: int) -> bytes:
    if n < 0x80:
        return _SMALL[n]
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _field(tag: int, payload: bytes) -> bytes:
    """A length-delimited field (``tag`` already shifted and typed)."""
    return _SMALL[tag] + _varint(len(payload)) + payload


def _text(value: str) -> bytes:
    # A lone surrogate cannot be UTF-8, which OTLP strings must be: it is written as "?".
    return value.encode("utf-8", "replace") if not value.isascii() else value.encode("ascii")


def _any_value(value: Any) -> bytes:
    """An ``AnyValue`` message's bytes (empty for None, as OpenTelemetry's encoder does)."""
    if value is None:
        return b""
    if isinstance(value, bool):
        return b"\x10" + _SMALL[int(value)]
    if isinstance(value, str):
        return _field(0x0A, _text(value))
    if isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise TypeError("an integer attribute beyond int64")
        return b"\x18" + _varint(value if value >= 0 else value + _INT64_WRAP)
    if isinstance(value, float):
        return b"\x21" + _DOUBLE(value)
    if isinstance(value, bytes):
        return _field(0x3A, value)
    if isinstance(value, Sequence):
        return _field(0x2A, b"".join(_field(0x0A, _any_value(v)) for v in value))
    if isinstance(value, Mapping):
        return _field(0x32, b"".join(_field(0x0A, _key_value(str(k), v)) for k, v in value.items()))
    raise TypeError(f"cannot encode a {type(value).__name__} attribute")


def _key(key: str) -> bytes:
    found = _KEY_CACHE.get(key)
    if found is None:
        if len(_KEY_CACHE) >= _CACHE_LIMIT:
            _KEY_CACHE.clear()
        found = _KEY_CACHE[key] = _field(0x0A, _text(key))
    return found


def _key_value(key: str, value: Any) -> bytes:
    return _key(key) + _field(0x12, _any_value(value))


def _attributes(tag: int, attributes: Mapping[str, Any] | None) -> bytes:
    """Each attribute as a ``KeyValue`` field ``tag``; one that cannot be encoded is left out
    (OpenTelemetry's encoder logs and skips it too)."""
    if not attributes:
        return b""
    parts = []
    for key, value in attributes.items():
        kind = type(value)
        if kind is str and len(value) <= _CACHED_VALUE_CHARS:
            field = _PAIR_CACHE.get((tag, key, value))
            if field is None:
                if len(_PAIR_CACHE) >= _CACHE_LIMIT:
                    _PAIR_CACHE.clear()
                field = _PAIR_CACHE[(tag, key, value)] = _field(tag, _key_value(key, value))
            parts.append(field)
            continue
        if kind is int and 0 <= value < 0x80:  # token counts, status codes: the usual ints
            pair = _key(key) + b"\x12\x02\x18" + _SMALL[value]
        else:
            try:
                pair = _key_value(key, value)
            except TypeError:
                continue
        parts.append(_field(tag, pair))
    return b"".join(parts)


_LOCAL, _REMOTE = _FIXED32(_HAS_IS_REMOTE), _FIXED32(_HAS_IS_REMOTE | _IS_REMOTE)
_UNSET_STATUS = b"\x7a\x00"
_SPAN_FLAGS = {False: b"\x85\x01" + _LOCAL, True: b"\x85\x01" + _REMOTE}  # field 16, fixed32


def _flags(parent: SpanContext | None) -> bytes:
    return _REMOTE if parent is not None and parent.is_remote else _LOCAL


def _trace_state(context: SpanContext) -> bytes:
    state = context.trace_state
    if not state:
        return b""
    return _field(0x1A, _text(",".join(f"{k}={v}" for k, v in state.items())))


def _count(tag: int, count: int) -> bytes:
    return _SMALL[tag] + _varint(count) if count else b""


def _name(name: str) -> bytes:
    """The span's name field, remembered (a span's name repeats on every request)."""
    if len(_NAME_CACHE) >= _CACHE_LIMIT:
        _NAME_CACHE.clear()
    found = _NAME_CACHE[name] = _field(0x2A, _text(name))
    return found


_TIMES = struct.Struct("<BQBQ").pack
"""Start and end time: fields 7 and 8, fixed64."""
_KIND_BY_VALUE = tuple(_KIND_FIELD[kind] for kind in sorted(SpanKind, key=lambda k: k.value))
"""The kind field by the kind's value: an enum member's hash is a Python function call."""
_NO_TRACE_STATE = trace.DEFAULT_TRACE_STATE
_SPAN_PAIRS: dict[tuple[str, Any], bytes] = {}
"""Span attribute fields by key and value, for str and int values only."""
_CACHED_INT = 1 << 16
"""Integer values below this are remembered with their key (status codes, token counts)."""


def _span_attribute(key: str, value: Any) -> bytes | None:
    """A span's attribute field (tag 9), remembered when its value may well repeat; ``None``
    when the value cannot be encoded."""
    kind = type(value)
    cached = (kind is str and len(value) <= _CACHED_VALUE_CHARS) or (
        kind is int and 0 <= value < _CACHED_INT
    )
    try:
        field = _field(0x4A, _key_value(key, value))
    except TypeError:
        return None
    if cached:
        if len(_SPAN_PAIRS) >= _CACHE_LIMIT:
            _SPAN_PAIRS.clear()
        _SPAN_PAIRS[(key, value)] = field
    return field


def _lean_span(span: LeanSpan) -> bytes | None:
    """The ``Span`` field (tag 2 of its ``ScopeSpans``) of the usual span of this process, read
    from its own fields (no property, no copy): attributes only, no events or links, status
    unset, nothing dropped, no trace state. ``None`` for any other, which :func:`_span` then
    encodes in full. Written as one loop: it runs for every span this process exports."""
    context = span._context
    if (
        context is None
        or span._events
        or span._links
        or span._status is not UNSET_STATUS
        or span._dropped_attributes
    ):
        return None
    # A SpanContext is a tuple (trace id, span id, is remote, flags, trace state, is valid):
    # its properties are Python functions, its items are not.
    state = context[4]
    if state is not _NO_TRACE_STATE and state:
        return None
    parent = span._parent
    name = _NAME_CACHE.get(span._name) or _name(span._name)
    parts = [
        b"\x0a\x10",
        context[0].to_bytes(16, "big"),
        b"\x12\x08",
        context[1].to_bytes(8, "big"),
        b"\x22\x08" + parent[1].to_bytes(8, "big") if parent is not None else b"",
        name,
        _KIND_BY_VALUE[span._kind._value_],
        _TIMES(0x39, span._start_time or 0, 0x41, span._end_time or 0),
    ]
    pairs = _SPAN_PAIRS
    value: Any  # an attribute value, its type checked by hand below
    for key, value in span._attributes.items():
        kind = type(value)
        # Only str and int values are remembered: an equal value of another type (True or
        # 1.0 for 1) must not find an int's field.
        if kind is str:
            field = pairs.get((key, value))
            if field is None and len(value) <= _CACHED_VALUE_CHARS and value.isascii():
                # A short ASCII value seen for the first time (an id, as often as not), framed
                # here and remembered as _span_attribute would; the value's lengths fit one
                # byte each, the key's field is remembered.
                length = len(value)
                pair = (
                    (_KEY_CACHE.get(key) or _key(key))
                    + b"\x12"
                    + _SMALL[length + 2]
                    + b"\x0a"
                    + _SMALL[length]
                    + value.encode()
                )
                if len(pairs) >= _CACHE_LIMIT:
                    pairs.clear()
                field = pairs[(key, value)] = b"\x4a" + _varint(len(pair)) + pair
        else:
            field = pairs.get((key, value)) if kind is int else None
        if field is None:
            field = _span_attribute(key, value)
            if field is None:
                continue
        parts.append(field)
    parts.append(_UNSET_STATUS)
    parts.append(_SPAN_FLAGS[parent is not None and parent[2]])
    body = b"".join(parts)
    size = len(body)
    return (_SPAN_HEADS.get(size) or _span_head(size)) + body


_SPAN_HEADS: dict[int, bytes] = {}


def _span_head(size: int) -> bytes:
    """The tag and length of a ``Span`` field of ``size`` bytes, remembered (spans of one name
    are much the same size)."""
    if len(_SPAN_HEADS) >= _CACHE_LIMIT:
        _SPAN_HEADS.clear()
    head = _SPAN_HEADS[size] = b"\x12" + _varint(size)
    return head


def _span(span: ReadableSpan) -> bytes:
    context = span.get_span_context()
    assert context is not None  # a finished SDK span always has one
    parent = span.parent
    name = _NAME_CACHE.get(span.name) or _name(span.name)
    parts = [
        b"\x0a\x10" + context.trace_id.to_bytes(16, "big"),
        b"\x12\x08" + context.span_id.to_bytes(8, "big"),
        _trace_state(context),
        b"\x22\x08" + parent.span_id.to_bytes(8, "big") if parent is not None else b"",
        name,
        b"\x30" + _KIND[span.kind],
        b"\x39" + _FIXED64(span.start_time or 0),
        b"\x41" + _FIXED64(span.end_time or 0),
        _attributes(0x4A, span.attributes),
        _count(0x50, span.dropped_attributes),
    ]
    for event in span.events:
        body = (
            b"\x09"
            + _FIXED64(event.timestamp)
            + _field(0x12, _text(event.name))
            + _attributes(0x1A, event.attributes)
            + _count(0x20, event.dropped_attributes)
        )
        parts.append(_field(0x5A, body))
    parts.append(_count(0x60, span.dropped_events))
    for link in span.links:
        body = (
            b"\x0a\x10"
            + link.context.trace_id.to_bytes(16, "big")
            + b"\x12\x08"
            + link.context.span_id.to_bytes(8, "big")
            + _attributes(0x22, link.attributes)
            + _count(0x28, link.dropped_attributes)
            + b"\x35"
            + _flags(link.context)
        )
        parts.append(_field(0x6A, body))
    parts.append(_count(0x70, span.dropped_links))
    status = span.status
    code = status.status_code.value
    description = status.description
    if code or description:
        parts.append(
            _field(
                0x7A,
                (_field(0x12, _text(description)) if description else b"")
                + (b"\x18" + _SMALL[code] if code else b""),
            )
        )
    else:
        parts.append(_UNSET_STATUS)
    parts.append(_SPAN_FLAGS[parent is not None and parent.is_remote])
    return b"".join(parts)


def _group(
    groups: list[tuple[Any, list[tuple[Any, list[bytes]]]]], resource: Any, scope: Any
) -> list[bytes]:
    """The list collecting the spans of an equal resource and scope (made when new)."""
    scopes = next((found for known, found in groups if known == resource), None)
    if scopes is None:
        scopes = []
        groups.append((resource, scopes))
    for known_scope, encoded in scopes:
        if known_scope == scope:
            return encoded
    encoded = []
    scopes.append((scope, encoded))
    return encoded


_NONE_YET = object()


def encode_spans(spans: Sequence[ReadableSpan]) -> bytes:
    """The serialized ``ExportTraceServiceRequest`` of ``spans``, grouped by resource and then
    by instrumentation scope as OpenTelemetry's encoder groups them (equal ones together)."""
    groups: list[tuple[Any, list[tuple[Any, list[bytes]]]]] = []
    # Looked up by identity first: a provider hands every span the same resource and scope
    # objects, and hashing a resource serializes its attributes to JSON.
    by_id: dict[tuple[int, int], list[bytes]] = {}
    # The last span's resource and scope: none yet (None may be a span's scope).
    last_resource: Any = _NONE_YET
    last_scope: Any = _NONE_YET
    encoded: list[bytes] = []
    for span in spans:
        field = None
        if type(span) is LeanSpan:
            resource, scope = span._resource, span._instrumentation_scope
            field = _lean_span(span)
        else:
            resource, scope = span.resource, span.instrumentation_scope
        if field is None:
            field = _field(0x12, _span(span))
        if resource is not last_resource or scope is not last_scope:
            found = by_id.get((id(resource), id(scope)))
            if found is None:
                found = by_id[(id(resource), id(scope))] = _group(groups, resource, scope)
            encoded = found
            last_resource, last_scope = resource, scope
        encoded.append(field)
    out = []
    for resource, scopes in groups:
        body = [_field(0x0A, _attributes(0x0A, resource.attributes))]
        for scope, fields in scopes:
            scope_body = b""
            if scope is not None:
                scope_body = (
                    (_field(0x0A, _text(scope.name)) if scope.name else b"")
                    + (_field(0x12, _text(scope.version)) if scope.version else b"")
                    + _attributes(0x1A, scope.attributes)
                )
            schema = scope.schema_url if scope is not None else None
            body.append(
                _field(
                    0x12,
                    _field(0x0A, scope_body)
                    + b"".join(fields)
                    + (_field(0x1A, _text(schema)) if schema else b""),
                )
            )
        if resource.schema_url:
            body.append(_field(0x1A, _text(resource.schema_url)))
        out.append(_field(0x0A, b"".join(body)))
    return b"".join(out)
