"""Every public model function fails only with DshError and a stable code on bad input."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsh_conformance.model import mentions, serialization, uri
from dsh_conformance.model.errors import DshError, ErrorCode

anything = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.binary()),
    lambda c: st.one_of(
        st.lists(c, max_size=3), st.dictionaries(st.text(max_size=3), c, max_size=3)
    ),
    max_leaves=6,
)

FUNCTIONS: list[Callable[[Any], object]] = [
    uri.encode,
    uri.decode,
    mentions.parse,
    mentions.format_mention,
    lambda v: mentions.format_mention("id", v),
    serialization.stringify_tag_safe,
]
CODES = {code.value for code in ErrorCode}


@pytest.mark.parametrize("function", FUNCTIONS)
@given(value=anything)
def test_only_typed_errors(function: Callable[[Any], object], value: object) -> None:
    try:
        function(value)
    except DshError as exc:
        error = exc
    else:
        return
    assert error.code in CODES
    assert error.message
