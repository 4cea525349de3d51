"""The environment-variable reference is complete and current: every settings field, every
variable the code reads and every ``${VAR}`` in compose has a meaning; nothing is documented
that nothing reads; the committed page is what ``make env-docs`` writes; ``.env.example`` names
only what compose passes on."""

from __future__ import annotations

import ast
import re

import pytest
from lgos_stack import envdocs
from lgos_stack.paths import ROOT


@pytest.fixture(scope="module")
def variables() -> dict[str, envdocs.Variable]:
    return envdocs.collect()


def test_every_variable_has_a_meaning_and_every_meaning_a_reader(
    variables: dict[str, envdocs.Variable],
) -> None:
    assert envdocs.problems(variables) == []


def test_the_committed_page_is_current(variables: dict[str, envdocs.Variable]) -> None:
    assert envdocs.PAGE.read_text() == envdocs.render(variables), "run `make env-docs`"


def test_the_page_lists_each_source() -> None:
    page = envdocs.PAGE.read_text()
    # A settings field, an os.environ read, a compose-only variable and a port variable.
    sources = ("LGOS_SSE_PING_INTERVAL", "CHAINLIT_CATALOG_TTL", "POSTGRES_PASSWORD", "REDIS_PORT")
    for name in sources:
        assert f"| `{name}` |" in page


def test_reads_are_found_in_every_form() -> None:
    source = """
import os
from os import environ
env = os.environ.get
a = os.environ.get("A_GET", "1")
b = os.getenv("B_GETENV")
c = os.environ["C_ITEM"]
d = env("D_ALIAS", "x")
e = environ.get("E_BARE")
keep_secret(stack, "F_SECRET", "file")
other = {"G_NOT_AN_ENV": 1}.get("G_NOT_AN_ENV")
"""
    found = dict(envdocs.names_read(ast.parse(source)))
    assert found == {
        "A_GET": "1",
        "B_GETENV": None,
        "C_ITEM": None,
        "D_ALIAS": "x",
        "E_BARE": None,
        "F_SECRET": None,
    }


def test_compose_interpolation_forms() -> None:
    text = "a: ${REQ:?set it}\nb: ${DEF:-x}\nc: ${EMPTY:-}\nd: ${PLAIN}\ne: $${LITERAL}\n"
    assert envdocs.compose_reads(text) == {
        "REQ": "required",
        "DEF": "default `x`",
        "EMPTY": "default empty",
        "PLAIN": "passed",
    }


def test_env_example_names_only_what_compose_passes_on() -> None:
    example = (ROOT / ".env.example").read_text()
    names = {line.split("=", 1)[0] for line in example.splitlines() if re.match(r"[A-Z]", line)}
    compose = set(envdocs.compose_reads((ROOT / "compose.yaml").read_text()))
    compose |= set(envdocs.compose_override_reads())
    # COMPOSE_PROFILES is read by compose itself (which profile runs), not interpolated.
    unused = sorted(names - compose - {"COMPOSE_PROFILES"})
    assert not unused, f".env.example names variables no compose container receives: {unused}"
    missing = sorted(compose - names)
    assert not missing, f"compose reads variables .env.example does not show: {missing}"


def test_the_compose_guide_names_every_required_variable() -> None:
    compose = envdocs.compose_reads((ROOT / "compose.yaml").read_text())
    required = sorted(name for name, how in compose.items() if "required" in how)
    guide = (ROOT / "docs" / "how-to" / "compose.md").read_text()
    section = guide.split("**Required in `.env`**", 1)[1].split("\n\n", 2)[1]
    assert required and [name for name in required if f"`{name}`" not in section] == []
