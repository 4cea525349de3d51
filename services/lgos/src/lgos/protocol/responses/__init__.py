"""The Responses API: ``POST /v1/responses``."""
