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


def _bad(name: str, why: str, hint: str) -> DshError:
    return DshError(ErrorCode.INVALID_ARGUMENT, f"bad adapter name {name!r}: {why}", hint=hint)


_PYTHON_HINT = "write python:package.module:factory (a callable returning an adapter)"


def _python_parts(rest: str) -> tuple[str, str]:
    """``MODULE`` and ``FACTORY`` of ``python:MODULE:FACTORY``, checked for shape only."""
    module, _, attr = rest.partition(":")
    dotted = module.split(".")
    if not module or not attr or not all(p.isidentifier() for p in dotted):
        raise _bad(f"python:{rest}", "not MODULE:FACTORY", _PYTHON_HINT)
    if not attr.isidentifier():
        raise _bad(f"python:{rest}", f"{attr!r} is not a Python name", _PYTHON_HINT)
    return module, attr


def _python(rest: str) -> Adapter:
    module, attr = _python_parts(rest)
    name = f"python:{rest}"
    try:
        loaded = importlib.import_module(module)
    except ImportError as exc:
        raise _bad(name, f"cannot import {module}: {exc}", "is the module on sys.path?") from exc
    factory = getattr(loaded, attr, None)
    if not callable(factory):
        why = "not found" if factory is None else "not callable"
        raise _bad(name, f"{module}.{attr} is {why}", _PYTHON_HINT)
    try:
        adapter = factory()
    except Exception as exc:
        raise _bad(
            name, f"{module}.{attr}() raised {type(exc).__name__}: {exc}", _PYTHON_HINT
        ) from exc
    if not all(callable(getattr(adapter, m, None)) for m in ("handshake", "call", "close")):
        raise _bad(
            name,
            f"{module}.{attr}() returned a {type(adapter).__name__}, not an adapter",
            "the factory must return an object with handshake(), call(op, args), close()",
        )
    result: Adapter = adapter
    return result


def check_name(name: str) -> None:
    """Reject a malformed adapter name before anything starts (``DshError``, exit 78):
    an unknown kind, an unparsable command line, a python: name whose module is absent."""
    prefix, _, rest = name.partition(":")
    _load_plugins_for(prefix)
    if prefix not in FACTORIES:
        raise DshError(
            ErrorCode.INVALID_ARGUMENT,
            f"unknown adapter {name!r}",
            hint=f"known adapter kinds: {', '.join(sorted(FACTORIES))}",
        )
    if prefix == "python":
        import importlib.util

        module, attr = _python_parts(rest)
        try:
            found = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            found = None
        if found is None:
            raise _bad(name, f"no module named {module!r}", "is the module on sys.path?")
        try:
            factory = getattr(importlib.import_module(module), attr, None)
        except Exception as exc:
            raise _bad(name, f"importing {module} failed: {exc}", "is it importable?") from exc
        if not callable(factory):
            why = "not found" if factory is None else "not callable"
            raise _bad(name, f"{module}.{attr} is {why}", _PYTHON_HINT)
    elif prefix == "subprocess":
        import shlex

        try:
            argv = shlex.split(rest)
        except ValueError as exc:
            raise _bad(
                name, f"the command line does not parse ({exc})", "check the shell quoting"
            ) from exc
        if not argv:
            raise _bad(
                name, "no command", "write subprocess:'node adapter.mjs' (a shell command line)"
            )


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


def _load_plugins_for(prefix: str) -> None:
    """The plugin modules, unless *prefix* is a kind this module registers itself: the
    served reference model never imports the subprocess and upstream adapters (hashlib's
    OpenSSL among them: 4 MB of a served process, issue 44)."""
    if prefix not in FACTORIES:
        _load_plugins()


def resolve(name: str) -> Adapter:
    """Instantiate the adapter called *name*."""
    prefix, _, rest = name.partition(":")
    _load_plugins_for(prefix)
    if prefix not in FACTORIES:
        known = ", ".join(sorted(FACTORIES))
        raise DshError(
            ErrorCode.INVALID_ARGUMENT,
            f"unknown adapter {name!r}",
            hint=f"known adapter kinds: {known}",
        )
    check_name(name)
    return FACTORIES[prefix][0](rest)


def known() -> dict[str, str]:
    """Adapter kinds and their descriptions, for ``dsh-conformance adapters``."""
    _load_plugins()
    return {prefix: description for prefix, (_, description) in sorted(FACTORIES.items())}
