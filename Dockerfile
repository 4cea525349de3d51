# The first-party images, one target each (compose.yaml builds them with `build.target`):
#   lgos            LGOS serving the demo graph registry (also runs `lgos worker`)
#   offline-model   the deterministic stand-in model
#   files           the Files service: the OpenAI Files API and vector stores
#   gateway-jobs    the gateways' one-shot jobs: LiteLLM/Bifrost catalog sync, MCP demo database
# Build context: the repository root. SearXNG (third-party, from pinned requirements) keeps its
# own services/searxng/Dockerfile, and the Chainlit UI (first-party code on Chainlit's pinned
# closure, installed with pip like SearXNG's) its own ui/chainlit/Dockerfile; the gateways
# themselves run from their official images.

# --- base: uv and the workspace manifests, shared by every target ---------------------------
# The Python 3.11 base: the public image, or a local build of the same Python (docs/how-to/containers.md).
ARG PYTHON_IMAGE=python:3.11-slim
FROM ${PYTHON_IMAGE} AS base

ENV PYTHONUNBUFFERED=1 \
    UV_COMPILE_BYTECODE=1 \
    UV_LINK_MODE=copy \
    PATH="/app/.venv/bin:$PATH"

RUN pip install --no-cache-dir uv==0.13.8 \
    && useradd --system --uid 10001 --home-dir /app lgos

WORKDIR /app
# `uv sync --frozen` needs every workspace member's manifest, even to install one package.
COPY pyproject.toml uv.lock ./
COPY services/lgos/pyproject.toml services/lgos/pyproject.toml
COPY services/offline-model/pyproject.toml services/offline-model/pyproject.toml
COPY services/files/pyproject.toml services/files/pyproject.toml
COPY services/service-kit/pyproject.toml services/service-kit/pyproject.toml
COPY graphs/pyproject.toml graphs/pyproject.toml
COPY gateways/pyproject.toml gateways/pyproject.toml
COPY ui/client/pyproject.toml ui/client/pyproject.toml
COPY scripts/dev-stack/pyproject.toml scripts/dev-stack/pyproject.toml

# --- lgos ------------------------------------------------------------------------------------
FROM base AS lgos
COPY services/service-kit/src services/service-kit/src
COPY services/lgos/src services/lgos/src
COPY graphs/src graphs/src
# /knowledge: the knowledge-setup job writes advanced-graph's vector-store id into a named
# volume there; a new volume takes this directory's owner.
RUN uv sync --frozen --no-dev --package lgos-demo-graphs \
    && mkdir -p /knowledge && chown 10001 /knowledge

USER 10001
EXPOSE 3004
HEALTHCHECK --interval=5s --timeout=3s --retries=12 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:3004/health', timeout=2)"]
# Serves LGOS_REGISTRY: the demo graphs unless the environment names others.
ENV LGOS_REGISTRY=lgos_demo_graphs.registry:create_registry
CMD ["lgos", "serve", "--host", "0.0.0.0", "--port", "3004"]

# --- offline-model ---------------------------------------------------------------------------
FROM base AS offline-model
COPY services/service-kit/src services/service-kit/src
COPY services/offline-model/src services/offline-model/src
RUN uv sync --frozen --no-dev --package offline-model

USER 10001
EXPOSE 3007
HEALTHCHECK --interval=5s --timeout=3s --retries=12 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:3007/health', timeout=2)"]
CMD ["offline-model", "--host", "0.0.0.0", "--port", "3007"]

# --- files -----------------------------------------------------------------------------------
FROM base AS files
ENV FILES_HOST=0.0.0.0 \
    FILES_STORAGE_DIR=/data
COPY services/service-kit/src services/service-kit/src
COPY services/files/src services/files/src
RUN uv sync --frozen --no-dev --package files-service \
    && mkdir /data && chown 10001 /data

USER 10001
VOLUME ["/data"]
EXPOSE 3006
HEALTHCHECK --interval=5s --timeout=3s --retries=12 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:3006/health', timeout=2)"]
CMD ["files-service", "--host", "0.0.0.0", "--port", "3006"]

# --- gateway-jobs ----------------------------------------------------------------------------
FROM base AS gateway-jobs
COPY services/service-kit/src services/service-kit/src
COPY gateways/src gateways/src
COPY gateways/litellm gateways/litellm
COPY gateways/bifrost gateways/bifrost
# The jobs write into named volumes mounted at these paths; a new volume takes the ownership of
# the image's directory, so the non-root user can write there.
RUN uv sync --frozen --no-dev --package lgos-gateways \
    && mkdir -p /config /mcp /pricing \
    && chown 10001 /config /mcp /pricing

USER 10001
CMD ["lgos-litellm-sync", "--help"]
