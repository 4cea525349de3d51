"""OpenAI wire protocols: decoding requests into ``GraphRequest`` and encoding run events."""
