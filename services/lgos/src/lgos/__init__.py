"""LangGraph OpenAI Serve: registered LangGraph graphs exposed as OpenAI models.

The public surface is what graph authors and deployers need; everything else is private.
"""

from lgos.app import create_app
from lgos.config import GraphConfig, GraphExample, GraphFeature, GraphRegistry
from lgos.errors import InvalidRequestError, LGOSError
from lgos.request import ClientSettings, GraphRequest
from lgos.scope import SHARED_SCOPE, ScopeResolver, shared_scope
from lgos.settings import LGOSSettings
from lgos.status import status_event

__all__ = [
    "SHARED_SCOPE",
    "ClientSettings",
    "GraphConfig",
    "GraphExample",
    "GraphFeature",
    "GraphRegistry",
    "GraphRequest",
    "InvalidRequestError",
    "LGOSError",
    "LGOSSettings",
    "ScopeResolver",
    "create_app",
    "shared_scope",
    "status_event",
]
