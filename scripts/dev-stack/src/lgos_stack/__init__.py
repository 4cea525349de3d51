"""The native (no-Docker) demo stack and the helpers its tests and benchmarks share.

- ``paths``: the checkout, the state folder and every third-party binary the stack runs;
- ``ports``: each component's port (fixed, or from the environment) and free ports;
- ``processes``: start a server, wait until healthy, stop it (and what a detached stack recorded);
- ``servers``: LGOS, LiteLLM, SearXNG and Redis started on free ports;
- ``keys``: the local-only keys and logins the stack defaults to;
- ``model``, ``components`` and ``jobs``: a component, the stack's components in start order,
  and their setup steps (one-shot jobs);
- ``runner`` and ``cli``: ``up`` / ``down`` / ``status`` / ``restart``;
- ``bench``: what the benchmarks share (graphs, load client, statistics, report tables);
- ``containers``: the local Docker engine, its base images and stand-ins, and compose.yaml's
  images built on them (``scripts/containers.py``).
"""
