"""Compiled JSON Schema validation: jsonschema-rs decides, jsonschema explains (D-500).

The suite checks every result an implementation returns against its op's schema
(adapters/results.py) and the model checks every scenario script before it runs
(model/scenario.py).  Done by the pure-Python ``jsonschema`` walk, that was most of a
run's time (issue 44: 35 % of a reference run, 69 % of another implementation's).  So
each schema is compiled once per process by ``jsonschema-rs``, which says at native
speed whether a value is valid; only a value it does not call valid reaches the
pure-Python validator, whose errors (``best_match``, ``iter_errors``) stay the words that
reports and tests show, unchanged.

jsonschema-rs reads some Python values otherwise than ``jsonschema`` does (a tuple as an
array, a ``Decimal`` as a number) and overflows its native stack on a value nested tens
of thousands deep under a recursive schema.  So it is asked only about values built of
exact JSON types (``dict``, ``list``, ``str``, ``int``, ``float``, ``bool``, ``None``)
nested at most ``MAX_DEPTH`` deep (``plain_json``); every other value, and every value it
refuses to read (a lone surrogate, an ``int`` subclass), is decided by ``jsonschema``
alone, as before.  On exact JSON types both agree (tests/test_compiled_schemas.py holds
them to it on every op's results and on scripts), so a verdict never depends on which
one answered.

jsonschema, referencing and jsonschema-rs are imported where first needed, not with this
module: a process that never validates (the served reference model answering a
``uri.encode``) would otherwise hold about 20 MB of them from its start (issue 44;
tests/test_lazy_validation_imports.py keeps it so).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Final

from dsh_conformance.model import jsstr

if TYPE_CHECKING:
    import jsonschema

__all__ = ["MAX_DEPTH", "Compiled", "plain_json"]

#: Deepest nesting the compiled validator is asked about (deeper goes to jsonschema).
MAX_DEPTH: Final = 256
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})


def plain_json(value: object, depth: int = 0) -> bool:
    """Whether *value* is made of exact JSON types only (``str`` keys), at most
    ``MAX_DEPTH`` deep: what jsonschema-rs and jsonschema read alike.  The accelerator's
    ``exact_json`` answers the same at C speed (this walk was most of the cost of a
    valid result); this is its definition."""
    kind = type(value)
    if kind is dict:
        if any(type(key) is not str for key in value):  # type: ignore[attr-defined]
            return False
        items: Any = value.values()  # type: ignore[attr-defined]
    elif kind is list:
        items = value
    else:
        return kind in _SCALARS
    if depth >= MAX_DEPTH:
        return False
    for item in items:
        item_kind = type(item)
        if item_kind is str or item_kind is int:
            continue
        if item_kind is dict or item_kind is list:
            if not plain_json(item, depth + 1):
                return False
        elif item_kind not in _SCALARS:
            return False
    return True


def _exact(value: object) -> bool:
    """``plain_json(value)``, by the accelerator when it is built."""
    fast = jsstr._FAST
    if fast is not None:
        return bool(fast.exact_json(value, MAX_DEPTH))
    return plain_json(value)


class Compiled:
    """One schema, compiled once: ``is_valid`` asks jsonschema-rs where it reads the
    value exactly and jsonschema otherwise; ``iter_errors`` and ``best_match`` are
    jsonschema's own (built on first use), for the message of an invalid value.

    *resources* are the ``(uri, schema)`` documents the schema's ``$ref`` reach.
    """

    def __init__(
        self, schema: Mapping[str, Any], resources: Sequence[tuple[str, Mapping[str, Any]]] = ()
    ) -> None:
        self.schema = dict(schema)
        self.resources = tuple((uri, dict(data)) for uri, data in resources)
        import jsonschema_rs

        registry = jsonschema_rs.Registry(list(self.resources)) if self.resources else None
        self._fast = jsonschema_rs.Draft202012Validator(
            self.schema, registry=registry, validate_formats=False
        )

    @cached_property
    def slow(self) -> jsonschema.Draft202012Validator:
        """The pure-Python validator of the same schema: the reference for messages."""
        import jsonschema
        from referencing import Registry, Resource

        registry: Registry[Any] = Registry().with_resources(
            (uri, Resource.from_contents(data)) for uri, data in self.resources
        )
        return jsonschema.Draft202012Validator(self.schema, registry=registry)

    def _fast_valid(self, value: object) -> bool:
        """True when jsonschema-rs reads *value* exactly and finds it valid; False leaves
        the answer to jsonschema."""
        if not _exact(value):
            return False
        try:
            return bool(self._fast.is_valid(value))
        except Exception:  # a value it cannot read (a lone surrogate): jsonschema decides
            return False

    def is_valid(self, value: object) -> bool:
        """Whether *value* is valid, exactly as ``jsonschema`` would say."""
        return self._fast_valid(value) or bool(self.slow.is_valid(value))

    def iter_errors(self, value: object) -> Iterator[jsonschema.ValidationError]:
        """Every error of *value*, as ``jsonschema`` lists them (none when valid)."""
        if self._fast_valid(value):
            return iter(())
        return self.slow.iter_errors(value)

    def best_match(self, value: object) -> jsonschema.ValidationError | None:
        """``jsonschema.exceptions.best_match`` of *value*'s errors, None when valid."""
        if self._fast_valid(value):
            return None
        import jsonschema

        best: jsonschema.ValidationError | None = jsonschema.exceptions.best_match(
            self.slow.iter_errors(value)
        )
        return best
