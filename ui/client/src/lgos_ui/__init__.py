"""Client logic shared by the LGOS demo UIs (Chainlit, Open WebUI); no UI imports here.

- :mod:`lgos_ui.turn`: one conversational turn through the gateway, as events a UI renders.
- :mod:`lgos_ui.events`: those events (the stream's mapped ones and the turn's own).
- :mod:`lgos_ui.catalog`: graphs from the gateway's native catalog (LiteLLM or Bifrost).
- :mod:`lgos_ui.settings`: form fields from ``client_settings``; ``metadata.lgos_settings``.
- :mod:`lgos_ui.ledger`: the Responses input ledger a conversation replays.
- :mod:`lgos_ui.review`: ``lgos_interrupt`` reviews, persisted before asking.
- :mod:`lgos_ui.mcp`: the gateway's MCP endpoint; :mod:`lgos_ui.tools`: functions to offer.
- :mod:`lgos_ui.open_webui`: plain logic the single-file Open WebUI Function needs.
"""

from lgos_ui.catalog import (
    LIMITED_NOTICE,
    CatalogCache,
    CatalogError,
    Example,
    GatewayType,
    GraphEntry,
    default_entry,
    fetch_catalog,
    parse_bifrost_models,
    parse_litellm_model_info,
)
from lgos_ui.events import Finished, TurnEvent, UIEvent
from lgos_ui.ledger import InputLedger
from lgos_ui.mcp import GatewayMCP, MCPClient, MCPError, MCPTool, ToolResult
from lgos_ui.review import InterruptCall, PendingReview, answer_from_text, pending_review
from lgos_ui.settings import SettingField, encode_settings, request_metadata, setting_fields
from lgos_ui.tools import DISPLAY_FILE, offered_tools, offers_mcp
from lgos_ui.turn import Conversation, ToolRunner, Turn

__all__ = [
    "DISPLAY_FILE",
    "LIMITED_NOTICE",
    "CatalogCache",
    "CatalogError",
    "Conversation",
    "Example",
    "Finished",
    "GatewayMCP",
    "GatewayType",
    "GraphEntry",
    "InputLedger",
    "InterruptCall",
    "MCPClient",
    "MCPError",
    "MCPTool",
    "PendingReview",
    "SettingField",
    "ToolResult",
    "ToolRunner",
    "Turn",
    "TurnEvent",
    "UIEvent",
    "answer_from_text",
    "default_entry",
    "encode_settings",
    "fetch_catalog",
    "offered_tools",
    "offers_mcp",
    "parse_bifrost_models",
    "parse_litellm_model_info",
    "pending_review",
    "request_metadata",
    "setting_fields",
]
