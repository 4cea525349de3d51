"""The server plumbing LGOS, the Files service and offline-model share, one module per job.

- :mod:`service_kit.envelope`: the OpenAI error envelope and the response that carries it
- :mod:`service_kit.limits`: request bodies bounded while they are read (per-route limits)
- :mod:`service_kit.logs`: one JSON object a line, the shape every first-party process logs
- :mod:`service_kit.responses`: JSON responses encoded with orjson
- :mod:`service_kit.openapi`: a service's own OpenAPI document in place of FastAPI's
- :mod:`service_kit.settings`: setting types the services share (bind address, limits, pools)
- :mod:`service_kit.serve`: the ``--host``/``--port`` options and uvicorn run the CLIs share
- :mod:`service_kit.framing`: uvicorn's HTTP protocol answering garbled framing with an envelope

This module imports none of them, so a process that only logs (the gateway jobs) loads no
web framework.
"""
