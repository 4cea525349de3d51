"""The scripted fake chat model, published for graph authors as ``lgos.testing``.

Kept under its old name for the tests (and branches) that import it from here.
"""

from lgos.testing import ScriptedFakeChatModel

ScriptedChatModel = ScriptedFakeChatModel

__all__ = ["ScriptedChatModel", "ScriptedFakeChatModel"]
