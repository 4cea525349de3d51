"""The Responses API: ``POST /v1/responses``.

``decode`` turns a request body into a ``GraphRequest``; ``runs`` opens and closes the run
(under its lease for an interrupt graph); ``encode`` turns run events into Response objects and
``response.*`` events; ``routes`` joins them (``background`` queues them).
"""
