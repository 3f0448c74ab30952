"""Checks that could not judge: one unreadable field, or the suite's own reading error.

Unreadability is per field (issue 42 item 2, D-522): a result whose shape breaks its op's
schema at one field is still read; the field is replaced by ``Unreadable``, and only a
check that uses it stops.  That check judges nothing: its requirement is unjudged in this
test, with the field, the type the schema gives it and the value seen; every other check
of the same result runs and judges.

A ``KeyError``/``IndexError``/``TypeError``/``AttributeError`` inside a check on a value
that passed its schema (issue 45 item 2, D-521) is the suite's, not the adapter's: the
check read something the protocol never promised (a field the reference writes and a host
need not).  It is unjudged too and reported as a suite problem naming the test, the
requirement and the field -- unless the key is one the op's schema requires and the host
left out, which is the host's unreadable field.  Neither makes the test a protocol
problem or marks the adapter unreliable.

The harness takes the entries per test (``take``) and resolves an entry without a
requirement (the test itself stopped on it) to every cited id not yet concluded.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, Final, NoReturn

#: Entries of the running test: requirement ("" when the test body stopped), field,
#: expected, seen, reason, by ("host" | "suite").
_ENTRIES: list[dict[str, str]] = []
#: Results the running test read, (op, result): where a missing required key is looked up.
_RESULTS: deque[tuple[str, object]] = deque(maxlen=64)
#: How much of a seen value an entry shows.
SEEN: Final = 120


def _show(value: object) -> str:
    from dsh_conformance.reporting.escape import show_value

    if isinstance(value, Unreadable):
        value = value.seen_value
    try:
        return show_value(value, SEEN)
    except Exception:  # a value JSON cannot hold: its type is enough
        return type(value).__name__


class UnreadableField(Exception):
    """A check used a field it cannot read (D-522): the check judges nothing."""

    def __init__(self, op: str, field: str, expected: str, seen: str, by: str = "host") -> None:
        what = f"{op} {field}" if op else field
        super().__init__(f"unreadable field {what}: expected {expected}, got {seen}")
        self.op = op
        self.field = field
        self.expected = expected
        self.seen = seen
        self.by = by

    def entry(self, requirement: str = "") -> dict[str, str]:
        return {
            "requirement": requirement,
            "field": f"{self.op} {self.field}".strip(),
            "expected": self.expected,
            "seen": self.seen,
            "reason": str(self),
            "by": self.by,
        }


class Unreadable:
    """Stands for a field whose value breaks its schema: any use of it raises
    ``UnreadableField``; ``repr`` names it (a failure message may show it)."""

    __slots__ = ("expected", "field", "op", "seen_value")
    #: How reporting.escape.show_value knows it (it shows the value seen).
    __dsh_unreadable__ = True

    def __init__(self, op: str, field: str, expected: str, seen: object) -> None:
        self.op = op
        self.field = field
        self.expected = expected
        self.seen_value = seen

    def _raise(self, *_: object, **__: object) -> NoReturn:
        raise UnreadableField(self.op, self.field, self.expected, _show(self.seen_value))

    def __repr__(self) -> str:
        return f"<unreadable {self.field}: {_show(self.seen_value)}>"

    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _raise
    __hash__ = __bool__ = __len__ = __iter__ = __contains__ = _raise
    __getitem__ = __int__ = __float__ = __index__ = __str__ = __format__ = _raise
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _raise

    def __getattr__(self, name: str) -> Any:
        self._raise()


def _expected(error: Any) -> str:
    """What the schema wanted where *error* failed, in a few words."""
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind:
        return str(kind)
    if error.validator in ("anyOf", "oneOf"):
        return "one of the forms its schema allows"
    return f"a value its schema allows ({error.validator})"


def _pointer(path: Any) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path) or "/"


def _replace(value: Any, path: list[Any], make: Any) -> Any:
    """*value* with the node at *path* replaced by ``make(node)`` (copies on the way)."""
    if not path:
        return make(value)
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and head in value:
        return {**value, head: _replace(value[head], rest, make)}
    if isinstance(value, list) and isinstance(head, int) and 0 <= head < len(value):
        out = list(value)
        out[head] = _replace(value[head], rest, make)
        return out
    return value


def with_unreadable_fields(op: str, result: object, errors: list[Any]) -> object | None:
    """*result* with each field its schema *errors* point at replaced by ``Unreadable``;
    None when an error is at the result itself (nothing of it can be read)."""
    if not errors or any(not list(e.absolute_path) for e in errors):
        return None
    out = result
    for error in sorted(errors, key=lambda e: -len(list(e.absolute_path))):
        path = list(error.absolute_path)
        field = _pointer(path)
        expected = _expected(error)
        out = _replace(out, path, lambda node, f=field, x=expected: Unreadable(op, f, x, node))
    return out


# --- what the running test could not judge ----------------------------------------------


def read_by_the_test(op: str, result: object) -> None:
    """Note a result the running test read (looked up only on a reading error)."""
    _RESULTS.append((op, result))


def _missing_required(key: object) -> tuple[str, str] | None:
    """(op, pointer) of a result the test read that lacks *key* its schema requires."""
    if not isinstance(key, str):
        return None
    from dsh_conformance.adapters.results import missing_required

    for op, result in _RESULTS:
        pointer = missing_required(op, result, key)
        if pointer is not None:
            return op, pointer
    return None


def reading_entry(exc: BaseException, requirement: str = "") -> dict[str, str]:
    """The entry for a reading error: the host's when it names a key the schema requires
    and a result left out, else the suite's (D-521)."""
    key = exc.args[0] if isinstance(exc, KeyError) and exc.args else None
    host = _missing_required(key)
    what = f"{type(exc).__name__} {exc}".strip()
    if host is not None:
        op, pointer = host
        where = f"{pointer.rstrip('/')}/{key}"  # the key the host left out, not its object
        return UnreadableField(op, where, "a field its schema requires", "nothing").entry(
            requirement
        )
    field = repr(key) if key is not None else what
    return {
        "requirement": requirement,
        "field": str(field),
        "expected": "a field the check must not need unless the note requires it",
        "seen": what,
        "reason": f"suite problem: {what} while "
        + (f"checking {requirement}" if requirement else "the test read a value")
        + " (a value the suite derived: the check reads a field the protocol does not promise)",
        "by": "suite",
    }


def note(entry: Mapping[str, str]) -> None:
    if dict(entry) not in _ENTRIES:
        _ENTRIES.append(dict(entry))


def noted(requirement: str) -> bool:
    """Whether a check of *requirement* could not judge in the running test."""
    return any(e["requirement"] == requirement for e in _ENTRIES)


def take() -> list[dict[str, str]]:
    """The entries since the last call (the harness calls it per test)."""
    taken = list(_ENTRIES)
    _ENTRIES.clear()
    _RESULTS.clear()
    return taken


def resolve(
    entries: list[dict[str, str]], cited: tuple[str, ...], concluded: set[str]
) -> Iterator[dict[str, str]]:
    """Each entry with a requirement; one without (the test stopped on it) stands for
    every cited id not already concluded."""
    seen: set[tuple[str, str]] = set()
    for entry in entries:
        ids = [entry["requirement"]] if entry["requirement"] else []
        if not ids:
            ids = [r for r in cited if r not in concluded]
        for rid in ids:
            if (rid, entry["field"]) not in seen:
                seen.add((rid, entry["field"]))
                yield {**entry, "requirement": rid}


# --- what the reports say of them ---------------------------------------------------------


def _entries(tests: Iterable[Any], by: str) -> dict[tuple[str, str, str], list[tuple[str, str]]]:
    """(field, expected, seen) -> [(requirement, test id)] of the entries *by* someone."""
    found: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for test in tests:
        for entry in getattr(test, "unjudged", ()):
            if entry.get("by") != by:
                continue
            # one line per field, whatever array item it was met in (/0, /1, … read /*)
            field = re.sub(r"/\d+(?=/|$)", "/*", str(entry.get("field")))
            key = (field, str(entry.get("expected")), str(entry.get("seen")))
            found.setdefault(key, []).append((str(entry.get("requirement")), test.nodeid))
    return found


def _where(pairs: list[tuple[str, str]]) -> str:
    ids = sorted({r for r, _ in pairs})
    tests = sorted({t for _, t in pairs})
    shown = ", ".join(ids[:6]) + (" …" if len(ids) > 6 else "")
    return f"{shown} not judged by {len(tests)} test(s), e.g. {tests[0]}"


def notices(tests: Iterable[Any], limit: int = 8) -> list[str]:
    """One line per unreadable field of the host's (D-522): the field, the type its
    schema gives, the value seen, and the requirements it left unjudged."""
    found = _entries(list(tests), "host")
    lines = [
        f"unreadable field {field} (expected {expected}, got {seen}): {_where(pairs)}"
        for (field, expected, seen), pairs in sorted(found.items())
    ]
    if len(lines) > limit:
        lines = [*lines[:limit], f"… and {len(lines) - limit} more unreadable fields"]
    return lines


def suite_problems(tests: Iterable[Any]) -> list[str]:
    """One line per reading error of the suite's own (D-521): the field, the test, the
    requirement; it blames no adapter, the check judged nothing."""
    found = _entries(list(tests), "suite")
    return [
        f"a check could not read {field} ({seen}): {_where(pairs)}"
        for (field, _, seen), pairs in sorted(found.items())
    ]
