"""What advanced-graph's nodes share: its model calls and its knowledge adapter."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from langchain_openai import ChatOpenAI

from lgos_demo_graphs.advanced.knowledge import FileReader, Knowledge
from lgos_demo_graphs.advanced.openai_knowledge import OpenAIFileReader, OpenAIKnowledge
from lgos_demo_graphs.advanced.settings import KnowledgeSettings
from lgos_demo_graphs.model import DemoAPISettings, chat_model


@dataclass(frozen=True)
class Services:
    private_model: ChatOpenAI
    """Classification, source selection and drafting: whole replies, never streamed."""
    answer_model: ChatOpenAI
    """The one token-streaming call."""
    files: FileReader
    knowledge: Callable[[], Knowledge | None]
    """The knowledge base, or None while none is configured (checked on every use)."""
    settings: KnowledgeSettings


def default_services(
    settings: KnowledgeSettings | None = None, model_settings: DemoAPISettings | None = None
) -> Services:
    settings = settings or KnowledgeSettings()
    # Responses API upstream, nothing stored there: the conversation belongs to the client.
    private = chat_model(
        model_settings, use_responses_api=True, store=False, disable_streaming=True
    )
    answer = chat_model(model_settings, use_responses_api=True, store=False)
    adapters: dict[str, OpenAIKnowledge] = {}

    def knowledge() -> Knowledge | None:
        store_id = settings.resolved_vector_store_id()
        if store_id is None:
            return None
        if store_id not in adapters:
            adapters[store_id] = OpenAIKnowledge(settings, store_id)
        return adapters[store_id]

    return Services(private, answer, OpenAIFileReader(settings), knowledge, settings)
