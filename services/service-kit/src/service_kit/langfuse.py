"""Langfuse: an optional second trace export, and a conversation's requests grouped in a session.

Off unless ``LANGFUSE_PUBLIC_KEY`` and ``LANGFUSE_SECRET_KEY`` are set (:class:`LangfuseSettings`).
Then :func:`install` adds two span processors to the process's tracer provider:

- :class:`SessionSpans` puts ``langfuse.session.id`` on every span of a request once the request
  named its conversation (:func:`set_session`): on the spans already open in that request's local
  span tree (its server span) and on every span started in it afterwards;
- a batch processor exporting to Langfuse's OTLP/HTTP endpoint
  (``<LANGFUSE_BASE_URL>/api/public/otel/v1/traces``) with :class:`LangfuseExporter`.

The exporter is independent of every ``OTEL_EXPORTER_OTLP_*`` variable (the OTLP SDK exporter
would merge those headers and certificates into its requests, handing a collector's credentials
to Langfuse): its endpoint, Basic authentication (public key, secret key), the
``x-langfuse-ingestion-version: 4`` header and its timeout are its own. It runs on the batch
processor's thread, so a down or slow Langfuse never holds up a request; a failing export is
logged once (``langfuse_export_failed``, with the status or the error's type, never the key) until
one succeeds again.

A session is what Langfuse accepts: ASCII and at most :data:`MAX_SESSION_CHARS` characters. Any
other value is left off, never shortened or altered, and one ``langfuse_session_skipped`` line
says why (``not_ascii`` or ``too_long``, with the length; never the value).
"""

from __future__ import annotations

import base64
import logging
import threading
import weakref
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Annotated, Literal
from urllib.parse import urlsplit

import httpx
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from pydantic import AfterValidator, Field, SecretStr, ValidationError, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from service_kit.otlp_encoding import encode_spans
from service_kit.span_queue import QuietBatchSpanProcessor

SESSION_ID = "langfuse.session.id"
MAX_SESSION_CHARS = 200
DEFAULT_BASE_URL = "https://cloud.langfuse.com"
TRACES_PATH = "/api/public/otel/v1/traces"
INGESTION_VERSION_HEADER = "x-langfuse-ingestion-version"
INGESTION_VERSION = "4"
SkipReason = Literal["not_ascii", "too_long"]

logger = logging.getLogger("service_kit.langfuse")


def _http_url(value: str | None) -> str | None:
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("must be an http:// or https:// URL")
    if parts.username or parts.password:
        raise ValueError("must not hold credentials (the keys go in their own variables)")
    return value.rstrip("/")


BaseURL = Annotated[str | None, AfterValidator(_http_url)]


class LangfuseSettings(BaseSettings):
    """Where LGOS sends its traces for Langfuse, read from ``LANGFUSE_*`` (the Langfuse SDK's
    names)."""

    model_config = SettingsConfigDict(
        env_prefix="LANGFUSE_", extra="ignore", env_ignore_empty=True, use_attribute_docstrings=True
    )

    public_key: str | None = None
    """A Langfuse project's public key (pk-lf-...). With LANGFUSE_SECRET_KEY, LGOS and its worker
    export every span to Langfuse as well, and a request's metadata.conversation_id becomes its
    Langfuse session; unset (the default): nothing is sent to Langfuse."""

    secret_key: SecretStr | None = Field(default=None, repr=False)
    """The project's secret key (sk-lf-...), set together with LANGFUSE_PUBLIC_KEY; sent only to
    Langfuse, never logged."""

    base_url: BaseURL = None
    """The Langfuse server (its ingestion path is appended); unset: LANGFUSE_HOST, else Langfuse
    Cloud, https://cloud.langfuse.com."""

    host: BaseURL = None
    """The older name of LANGFUSE_BASE_URL, read when that is unset."""

    timeout: float = Field(default=5.0, gt=0, le=60)
    """Seconds one export to Langfuse may take (connecting, sending, reading the answer each);
    exports run off the request path, so a slow Langfuse delays only its own traces."""

    @model_validator(mode="after")
    def _keys_together(self) -> LangfuseSettings:
        if (self.public_key is None) != (self.secret_key is None):
            raise ValueError(
                "LANGFUSE_PUBLIC_KEY and LANGFUSE_SECRET_KEY are set together or not at all"
            )
        return self

    @property
    def enabled(self) -> bool:
        return self.public_key is not None and self.secret_key is not None

    @property
    def endpoint(self) -> str:
        return (self.base_url or self.host or DEFAULT_BASE_URL) + TRACES_PATH


class LangfuseSettingsError(ValueError):
    """Invalid ``LANGFUSE_*`` settings; the message names the variables, never their values."""


def settings() -> LangfuseSettings:
    try:
        return LangfuseSettings()
    except ValidationError as error:
        problems = []
        for item in error.errors(include_url=False, include_input=False):
            message = item["msg"].removeprefix("Value error, ")
            name = f"LANGFUSE_{str(item['loc'][0]).upper()}: " if item["loc"] else ""
            problems.append(f"{name}{message}")
        raise LangfuseSettingsError("; ".join(problems)) from None


def session_problem(value: str) -> SkipReason | None:
    """Why Langfuse would not take ``value`` as a session id, or ``None`` when it would."""
    if not value.isascii():
        return "not_ascii"
    if len(value) > MAX_SESSION_CHARS:
        return "too_long"
    return None


class _Tree:
    """The spans of one request in this process: a local root and its local descendants."""

    def __init__(self, session: str | None) -> None:
        self.session = session
        self.spans: weakref.WeakSet[Span] = weakref.WeakSet()


_session: ContextVar[str | None] = ContextVar("service_kit_langfuse_session", default=None)


class SessionSpans(SpanProcessor):
    """Puts the session of the request a span belongs to on the span.

    A span started under a local parent joins the parent's tree; any other span (no parent, or a
    caller's remote one) starts a tree, taking the session in force in its context. Trees hold
    their spans weakly, so a span never ended is not kept alive.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._trees: weakref.WeakKeyDictionary[Span, _Tree] = weakref.WeakKeyDictionary()

    def on_start(self, span: Span, parent_context: otel_context.Context | None = None) -> None:
        parent = trace.get_current_span(parent_context)
        with self._lock:
            tree = self._trees.get(parent) if isinstance(parent, Span) else None
            if tree is None:
                tree = _Tree(_session.get())
            tree.spans.add(span)
            self._trees[span] = tree
            session = tree.session
        if session is not None:
            span.set_attribute(SESSION_ID, session)

    def apply(self, session: str | None) -> None:
        """``session`` for the spans started from here on in this context and, when it is one,
        for those already open in the current span's tree."""
        _session.set(session)
        current = trace.get_current_span()
        if session is None or not isinstance(current, Span):
            return
        with self._lock:
            tree = self._trees.get(current)
            if tree is None:
                return
            tree.session = session
            spans = list(tree.spans)
        for span in spans:
            if span.is_recording():
                span.set_attribute(SESSION_ID, session)


class LangfuseExporter(SpanExporter):
    """OTLP/HTTP protobuf to Langfuse, one POST per batch, with its own headers and timeout."""

    def __init__(self, endpoint: str, public_key: str, secret_key: str, timeout: float) -> None:
        token = base64.b64encode(f"{public_key}:{secret_key}".encode()).decode("ascii")
        self._endpoint = endpoint
        self._client = httpx.Client(
            timeout=timeout,
            headers={
                "Authorization": f"Basic {token}",
                "Content-Type": "application/x-protobuf",
                INGESTION_VERSION_HEADER: INGESTION_VERSION,
            },
        )
        self._failing = False

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        body = encode_spans(spans)
        try:
            response = self._client.post(self._endpoint, content=body)
        except httpx.HTTPError as error:
            return self._failed({"error": type(error).__name__})
        if not response.is_success:
            return self._failed({"status": response.status_code})
        if self._failing:
            self._failing = False
            logger.info("langfuse_export_recovered")
        return SpanExportResult.SUCCESS

    def _failed(self, why: dict[str, object]) -> SpanExportResult:
        if not self._failing:
            self._failing = True
            logger.warning("langfuse_export_failed", extra=why)
        return SpanExportResult.FAILURE

    def shutdown(self) -> None:
        self._client.close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


_processor: SessionSpans | None = None


def install(provider: TracerProvider, config: LangfuseSettings) -> None:
    """Export ``provider``'s spans to Langfuse too, and put sessions on them (``config`` must be
    :attr:`~LangfuseSettings.enabled`)."""
    global _processor
    if config.public_key is None or config.secret_key is None:
        raise ValueError("Langfuse export needs both keys")
    _processor = SessionSpans()
    provider.add_span_processor(_processor)
    exporter = LangfuseExporter(
        config.endpoint, config.public_key, config.secret_key.get_secret_value(), config.timeout
    )
    provider.add_span_processor(QuietBatchSpanProcessor(exporter))
    logger.info("langfuse_export", extra={"host": urlsplit(config.endpoint).hostname})


def set_session(conversation_id: str | None) -> None:
    """Make ``conversation_id`` (a request's ``metadata.conversation_id``) the Langfuse session
    of the current request's spans, when Langfuse export is on and Langfuse would take it."""
    if _processor is None:
        return
    session = None
    if conversation_id:
        problem = session_problem(conversation_id)
        if problem is None:
            session = conversation_id
        else:
            logger.info(
                "langfuse_session_skipped",
                extra={"reason": problem, "length": len(conversation_id)},
            )
    _processor.apply(session)
