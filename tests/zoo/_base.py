"""The zoo's common shape: the reference model with exactly one defect.

A member overrides one operation (``op_<name>`` with dots as underscores) or swaps one
model function for the duration of its own calls (``patches``), so the defect reaches
only what the implementation under test computes: the suite's oracles call the model
directly, outside those calls, and stay correct.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar
from unittest import mock

from fauxmplementations import _Broken

#: (object, attribute, replacement): applied while the member handles a call.
Patch = tuple[object, str, object]


class Broken(_Broken):
    """The reference model with one invariant broken (see the module docstring)."""

    kind = "zoo"
    #: Short name, shown in the kill matrix.
    name: ClassVar[str] = "broken"
    #: The one invariant this member breaks, in one sentence.
    invariant: ClassVar[str] = ""
    #: Requirement ids the suite must blame for the defect (each must fail).
    kills: ClassVar[frozenset[str]] = frozenset()
    #: Other ids that may fail with it: the defect really breaks them too.
    collateral_ok: ClassVar[frozenset[str]] = frozenset()
    #: Why the suite cannot kill this member yet (a known hole, reported to the lead).
    gap: ClassVar[str] = ""

    def patches(self) -> tuple[Patch, ...]:
        """Model attributes to replace while this member handles a call."""
        return ()

    @staticmethod
    @contextlib.contextmanager
    def _extra(patches: tuple[Patch, ...]) -> Iterator[None]:
        """Apply *patches* (for a defect that concerns one operation only)."""
        with contextlib.ExitStack() as stack:
            for target, attribute, replacement in patches:
                stack.enter_context(mock.patch.object(target, attribute, replacement))
            yield

    def _patched(self) -> contextlib.AbstractContextManager[None]:
        return self._extra(self.patches())

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        override: Callable[[Mapping[str, Any]], Any] | None = getattr(
            self, "op_" + op.replace(".", "_"), None
        )
        with self._patched():
            if override is not None:
                return override(args)
            return self.reference.call(op, args)
