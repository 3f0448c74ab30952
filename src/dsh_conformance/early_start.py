"""Start the implementation's process while the harness is still getting ready (D-537).

A run spends its first second importing pytest and Hypothesis and collecting the suite;
an implementation behind ``subprocess:`` spends its own start-up (an interpreter, a
runtime, its imports) before it can answer the handshake.  Done one after the other,
the two add up; so ``dsh-conformance run`` launches the process (spawned, handshake
request sent, reply not read) as soon as its options are checked, and hands the
adapter to the pytest session, whose first use reads the reply with every usual check.

Only ``subprocess:`` names start early: resolving one only builds the command line,
where other kinds may import user code or install packages before pytest is
configured.  A run in pytest-xdist workers starts one adapter per worker instead, and
a process that cannot start is left for the session to start and report as it would.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from dsh_conformance.adapters.contract import Adapter

#: Where the session finds the launched adapter (``suite.implementation``).
EARLY_KEY = pytest.StashKey["EarlyStart"]()
#: The adapter kind that starts early.
PREFIX = "subprocess:"


class EarlyStart:
    """A pytest plugin holding one launched adapter until the session takes it."""

    def __init__(self, name: str, adapter: Adapter) -> None:
        self.name = name
        self._adapter: Adapter | None = adapter

    @classmethod
    def launch(cls, name: str) -> EarlyStart | None:
        """The adapter called *name*, its process started, or None when it does not start
        early (another kind, or a start that failed: the session retries and reports)."""
        if not name.startswith(PREFIX):
            return None
        from dsh_conformance.adapters.contract import AdapterFault
        from dsh_conformance.adapters.registry import resolve
        from dsh_conformance.model.errors import DshError

        try:
            adapter = resolve(name)
        except (DshError, ValueError):
            return None
        launch = getattr(adapter, "launch", None)
        if launch is not None:
            try:
                launch()
            except AdapterFault:
                adapter.close()
                return None
        return cls(name, adapter)

    def pytest_configure(self, config: pytest.Config) -> None:
        config.stash[EARLY_KEY] = self

    def take(self, name: str) -> Adapter | None:
        """The launched adapter, once, if it is the one called *name* (else it is ended)."""
        if name != self.name:
            self.close_unused()
        adapter, self._adapter = self._adapter, None
        return adapter

    def close_unused(self) -> None:
        """End the process if the session never took it (nothing selected, or no session)."""
        adapter, self._adapter = self._adapter, None
        if adapter is not None:
            adapter.close()

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.close_unused()
