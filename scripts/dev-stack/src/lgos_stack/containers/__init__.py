"""Containers on a machine whose engine is started by hand and that reaches no image registry.

- ``engine``: Debian's Docker engine installed when missing, ``dockerd`` under ``.dev/docker/``
  started and stopped by its pid, the client environment (DOCKER_HOST) for it;
- ``bases``: local base images (debootstrap → import → Debian's Python 3.11), the stand-ins for
  the public images the Dockerfiles name in their ``PYTHON_IMAGE`` build argument;
- ``images``: the first-party images compose.yaml builds, built against those bases;
- ``cli``: ``python scripts/containers.py up|images|down|status|env``.
"""
