"""The shared setting types keep their bounds and descriptions wherever a service uses them."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError
from service_kit.settings import (
    LogLevel,
    MaxRequestBytes,
    Port,
    PostgresConnectTimeout,
    PostgresPoolTimeout,
    PostgresReconnectTimeout,
)


class Service(BaseModel):
    port: Port = 3004
    log_level: LogLevel = "info"
    max_request_bytes: MaxRequestBytes = 1024
    postgres_connect_timeout: PostgresConnectTimeout = 5
    postgres_pool_timeout: PostgresPoolTimeout = 5.0
    postgres_reconnect_timeout: PostgresReconnectTimeout = 5.0


def test_each_service_keeps_its_own_defaults() -> None:
    assert Service().port == 3004
    assert Service(port=3006, log_level="debug").model_dump()["port"] == 3006


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("port", 0),
        ("port", 65536),
        ("log_level", "verbose"),
        ("max_request_bytes", 0),
        ("postgres_connect_timeout", 1),
        ("postgres_connect_timeout", 61),
        ("postgres_pool_timeout", 0),
        ("postgres_pool_timeout", 301),
        ("postgres_reconnect_timeout", 0),
    ],
)
def test_values_out_of_bounds_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValidationError) as caught:
        Service.model_validate({field: value})
    assert caught.value.errors()[0]["loc"] == (field,)


def test_the_limits_and_timeouts_are_described() -> None:
    for name in (
        "max_request_bytes",
        "postgres_connect_timeout",
        "postgres_pool_timeout",
        "postgres_reconnect_timeout",
    ):
        assert Service.model_fields[name].description, name
    assert "413" in str(Service.model_fields["max_request_bytes"].description)
