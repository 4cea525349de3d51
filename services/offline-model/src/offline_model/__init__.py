"""offline-model: a deterministic OpenAI-compatible model, the stand-in for a real one.

Its answers are derived from its input so tests can check what reached the model: every answer
quotes the latest user message verbatim and names what else it was given. The app factory is
``offline_model.app.create_app``; this package module never imports it, as the app imports the
package.
"""

from offline_model.answer import MODEL_NAME
from offline_model.compose import compose_answer

__all__ = ["MODEL_NAME", "compose_answer"]
