"""The dbhub connection string built for the read-only demo role."""

from __future__ import annotations

from urllib.parse import parse_qs, unquote, urlsplit

from lgos_gateways.mcp_demo_db import DATABASE, READER, dbhub_config, reader_url


def dsn_of(config: str) -> str:
    line = next(line for line in config.splitlines() if line.startswith("dsn = "))
    return line.removeprefix('dsn = "').removesuffix('"')


def test_reserved_characters_in_the_password_are_encoded() -> None:
    url = reader_url("postgresql://admin:secret@db:5432/postgres", "p@ss#w/rd:?")
    parts = urlsplit(url)
    assert (parts.hostname, parts.port, parts.path) == ("db", 5432, f"/{DATABASE}")
    assert parts.username == READER
    assert unquote(parts.password or "") == "p@ss#w/rd:?"


def test_the_admin_query_is_kept_once_and_sslmode_not_overridden() -> None:
    url = reader_url("postgresql://admin@db/postgres?sslmode=require&connect_timeout=5", "pw")
    query = parse_qs(urlsplit(dsn_of(dbhub_config(url))).query)
    assert query == {"sslmode": ["require"], "connect_timeout": ["5"]}
    plain = dsn_of(dbhub_config(reader_url("postgresql://admin@db/postgres", "pw")))
    assert plain.startswith("postgres://") and plain.endswith("?sslmode=disable")


def test_an_ipv6_host_stays_bracketed() -> None:
    assert urlsplit(reader_url("postgresql://admin@[::1]:5432/postgres", "pw")).hostname == "::1"
