"""The Chat Completions API: ``POST /v1/chat/completions``."""
