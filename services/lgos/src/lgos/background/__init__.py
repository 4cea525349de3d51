"""Polling-only background Responses: backend protocol, the in-process backend, jobs."""
