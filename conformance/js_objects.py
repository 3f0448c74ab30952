"""JavaScript's property order, restated independently of the model (standard library only).

ECMAScript enumerates an ordinary object's own string keys (``OrdinaryOwnPropertyKeys``,
which ``JSON.stringify`` and ``Object.keys`` use) as: every *array index* -- the canonical
decimal spelling of an integer ``n`` with ``0 <= n < 2**32 - 1`` -- in ascending numeric
order, then every other key in creation order.  ``JSON.parse`` creates keys in text order,
so ``JSON.stringify(JSON.parse('{"a":1,"0":2}'))`` is ``{"0":2,"a":1}``.  Python dicts keep
insertion order only, so any comparison of serialized bytes or of key order must first put
a value's keys in this order.
"""

from __future__ import annotations

#: The largest array index (2**32 - 2); "4294967295" is an ordinary key.
MAX_ARRAY_INDEX = 2**32 - 2


def is_array_index(key: str) -> bool:
    """Whether *key* is an array index: ASCII digits that spell their own integer value
    (so no sign, no leading zero except ``"0"`` itself) and at most ``MAX_ARRAY_INDEX``."""
    if not key or any(not "0" <= c <= "9" for c in key):
        return False
    n = int(key)
    return str(n) == key and n <= MAX_ARRAY_INDEX


#: First characters of an array index; a key starting otherwise keeps its place.
_DIGITS = frozenset("0123456789")
#: Values that are copied as they are (no key order inside).
_LEAVES = frozenset({str, int, float, bool, type(None)})


def js_ordered(value: object) -> object:
    """A copy of a JSON value with every object's keys in JavaScript's property order."""
    if isinstance(value, dict):
        # Only a key that starts with a digit can be an array index: most objects have
        # none, and keep their insertion order.
        if any(k[:1] in _DIGITS and is_array_index(k) for k in value):
            indices = sorted((k for k in value if is_array_index(k)), key=int)
            others = [k for k in value if not is_array_index(k)]
            return {k: js_ordered(value[k]) for k in indices + others}
        return {k: v if type(v) in _LEAVES else js_ordered(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [v if type(v) in _LEAVES else js_ordered(v) for v in value]
    return value
