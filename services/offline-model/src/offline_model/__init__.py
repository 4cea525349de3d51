"""offline-model: a deterministic OpenAI-compatible model, the stand-in for a real one.

Its answers are derived from its input so tests can check what reached the model: every answer
quotes the latest user message verbatim and names what else it was given.
"""

from offline_model.answer import MODEL_NAME, compose_answer
from offline_model.app import create_app

__all__ = ["MODEL_NAME", "compose_answer", "create_app"]
