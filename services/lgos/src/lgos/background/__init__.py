"""Polling-only background Responses: the backend protocol, the in-process engine, and the
distributed one (PostgreSQL records, Redis dispatch, ``lgos worker``)."""
