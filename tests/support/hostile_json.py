"""Hypothesis strategies for hostile JSON: NUL and control characters, long strings, huge
numbers, nesting."""

from __future__ import annotations

from hypothesis import strategies as st

texts = st.text(st.characters(codec="utf-8"), max_size=64) | st.sampled_from(
    ["\x00", "a\x00b", "\ud7ff\x1b[0m", "x" * 5000, "resp_" + "0" * 32]
)
numbers = st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False)
json_values = st.recursive(
    st.none() | st.booleans() | numbers | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)
