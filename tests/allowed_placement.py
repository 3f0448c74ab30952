"""Placement implementations that differ from the reference only where seed 000 allows
(issue 25, D-195, D-196).

The note says what the model sees: "one user/message or steering/message containing the
snapshot, ## My request: delimiter, and effective direct prompt".  It names no block
layout and no order among several prefix contexts, so each member here must pass the
seed verdict of the agent areas and fail only reference-profile ids (ENV-053, the
byte-identity REF-* checks).  Selectable as ``python:allowed_placement:<factory>`` with
``tests/`` on the path; run by tests/test_allowed_placement.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from zoo._base import Broken, Patch

from dsh_conformance.model.agent import Agent
from dsh_conformance.model.frozen import FrozenDict, freeze
from dsh_conformance.model.placement import (
    DELIMITER,
    DELIMITER_TEXT,
    PreparedPrompt,
    is_prefix,
    prepare_prompt_message,
)


class _Placement(Broken):
    """The reference model with another placement split (Agent.place_prompt swapped)."""

    kind = "allowed"

    def place(
        self, content: object, source: object, contexts: Sequence[Mapping[str, Any]]
    ) -> PreparedPrompt:
        return prepare_prompt_message(content, source, contexts)

    def patches(self) -> tuple[Patch, ...]:
        return ((Agent, "place_prompt", staticmethod(self.place)),)


class DelimiterInLastBlock(_Placement):
    """The delimiter written at the end of the last prefix text block, not as a block of
    its own: the model reads the same text (D-195)."""

    name = "delimiter in the last snapshot block"

    def place(
        self, content: object, source: object, contexts: Sequence[Mapping[str, Any]]
    ) -> PreparedPrompt:
        prepared = prepare_prompt_message(content, source, contexts)
        blocks = list(prepared.data["content"])
        if DELIMITER not in blocks:
            return prepared
        at = blocks.index(DELIMITER)
        before = blocks[at - 1] if at else None
        if not isinstance(before, Mapping) or before.get("type") != "text":
            return prepared
        merged = FrozenDict({**before, "text": before["text"] + DELIMITER_TEXT})
        blocks[at - 1 : at + 1] = [merged]
        return PreparedPrompt(freeze({**prepared.data, "content": blocks}), prepared.separate)


class PrefixContextsReversed(_Placement):
    """Several prefix contexts baked newest first (their envelope entries alike): the note
    orders snapshot, delimiter and prompt, never prefix contexts among themselves (D-196)."""

    name = "prefix contexts in reverse order"

    def place(
        self, content: object, source: object, contexts: Sequence[Mapping[str, Any]]
    ) -> PreparedPrompt:
        prefix = [c for c in contexts if is_prefix(c)][::-1]
        others = iter(prefix)
        ordered = [next(others) if is_prefix(c) else c for c in contexts]
        return prepare_prompt_message(content, source, ordered)


def delimiter_in_last_block() -> DelimiterInLastBlock:
    return DelimiterInLastBlock()


def prefix_contexts_reversed() -> PrefixContextsReversed:
    return PrefixContextsReversed()


FACTORIES: Mapping[str, Callable[[], _Placement]] = {
    "delimiter_in_last_block": delimiter_in_last_block,
    "prefix_contexts_reversed": prefix_contexts_reversed,
}
