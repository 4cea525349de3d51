"""The supported request subsets of both APIs, as Pydantic models.

The decoders validate by hand, so that errors carry OpenAI's exact ``param`` paths; these models
state the same subsets for the OpenAPI document (and for clients and fuzzers that read it), and
the fields of ``ResponsesRequest`` and ``ChatRequest`` are the decoders' accepted fields. Nothing
here parses a request.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

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

ToolChoiceMode = Literal["none", "auto", "required"]


class _FunctionFields(_Strict):
    # What declares a client function in both APIs (Chat nests it under "function").
    name: str = Field(min_length=1)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    strict: bool | None = None


# POST /v1/responses


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


class _FunctionType(_Strict):
    type: Literal["function"]


class FunctionTool(_FunctionFields, _FunctionType):
    pass  # Pydantic takes the last base's fields first: "type" leads, as in OpenAI's schema.


class ServerToolSelector(_Strict):
    type: Literal["custom"]
    name: str = Field(description="A name from the model's `lgos.server_tools`.")


class WebSearchTool(_Strict):
    type: Literal["web_search"]


class NamedToolChoice(_Strict):
    type: Literal["function", "custom"]
    name: str


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


# POST /v1/chat/completions


class TextPart(_Strict):
    type: Literal["text"]
    text: str


class FileRef(_Strict):
    file_id: str


class FilePart(_Strict):
    type: Literal["file"]
    file: FileRef


class ChatFunction(_FunctionFields):
    pass


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
