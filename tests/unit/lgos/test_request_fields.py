"""Each decoder accepts exactly the request fields the OpenAPI document declares."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from lgos import InvalidRequestError, LGOSSettings, create_app
from lgos.config import GraphRegistry
from lgos.protocol.chat import decode as chat
from lgos.protocol.responses import decode as responses
from lgos.protocol.validation import check_fields

ROUTES = [("/v1/responses", responses), ("/v1/chat/completions", chat)]


def request_schema(document: dict[str, Any], path: str) -> dict[str, Any]:
    body = document["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    name = body["schema"]["$ref"].rsplit("/", 1)[-1]
    schema: dict[str, Any] = document["components"]["schemas"][name]
    return schema


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    state_dir: Path = tmp_path_factory.mktemp("state")
    return create_app(GraphRegistry(), LGOSSettings(state_dir=state_dir)).openapi()


@pytest.mark.parametrize(("path", "decoder"), ROUTES)
def test_the_decoder_accepts_the_documented_fields(
    document: dict[str, Any], path: str, decoder: ModuleType
) -> None:
    assert set(request_schema(document, path)["properties"]) == decoder.ALLOWED_FIELDS
    body = dict.fromkeys(decoder.ALLOWED_FIELDS, "anything")
    check_fields(body, allowed=decoder.ALLOWED_FIELDS, unsupported=decoder.UNSUPPORTED_FIELDS)
    assert set(body) == decoder.ALLOWED_FIELDS


@pytest.mark.parametrize(("path", "decoder"), ROUTES)
def test_unsupported_fields_are_undocumented_and_refused(
    document: dict[str, Any], path: str, decoder: ModuleType
) -> None:
    schema = request_schema(document, path)
    assert schema["additionalProperties"] is False
    assert not set(decoder.UNSUPPORTED_FIELDS) & set(schema["properties"])
    for field in decoder.UNSUPPORTED_FIELDS:
        with pytest.raises(InvalidRequestError) as caught:
            check_fields(
                {field: 1}, allowed=decoder.ALLOWED_FIELDS, unsupported=decoder.UNSUPPORTED_FIELDS
            )
        assert (caught.value.param, caught.value.code) == (field, "unsupported_parameter")
