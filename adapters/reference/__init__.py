"""The in-process reference-model adapter.

Each area registers its operations in one module of this package with ``@op``; the
adapter dispatches by name.  Handlers take the adapter's per-instance state and the JSON
arguments, and return JSON or raise ``DshError`` (which becomes a typed protocol error).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, Final

from attrs import define, field, frozen

from dsh_conformance.adapters.contract import (
    Handshake,
    ImplementationError,
    ImplementationInfo,
)
from dsh_conformance.model.errors import DshError, ErrorCode

Handler = Callable[["State", Mapping[str, Any]], Any]

#: Modules that register operations; each owns one area.
_OP_MODULES = (
    "uri_ops",
    "prepare_ops",
    "agent_ops",
    "side_ops",
    "scenario_ops",
    "side_scenario_ops",
)


@frozen
class Op:
    """One registered operation."""

    name: str
    capability: str
    handler: Handler
    #: A function of its arguments alone: no state read or written (``pure_operations``).
    pure: bool = False


REGISTRY: dict[str, Op] = {}


def op(name: str, capability: str, *, pure: bool = False) -> Callable[[Handler], Handler]:
    """Register *handler* as the reference model's implementation of operation *name*
    (*pure*: its result depends on its arguments alone, and it changes no state)."""

    def register(handler: Handler) -> Handler:
        if name in REGISTRY:
            raise RuntimeError(f"operation {name!r} registered twice")
        REGISTRY[name] = Op(name, capability, handler, pure)
        return handler

    return register


@define
class State:
    """Per-adapter mutable state, one slot per area (only stateful areas use it)."""

    slots: dict[str, Any] = field(factory=dict)

    def area(self, name: str, factory: Callable[[], Any]) -> Any:
        """The state object of area *name*, created by *factory* on first use."""
        if name not in self.slots:
            self.slots[name] = factory()
        return self.slots[name]


def _load_ops() -> None:
    for module in _OP_MODULES:
        try:
            importlib.import_module(f"{__name__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{module}":
                raise


class ReferenceAdapter:
    """The executable reference model behind the adapter contract, in-process."""

    def __init__(self, capabilities: frozenset[str] | None = None) -> None:
        _load_ops()
        self.state = State()
        declared = {o.capability for o in REGISTRY.values()}
        self._capabilities: frozenset[str] = frozenset(
            declared if capabilities is None else capabilities & declared
        )
        #: The handler of every supported operation: one lookup per call.
        self._handlers = {
            name: entry.handler
            for name, entry in REGISTRY.items()
            if entry.capability in self._capabilities
        }

    def handshake(self) -> Handshake:
        from dsh_conformance import __version__

        return Handshake(
            implementation=ImplementationInfo(
                name="dsh-conformance reference model",
                language="python",
                version=__version__,
                homepage="https://github.com/dsh-conformance/dsh-conformance",
            ),
            capabilities=frozenset(self._capabilities),
        )

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        handler = self._handlers.get(op)
        if handler is None:
            if op == "reset":
                self.state = State()
                return None
            raise ImplementationError(
                ErrorCode.UNSUPPORTED_OPERATION, f"operation {op!r} is not supported"
            )
        try:
            return handler(self.state, args)
        except DshError as exc:
            raise ImplementationError(exc.code, exc.message) from exc

    def pure_operations(self) -> dict[str, Callable[[Mapping[str, Any]], Any]]:
        """The supported pure operations' handlers, called with the arguments alone: what
        the served model runs without ``call`` around each request (adapters/serve.py),
        which answers whatever a handler raises.  None when a subclass answers ``call``
        its own way."""
        if type(self).call is not ReferenceAdapter.call:
            return {}
        return {
            name: partial(REGISTRY[name].handler, _NO_STATE)
            for name in self._handlers
            if REGISTRY[name].pure
        }

    def close(self) -> None:
        self.state = State()


#: What a pure operation's handler is given for the state it never reads.
_NO_STATE: Final = State()
