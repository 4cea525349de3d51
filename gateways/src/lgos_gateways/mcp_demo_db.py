"""The MCP demo database: a small projects/releases schema and a read-only role for dbhub.

Idempotent; devstack and the tests run it before starting dbhub. Two layers keep the MCP server
read-only: the role can only SELECT (and defaults to read-only transactions), and dbhub's
``execute_sql`` tool is configured ``readonly = true``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from pathlib import Path
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from service_kit.logs import configure_logging

logger = logging.getLogger("lgos_gateways.mcp_demo_db")

GATEWAYS = Path(__file__).resolve().parents[2]
DBHUB_ENTRY = (
    GATEWAYS.parent
    / ".tools"
    / "dbhub"
    / "node_modules"
    / "@bytebase"
    / "dbhub"
    / "dist"
    / "index.js"
)
"""Installed by `make sync` (npm, gateways/mcp/package-lock.json)."""
LOOPBACK = GATEWAYS / "mcp" / "loopback.cjs"
DATABASE = "lgos_mcp_demo"
READER = "lgos_mcp_reader"

SCHEMA = """
CREATE TABLE IF NOT EXISTS projects (
    id integer PRIMARY KEY,
    name text NOT NULL UNIQUE,
    status text NOT NULL CHECK (status IN ('active', 'paused', 'archived'))
);
CREATE TABLE IF NOT EXISTS releases (
    id integer PRIMARY KEY,
    project_id integer NOT NULL REFERENCES projects (id),
    version text NOT NULL,
    released_on date NOT NULL
);
INSERT INTO projects (id, name, status) VALUES
    (1, 'lgos', 'active'),
    (2, 'files-service', 'active'),
    (3, 'legacy-portal', 'archived')
ON CONFLICT (id) DO NOTHING;
INSERT INTO releases (id, project_id, version, released_on) VALUES
    (1, 1, '0.1.0', '2026-09-01'),
    (2, 1, '0.2.0', '2026-10-15'),
    (3, 2, '0.1.0', '2026-10-20'),
    (4, 3, '2.7.4', '2024-03-02')
ON CONFLICT (id) DO NOTHING;
"""


def with_database(url: str, database: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{database}"))


def reader_url(admin_url: str, password: str) -> str:
    """The admin URL with the reader's credentials (percent-encoded) and the demo database."""
    parts = urlsplit(with_database(admin_url, DATABASE))
    host = parts.hostname or "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    credentials = f"{quote(READER, safe='')}:{quote(password, safe='')}"
    netloc = f"{credentials}@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


# Writes the reader could still make with default_transaction_read_only turned off (any session
# may change it, e.g. with set_config from a "SELECT"): large objects and temporary tables.
_LARGE_OBJECT_WRITERS = (
    "lo_creat(integer)",
    "lo_create(oid)",
    "lo_from_bytea(oid, bytea)",
    "lo_put(oid, bigint, bytea)",
    "lowrite(integer, bytea)",
    "lo_truncate(integer, integer)",
    "lo_truncate64(integer, bigint)",
    "lo_unlink(oid)",
)


def setup(admin_url: str, password: str) -> str:
    """Create (or refresh) the demo database and role; return the reader's URL."""
    with psycopg.connect(admin_url, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,))
        if exists.fetchone() is None:
            admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE)))
        role = admin.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (READER,)).fetchone()
        verb = "ALTER" if role else "CREATE"
        admin.execute(
            sql.SQL(verb + " ROLE {} LOGIN PASSWORD {}").format(
                sql.Identifier(READER), sql.Literal(password)
            )
        )
        admin.execute(
            sql.SQL("ALTER ROLE {} SET default_transaction_read_only = on").format(
                sql.Identifier(READER)
            )
        )
    with psycopg.connect(with_database(admin_url, DATABASE), autocommit=True) as demo:
        demo.execute(SCHEMA)
        reader = sql.Identifier(READER)
        demo.execute(sql.SQL("REVOKE CREATE ON SCHEMA public FROM PUBLIC"))
        demo.execute(
            sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(sql.Identifier(DATABASE), reader)
        )
        demo.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(reader))
        demo.execute(sql.SQL("GRANT SELECT ON ALL TABLES IN SCHEMA public TO {}").format(reader))
        # Only the SELECT grants bound the reader: the read-only session default does not.
        demo.execute(
            sql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM PUBLIC").format(sql.Identifier(DATABASE))
        )
        for function in _LARGE_OBJECT_WRITERS:
            demo.execute(f"REVOKE EXECUTE ON FUNCTION pg_catalog.{function} FROM PUBLIC")
    logger.info("mcp demo database ready", extra={"database": DATABASE, "role": READER})
    return reader_url(admin_url, password)


def dbhub_config(reader: str) -> str:
    """dbhub's TOML: one source, SQL read-only and row-capped (the gateway allowlists only it)."""
    parts = urlsplit(reader.replace("postgresql://", "postgres://", 1))
    query = dict(parse_qsl(parts.query))
    query.setdefault("sslmode", "disable")  # the demo database is on a private network
    dsn = urlunsplit(parts._replace(query=urlencode(query)))
    return (
        "[[sources]]\n"
        'id = "demo_db"\n'
        f"dsn = {json.dumps(dsn)}\n\n"
        "[[tools]]\n"
        'name = "execute_sql"\n'
        'source = "demo_db"\n'
        "readonly = true\n"
        "max_rows = 100\n\n"
        "[[tools]]\n"
        'name = "search_objects"\n'
        'source = "demo_db"\n'
    )


def dbhub_command(port: int, config: Path) -> list[str]:
    """dbhub over HTTP, kept on loopback by the preload (it binds 0.0.0.0 on its own)."""
    return [
        "node",
        "--require",
        str(LOOPBACK),
        str(DBHUB_ENTRY),
        "--transport",
        "http",
        "--port",
        str(port),
        "--config",
        str(config),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--admin-url",
        default=os.environ.get(
            "MCP_DEMO_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
        ),
    )
    parser.add_argument(
        "--reader-password",
        default=os.environ.get("MCP_DEMO_READER_PASSWORD", "lgos-mcp-read-only"),
    )
    parser.add_argument("--dbhub-config", type=Path, help="write dbhub's TOML config here")
    args = parser.parse_args(argv)
    configure_logging(os.environ.get("LGOS_LOG_LEVEL", "info"))
    reader = setup(args.admin_url, args.reader_password)
    if args.dbhub_config is not None:
        args.dbhub_config.parent.mkdir(parents=True, exist_ok=True)
        args.dbhub_config.write_text(dbhub_config(reader))


if __name__ == "__main__":
    main()
