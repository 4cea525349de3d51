from __future__ import annotations

import pytest
from lgos import LGOSSettings
from lgos.auth import STATE_KEY, key_scope, trusted_resolver
from lgos.scope import shared_scope
from starlette.requests import Request

KEYS = {"sk-a": "a", "sk-b": "b"}


def request(headers: dict[str, str], scope_name: str | None = None) -> Request:
    raw = [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    state = {STATE_KEY: scope_name} if scope_name else {}
    return Request({"type": "http", "headers": raw, "state": state})


@pytest.mark.parametrize(
    ("header", "scope"),
    [
        ("Bearer sk-a", "a"),
        ("bearer sk-b", "b"),
        ("Bearer sk-c", None),
        ("sk-a", None),
        ("Basic sk-a", None),
        ("Bearer ", None),
        (None, None),
        ("Bearer sk-a ", "a"),
    ],
)
def test_key_scope(header: str | None, scope: str | None) -> None:
    assert key_scope(KEYS, header) == scope


def test_settings_read_both_spellings() -> None:
    assert LGOSSettings(api_keys="sk-a=a, sk-b=b").api_keys == KEYS  # type: ignore[arg-type]
    assert LGOSSettings(api_keys='{"sk-a": "a", "sk-b": "b"}').api_keys == KEYS  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LGOSSettings(api_keys="sk-a")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        LGOSSettings(api_keys="sk-a=")  # type: ignore[arg-type]
    assert "sk-a" not in repr(LGOSSettings(api_keys=KEYS))


def test_the_header_is_read_only_when_trusted() -> None:
    plain = trusted_resolver(LGOSSettings(), shared_scope)
    assert plain is shared_scope
    assert plain(request({"x-tenant": "t"})) == "shared"
    trusted = trusted_resolver(LGOSSettings(trusted_scope_header="x-tenant"), shared_scope)
    assert trusted(request({"x-tenant": "t"})) == "header/t"
    assert trusted(request({})) == "shared"


def test_with_keys_the_header_only_subdivides_the_keys_scope() -> None:
    settings = LGOSSettings(api_keys=KEYS, trusted_scope_header="x-tenant")
    resolve = trusted_resolver(settings, shared_scope)
    assert resolve(request({}, "a")) == "a"
    assert resolve(request({"x-tenant": "t"}, "a")) == "a/t"
    assert resolve(request({"x-tenant": "t"}, "b")) == "b/t"
    keys_only = trusted_resolver(LGOSSettings(api_keys=KEYS), shared_scope)
    assert keys_only(request({"x-tenant": "t"}, "a")) == "a"
