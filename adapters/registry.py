"""Resolve an adapter name given on the command line to an adapter instance.

Names: ``reference`` (the in-process reference model), ``python:MODULE:FACTORY`` (any
in-process adapter), plus the names other modules register (``subprocess:…``,
``upstream``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from dsh_conformance.adapters.contract import Adapter
from dsh_conformance.model.errors import DshError, ErrorCode

Factory = Callable[[str], Adapter]

#: prefix -> factory(rest of the name).  ``reference`` has an empty rest.
FACTORIES: dict[str, tuple[Factory, str]] = {}


def register(prefix: str, factory: Factory, description: str) -> None:
    """Make ``PREFIX`` or ``PREFIX:ARG`` resolvable."""
    FACTORIES[prefix] = (factory, description)


def _reference(rest: str) -> Adapter:
    from dsh_conformance.adapters.reference import ReferenceAdapter

    return ReferenceAdapter()


def _python(rest: str) -> Adapter:
    module, _, attr = rest.partition(":")
    if not module or not attr:
        raise DshError(
            ErrorCode.INVALID_ARGUMENT,
            f"bad adapter name 'python:{rest}'",
            hint="write python:package.module:factory",
        )
    factory = getattr(importlib.import_module(module), attr)
    adapter: Adapter = factory()
    return adapter


register("reference", _reference, "the reference model, in-process")
register("python", _python, "python:MODULE:FACTORY — an in-process adapter factory")

#: Modules that register more adapter kinds when imported (absent ones are skipped).
_PLUGIN_MODULES = ("dsh_conformance.adapters.subprocess", "dsh_conformance.adapters.upstream")


def _load_plugins() -> None:
    for name in _PLUGIN_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise


def resolve(name: str) -> Adapter:
    """Instantiate the adapter called *name*."""
    _load_plugins()
    prefix, _, rest = name.partition(":")
    if prefix not in FACTORIES:
        known = ", ".join(sorted(FACTORIES))
        raise DshError(
            ErrorCode.INVALID_ARGUMENT,
            f"unknown adapter {name!r}",
            hint=f"known adapter kinds: {known}",
        )
    return FACTORIES[prefix][0](rest)


def known() -> dict[str, str]:
    """Adapter kinds and their descriptions, for ``dsh-conformance adapters``."""
    _load_plugins()
    return {prefix: description for prefix, (_, description) in sorted(FACTORIES.items())}
