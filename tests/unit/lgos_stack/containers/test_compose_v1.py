"""compose.yaml rendered for Compose v1: the three things v1 lacks resolved as v2 would."""

from __future__ import annotations

from pathlib import Path

import yaml
from lgos_stack.containers.compose_v1 import alternate, env_file, render
from lgos_stack.paths import ROOT

COMPOSE = yaml.safe_load((ROOT / "compose.yaml").read_text())


def test_alternate_value_only_when_set_and_not_empty() -> None:
    assert alternate("${APP:+/srv/app}", {"APP": "/home/me"}) == "/srv/app"
    assert alternate("${APP:+/srv/app}", {"APP": ""}) == ""
    assert alternate("${APP:+/srv/app}", {}) == ""
    # Other interpolations are v1's; an escaped dollar stays escaped.
    assert alternate("${KEY:?set KEY} $${APP:+x}", {"APP": "1"}) == "${KEY:?set KEY} $${APP:+x}"


def test_render_for_the_litellm_profile() -> None:
    rendered = render(COMPOSE, {"LGOS_APP_DIR": "/work/app"}, {"litellm"})
    text = yaml.safe_dump(rendered)
    assert "name" not in rendered and ":+" not in text and "required" not in text
    assert rendered["services"]["lgos"]["environment"]["LGOS_APP_DIR"] == "/srv/lgos-app"
    # Bifrost is not enabled: the optional dependencies on it go, the LiteLLM ones stay.
    for service in ("chainlit", "open-webui-setup"):
        depends = rendered["services"][service]["depends_on"]
        assert "bifrost" not in depends and depends["litellm"] == {"condition": "service_healthy"}
    assert render(COMPOSE, {}, {"litellm"})["services"]["lgos"]["environment"]["LGOS_APP_DIR"] == ""
    # The source is left as it was.
    assert COMPOSE["services"]["chainlit"]["depends_on"]["bifrost"]["required"] is False


def test_env_file_reads_key_value_lines(tmp_path: Path) -> None:
    env = tmp_path / "stack.env"
    env.write_text("# a comment\n\nA=1\nB = two words\nC=\n")
    assert env_file(env) == {"A": "1", "B": "two words", "C": ""}
