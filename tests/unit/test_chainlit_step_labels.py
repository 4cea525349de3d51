"""The Chainlit app labels a Response's commentary with lgos_ui's words alone: its stylesheet
(loaded by the app's config) hides Chainlit's "Using"/"Used" prefix for exactly those names."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from lgos_ui.events import WORKED, WORKING

CHAINLIT = Path(__file__).resolve().parents[2] / "ui" / "chainlit"


def css_string(text: str) -> str:
    """A name as the stylesheet spells it: non-ASCII characters as CSS escapes."""
    return "".join(c if c.isascii() else f"\\{ord(c):x}" for c in text)


def test_the_stylesheet_hides_the_prefix_of_both_commentary_labels() -> None:
    css = (CHAINLIT / "public" / "steps.css").read_text()
    selectors = re.findall(r'\[id="step-([^"]+)"\] > span:first-child', css)
    assert sorted(selectors) == sorted([css_string(WORKING), css_string(WORKED)])
    assert "display: none" in css


def test_the_app_loads_the_stylesheet() -> None:
    config = tomllib.loads((CHAINLIT / ".chainlit" / "config.toml").read_text())
    assert config["UI"]["custom_css"] == "/public/steps.css"
