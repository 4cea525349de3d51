"""The Chat Completions API: ``POST /v1/chat/completions``.

``decode`` turns a request body into a ``GraphRequest``; ``encode`` turns run events into
completion objects and ``chat.completion.chunk`` events; ``routes`` joins them.
"""
