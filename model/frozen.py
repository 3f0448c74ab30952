"""Deeply frozen JSON values.

The seeds speak of "deeply frozen lossless-JSON" records: once accepted, no caller can
change them.  ``freeze`` copies a JSON value into immutable containers (``FrozenDict``,
``tuple``); ``thaw`` copies it back into fresh ``dict``/``list`` for output, so a caller
mutating an output can never reach model state either.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


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


def freeze(value: Any) -> Any:
    """A deep immutable copy of a JSON value (dict -> FrozenDict, list -> tuple)."""
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A deep mutable copy of a (possibly frozen) JSON value (Mapping -> dict, tuple -> list)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value
