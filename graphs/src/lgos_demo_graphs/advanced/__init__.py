"""advanced-graph: the showcase graph (``graph``: ``CONFIG``, ``build``); its knowledge interface
in ``knowledge``, with the OpenAI Files + vector-store adapter in ``openai_knowledge``."""
