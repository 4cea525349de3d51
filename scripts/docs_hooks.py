"""MkDocs hook: the site carries its own Mermaid bundle, so its diagrams render with no internet.

Material draws a ``mermaid`` fence with the page's global ``mermaid`` when one is loaded, and
fetches the library from a CDN otherwise. ``make docs`` and ``make docs-build`` install the pinned
bundle under .tools/mermaid/ (Makefile: MERMAID_VERSION); mkdocs.yml loads it as an
extra_javascript and this hook adds the file to the site.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import get_plugin_logger
from mkdocs.structure.files import File, Files

BUNDLE = Path(__file__).resolve().parents[1] / ".tools" / "mermaid" / "mermaid.min.js"
SITE_PATH = "assets/javascripts/mermaid.min.js"
log = get_plugin_logger("mermaid")


def on_files(files: Files, config: MkDocsConfig) -> Files:
    if not BUNDLE.exists():
        # A warning fails the strict build: a site without it would need the CDN.
        log.warning(f"{BUNDLE} is missing: `make docs-build` installs it")
    else:
        files.append(File.generated(config, SITE_PATH, abs_src_path=str(BUNDLE)))
    return files
