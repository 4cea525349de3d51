"""The OpenAPI document: LGOS's supported request subset and the statuses each route returns.

The decoders validate by hand so that errors carry OpenAI's exact ``param`` paths; these
Pydantic models describe the same subset for the document (and for clients and fuzzers that
read it). Nothing here is used to parse a request.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter
from service_kit.openapi import base_document

from lgos.protocol.metadata import MAX_KEY_CHARS, MAX_PAIRS, MAX_VALUE_CHARS


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


Metadata = Annotated[
    dict[
        Annotated[str, Field(max_length=MAX_KEY_CHARS)],
        Annotated[str, Field(max_length=MAX_VALUE_CHARS)],
    ],
    Field(max_length=MAX_PAIRS, description="At most 16 string pairs; `lgos_` keys are reserved."),
]


class InputText(_Strict):
    type: Literal["input_text"]
    text: str


class InputFile(_Strict):
    type: Literal["input_file"]
    file_id: str = Field(description="An id from an OpenAI-compatible Files API.")
    detail: str | None = None


class OutputText(_Strict):
    type: Literal["output_text"]
    text: str
    annotations: list[dict[str, Any]] | None = None
    logprobs: list[Any] | None = None
    parsed: None = None


class Refusal(_Strict):
    type: Literal["refusal"]
    refusal: str


class MessageItem(_Strict):
    type: Literal["message"] = "message"
    role: Literal["user", "system", "developer", "assistant"]
    content: str | list[InputText | InputFile | OutputText | Refusal]
    id: str | None = Field(default=None, description="Replayed assistant messages only.")
    status: Literal["in_progress", "completed", "incomplete"] | None = None
    phase: Literal["commentary", "final_answer"] | None = None


class FunctionCallItem(_Strict):
    type: Literal["function_call"]
    call_id: str
    name: str
    arguments: str = Field(description="A JSON object string (raw on incomplete items).")
    id: str | None = None
    status: Literal["in_progress", "completed", "incomplete"] | None = None


class CustomToolCallItem(_Strict):
    type: Literal["custom_tool_call"]
    call_id: str
    name: str
    input: str
    id: str | None = None
    status: str | None = None


class CallOutputItem(_Strict):
    type: Literal["function_call_output", "custom_tool_call_output"]
    call_id: str
    output: str
    id: str | None = None
    status: str | None = None


class WebSearchCallItem(_Strict):
    type: Literal["web_search_call"]
    id: str
    status: str | None = None
    action: dict[str, Any] | None = None


InputItem = Annotated[
    MessageItem | FunctionCallItem | CustomToolCallItem | CallOutputItem | WebSearchCallItem,
    Field(description="Items a client replays unchanged, plus its new messages and outputs."),
]


class FunctionTool(_Strict):
    type: Literal["function"]
    name: str = Field(min_length=1)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class ServerToolSelector(_Strict):
    type: Literal["custom"]
    name: str = Field(description="A name from the model's `lgos.server_tools`.")


class WebSearchTool(_Strict):
    type: Literal["web_search"]


class NamedToolChoice(_Strict):
    type: Literal["function", "custom"]
    name: str


ToolChoiceMode = Literal["none", "auto", "required"]


class TextFormat(_Strict):
    type: Literal["text"]


class TextConfig(_Strict):
    format: TextFormat | None = None


class ResponsesRequest(_Strict):
    """The supported subset of ``POST /v1/responses``; other fields are 400s naming them."""

    model: str = Field(description="A registered graph (see GET /v1/models).")
    input: str | list[InputItem] | None = None
    instructions: str | None = None
    stream: bool | None = None
    metadata: Metadata | None = None
    store: bool | None = Field(default=None, description="Foreground: false; background: any.")
    tools: list[FunctionTool | ServerToolSelector | WebSearchTool] | None = None
    tool_choice: ToolChoiceMode | NamedToolChoice | None = None
    parallel_tool_calls: bool | None = None
    previous_response_id: str | None = Field(
        default=None, description="Only the paused Response id of an interrupt run."
    )
    background: bool | None = None
    user: str | None = None
    safety_identifier: str | None = None
    text: TextConfig | None = None
    include: list[str] | None = Field(default=None, max_length=0, description="Empty only.")


class TextPart(_Strict):
    type: Literal["text"]
    text: str


class FileRef(_Strict):
    file_id: str


class FilePart(_Strict):
    type: Literal["file"]
    file: FileRef


class ChatFunction(_Strict):
    name: str = Field(min_length=1)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


class ChatTool(_Strict):
    type: Literal["function"]
    function: ChatFunction


class ChatFunctionCall(_Strict):
    name: str
    arguments: str


class ChatToolCall(_Strict):
    id: str
    type: Literal["function"]
    function: ChatFunctionCall


class ChatMessage(_Strict):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[TextPart | FilePart] | None = None
    name: str | None = None
    tool_calls: list[ChatToolCall] | None = None
    tool_call_id: str | None = Field(default=None, description="Tool messages only.")
    refusal: str | None = None
    function_call: None = None


class ChatChoiceFunction(_Strict):
    name: str


class ChatNamedChoice(_Strict):
    type: Literal["function"]
    function: ChatChoiceFunction


class StreamOptions(_Strict):
    include_usage: bool | None = None


class ChatRequest(_Strict):
    """The strict subset of ``POST /v1/chat/completions``."""

    model: str
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool | None = None
    stream_options: StreamOptions | None = None
    metadata: Metadata | None = None
    tools: list[ChatTool] | None = None
    tool_choice: ToolChoiceMode | ChatNamedChoice | None = None
    parallel_tool_calls: bool | None = None
    user: str | None = None
    safety_identifier: str | None = None
    store: bool | None = None


class ErrorObject(BaseModel):
    message: str
    type: str
    param: str | None
    code: str | None


class ErrorEnvelope(BaseModel):
    """Every error, on every route: OpenAI's envelope."""

    error: ErrorObject


_REASONS = {
    400: "Invalid request (the envelope names the parameter).",
    401: "Missing or wrong API key (only when LGOS_API_KEYS is set).",
    404: "Unknown model, or a Response id that is unknown, foreground or another scope's.",
    409: "Interrupt state conflict or a busy run.",
    413: "The body exceeds LGOS_MAX_REQUEST_BYTES.",
    422: "An Idempotency-Key reused with a different request.",
    500: "A graph failed; details are only in the logs.",
}
ROUTE_STATUSES: dict[tuple[str, str], tuple[int, ...]] = {
    ("get", "/health"): (),
    ("get", "/v1/models"): (401,),
    ("get", "/v1/models/{model}"): (401, 404),
    ("post", "/v1/responses"): (400, 401, 404, 409, 413, 422, 500),
    ("get", "/v1/responses/{response_id}"): (401, 404),
    ("post", "/v1/responses/{response_id}/cancel"): (401, 404, 413),
    ("post", "/v1/chat/completions"): (400, 401, 404, 413, 500),
}
"""The statuses each route really answers besides 200 (asserted by the schema fuzzer)."""

_BODIES: dict[tuple[str, str], type[BaseModel]] = {
    ("post", "/v1/responses"): ResponsesRequest,
    ("post", "/v1/chat/completions"): ChatRequest,
}
_STREAMS = {("post", "/v1/responses"), ("post", "/v1/chat/completions")}


def describe(app: FastAPI) -> dict[str, Any]:
    document = base_document(app)  # without FastAPI's 422: LGOS answers validation with 400
    schemas: dict[str, Any] = document["components"]["schemas"]
    schemas.update(_component(ErrorEnvelope))
    for model in _BODIES.values():
        schemas.update(_component(model))
    for path, operations in document["paths"].items():
        documented = path.replace("{model:path}", "{model}")
        for method, operation in operations.items():
            key = (method, documented)
            if key in _BODIES:
                ref = {"$ref": f"#/components/schemas/{_BODIES[key].__name__}"}
                operation["requestBody"] = {
                    "required": True,
                    "content": {"application/json": {"schema": ref}},
                }
            operation["responses"] = _responses(key)
    return document


def _responses(key: tuple[str, str]) -> dict[str, Any]:
    ok: dict[str, Any] = {"application/json": {"schema": {"type": "object"}}}
    if key in _STREAMS:
        ok["text/event-stream"] = {"schema": {"type": "string"}}
    responses: dict[str, Any] = {"200": {"description": "OK", "content": ok}}
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}
    for status in ROUTE_STATUSES.get(key, ()):
        responses[str(status)] = {"description": _REASONS[status], "content": error}
    return responses


def _component(model: type[BaseModel]) -> dict[str, Any]:
    schema = TypeAdapter(model).json_schema(ref_template="#/components/schemas/{model}")
    definitions: dict[str, Any] = schema.pop("$defs", {})
    return {**definitions, model.__name__: schema}
