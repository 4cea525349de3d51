"""Every code block the docs mark runnable runs, so no sample rots.

A block is marked by an HTML comment on the line before its fence:

    <!-- runnable: lgos -->    Python, against a private `lgos serve` of the demo graphs (its key
                               sk-lgos-local-only, as `make dev`'s), in place of 127.0.0.1:3004,
                               and its Files service in place of 127.0.0.1:3006
    <!-- runnable: files -->   Python, against a private Files service (key sk-files-local-only),
                               in place of 127.0.0.1:3006
    <!-- runnable: shell -->   bash, in the repository root, touching nothing outside it

Each block runs in a process of its own and must exit 0. Blocks without a marker (the gateway's
samples, `make dev` itself) are not run here; the e2e tier drives those paths.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from tests.support.files import files_service
from tests.support.servers import ROOT, Server, free_port, serve

pytestmark = pytest.mark.socket

MARKED = re.compile(r"^<!-- runnable: (\w+) -->\n```(\w+)\n(.*?)^```", re.M | re.S)
LGOS_URL, LGOS_KEY = "http://127.0.0.1:3004", "sk-lgos-local-only"
FILES_URL, FILES_KEY = "http://127.0.0.1:3006", "sk-files-local-only"
TARGETS = {"lgos": "python", "files": "python", "shell": "bash"}


@dataclass(frozen=True)
class Sample:
    page: str
    line: int
    target: str
    language: str
    code: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def samples() -> list[Sample]:
    found = []
    for path in sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")]):
        text = path.read_text()
        for match in MARKED.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            page = str(path.relative_to(ROOT))
            found.append(Sample(page, line, match.group(1), match.group(2), match.group(3)))
    return found


SAMPLES = samples()


def test_the_marked_samples_are_found_and_well_formed() -> None:
    assert len(SAMPLES) >= 8, "runnable samples lost their markers"
    for sample in SAMPLES:
        assert sample.target in TARGETS, f"{sample}: unknown target {sample.target!r}"
        assert sample.language == TARGETS[sample.target], f"{sample}: {sample.language} block"


@pytest.fixture(scope="module")
def docs_lgos(
    graph_env: dict[str, str], docs_files: Server, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The demo graphs as `make dev` serves them on 3004: with its key, on a free port."""
    port = free_port()
    state = tmp_path_factory.mktemp("docs-lgos")
    env = {
        **graph_env,
        "LGOS_PORT": str(port),
        "LGOS_STATE_DIR": str(state),
        "LGOS_API_KEYS": f"{LGOS_KEY}=gateway",
        "LGOS_REGISTRY": "lgos_demo_graphs.registry:create_registry",
        "DEMO_API_REPORT_STEP_SECONDS": "0.05",
        "DEMO_API_FILES_BASE_URL": f"{docs_files.url}/v1",
        "DEMO_API_FILES_API_KEY": FILES_KEY,
    }
    with serve(["lgos", "serve"], port=port, env=env, log=state / "lgos.log") as server:
        yield server


@pytest.fixture(scope="module")
def docs_files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with files_service(tmp_path_factory.mktemp("docs-files"), FILES_KEY) as process:
        yield process.server


def run(sample: Sample, code: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    command = [sys.executable, "-c", code] if sample.language == "python" else ["bash", "-c", code]
    return subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("sample", SAMPLES, ids=str)
def test_sample_runs(sample: Sample, request: pytest.FixtureRequest) -> None:
    code = sample.code
    if sample.target == "lgos":
        assert LGOS_URL in code, f"{sample}: an lgos sample calls {LGOS_URL}"
        code = code.replace(LGOS_URL, request.getfixturevalue("docs_lgos").url)
    if sample.target in ("lgos", "files"):
        code = code.replace(FILES_URL, request.getfixturevalue("docs_files").url)
    if sample.target == "files":
        assert FILES_URL in sample.code, f"{sample}: a files sample calls {FILES_URL}"
    result = run(sample, code)
    assert result.returncode == 0, f"{sample} failed:\n{result.stdout}\n{result.stderr}"
    assert result.stdout.strip(), f"{sample} printed nothing"


def test_a_failing_sample_fails() -> None:
    broken = Sample("docs/x.md", 1, "shell", "bash", "exit 3\n")
    assert run(broken, broken.code).returncode == 3
    assert MARKED.search("<!-- runnable: lgos -->\n```python\nprint(1)\n```\n")
    assert not MARKED.search("<!-- not runnable -->\n```python\nprint(1)\n```\n")
