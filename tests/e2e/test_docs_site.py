"""The docs site works with no internet: built as `make docs-build` builds it, served from a
local folder, and opened in Debian's Chromium with every request to anything but 127.0.0.1
refused, the architecture page draws its Mermaid diagram (the bundle the site carries, not the
CDN Material falls back to). Screenshots: .dev/screenshots/docs-site/."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from lgos_stack.components import components
from lgos_stack.ports import Ports, free_port
from lgos_stack.processes import serve
from playwright.sync_api import Browser, Page, Route

from tests.support.browser import screenshot_dir
from tests.support.servers import ROOT

pytestmark = pytest.mark.socket
PAGE = "explanation/architecture/"
# Material renders each diagram into a closed shadow root; opened here so the test can read it.
OPEN_SHADOW_ROOTS = """
const attach = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (options) {
  return attach.call(this, { ...options, mode: "open" });
};
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", folder],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, built.stderr
    port = free_port()
    # Served once its first page answers: on a busy machine the browser would ask first.
    args = ["http.server", str(port), "--bind", "127.0.0.1"]
    with serve(
        args, port=port, env={}, log=None, cwd=folder, health_path="/", timeout=60
    ) as server:
        yield f"{server.url}/"


def offline_page(browser: Browser, refuse: str | None = None) -> tuple[Page, list[str]]:
    """A page that reaches 127.0.0.1 only (and not ``refuse``); the refused URLs are recorded."""
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.add_init_script(OPEN_SHADOW_ROOTS)
    refused: list[str] = []

    def route(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).hostname != "127.0.0.1" or (refuse and refuse in url):
            refused.append(url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", route)
    return page, refused


def test_the_architecture_diagram_renders_with_no_internet(browser: Browser, site: str) -> None:
    shots = screenshot_dir("docs-site")
    page, refused = offline_page(browser)
    page.goto(site + PAGE)
    diagram = page.locator("div.mermaid svg")
    diagram.wait_for(timeout=30_000)
    page.locator("div.mermaid").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "architecture-offline.png"))
    drawn = diagram.text_content() or ""
    names = [c.name for c in components(Ports.from_env())]
    assert len(names) > 10
    missing = [name for name in names if name not in drawn]
    assert not missing, f"the diagram lacks {missing}: {drawn[:500]}"
    assert not [url for url in refused if "mermaid" in url], refused
    page.close()


def test_without_the_sites_bundle_the_diagram_stays_text(browser: Browser, site: str) -> None:
    # The control: the same page with the site's own bundle refused falls back to the CDN,
    # which is unreachable, so no diagram is drawn. The test above could therefore fail.
    page, refused = offline_page(browser, refuse="assets/javascripts/mermaid.min.js")
    page.goto(site + PAGE)
    page.wait_for_timeout(3_000)
    assert page.locator("div.mermaid svg").count() == 0
    assert any("unpkg.com/mermaid" in url for url in refused), refused
    page.screenshot(path=str(screenshot_dir("docs-site-control") / "architecture.png"))
    page.close()


def test_the_ui_reference_shows_both_uis_screenshots(browser: Browser, site: str) -> None:
    shots = screenshot_dir("docs-site-uis")
    page, _ = offline_page(browser)
    page.goto(site + "reference/uis/")
    images = page.locator("article img")
    images.first.wait_for()
    sources = images.evaluate_all("imgs => imgs.map(i => [i.src, i.complete && i.naturalWidth])")
    assert {src.split("/screenshots/")[1].split("/")[0] for src, _ in sources} == {
        "chainlit",
        "open-webui",
    }, sources
    assert len(sources) == 8 and all(width > 0 for _, width in sources), sources
    page.locator("article img[src*='open-webui']").first.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / "uis-open-webui.png"))
    page.close()
