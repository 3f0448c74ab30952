"""Deeply frozen JSON values.

The seeds speak of "deeply frozen lossless-JSON" records: once accepted, no caller can
change them.  ``freeze`` copies a JSON value into immutable containers (``FrozenDict``,
``tuple``); ``thaw`` copies it back into fresh ``dict``/``list`` for output, so a caller
mutating an output can never reach model state either.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Final

from dsh_conformance.model import jsstr


class FrozenDict(Mapping[str, Any]):
    """An immutable, insertion-ordered JSON object."""

    __slots__ = ("_data", "_hash")

    def __init__(self, items: Mapping[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = dict(items or {})
        self._hash: int | None = None

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        """``dict.get`` speed (Mapping.get goes through ``__getitem__`` and an exception)."""
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(tuple(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return dict(self._data) == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


#: Values ``freeze`` and ``thaw`` return as they are (immutable JSON scalars).
_LEAVES: Final = frozenset({str, int, float, bool, type(None)})


def wrap(data: dict[str, Any]) -> FrozenDict:
    """A FrozenDict owning *data* (a fresh dict nobody else holds): no second copy."""
    frozen = FrozenDict.__new__(FrozenDict)
    frozen._data = data
    frozen._hash = None
    return frozen


def freeze(value: Any) -> Any:
    """A deep immutable copy of a JSON value (dict -> FrozenDict, list -> tuple).

    One pass: exact JSON types are dispatched by ``type`` and scalars are kept in place
    without a call; other mappings and sequences take the general path."""
    kind = type(value)
    if kind is dict:
        return wrap({k: v if type(v) in _LEAVES else freeze(v) for k, v in value.items()})
    if kind is list or kind is tuple:
        return tuple([v if type(v) in _LEAVES else freeze(v) for v in value])
    if kind in _LEAVES:
        return value
    if isinstance(value, Mapping):
        return wrap({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A deep mutable copy of a (possibly frozen) JSON value (Mapping -> dict, tuple -> list).

    The accelerator copies values of exact JSON types and ``FrozenDict`` in one C walk
    (D-501: the copies of logs and requests were most of a lockstep test's time); any
    other value, or one it does not take, is copied by ``_thaw``, the definition."""
    fast = jsstr._FAST
    if fast is not None:
        out = fast.thaw(value, FrozenDict)
        if out is not NotImplemented:
            return out
    return _thaw(value)


def _thaw(value: Any) -> Any:
    """``thaw`` in Python, dispatched like ``freeze``: a FrozenDict's own dict is read in
    place."""
    kind = type(value)
    if kind is FrozenDict:
        items = value._data.items()
    elif kind is dict:
        items = value.items()
    elif kind is tuple or kind is list:
        return [v if type(v) in _LEAVES else _thaw(v) for v in value]
    elif kind in _LEAVES:
        return value
    elif isinstance(value, Mapping):
        items = value.items()
    elif isinstance(value, list | tuple):
        return [_thaw(v) for v in value]
    else:
        return value
    return {k: v if type(v) in _LEAVES else _thaw(v) for k, v in items}
