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

import json
import re
from typing import Any

import orjson

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


#: A quote then a digit: where a serialized key that could be an array index starts.
_DIGIT_AFTER_QUOTE = re.compile('"[0-9]')


def js_dumps(value: object, **options: Any) -> str:
    """``json.dumps(js_ordered(value), **options)``, the copy in property order made only
    when the plain dump shows a key that starts with a digit (its ``"`` and digit are
    never escaped): most values have none, and the copy was most of a differential
    test's comparisons (issue 44)."""
    text = json.dumps(value, **options)
    if _DIGIT_AFTER_QUOTE.search(text) is None:
        return text
    return json.dumps(js_ordered(value), **options)


#: orjson spells only JSON's own types: subclasses, dataclasses and dates raise.
_STRICT = orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATACLASS
_STRICT |= orjson.OPT_PASSTHROUGH_DATETIME


def js_form(value: object) -> bytes | str:
    """A form of *value* that two values share exactly when their ``js_dumps`` agree
    (taken at once, so a value mutated later cannot change it).

    orjson writes JSON in one C pass, spelling every JSON value injectively except NaN
    and the infinities (as ``null``); its bytes are the form when they hold no ``null``
    and no digit-led key (whose place js_ordered may move).  Otherwise, and for a value
    orjson refuses (a lone surrogate, an integer past 64 bits, a subclass of a JSON
    type), the form is ``js_dumps``'s text: so a value and its copy as another subclass
    have different forms, the one case where forms differ and dumps would not."""
    try:
        data = orjson.dumps(value, option=_STRICT)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return js_dumps(value, ensure_ascii=False)
    if b"null" in data or _BYTES_DIGIT_AFTER_QUOTE.search(data):
        return js_dumps(value, ensure_ascii=False)
    return data


def js_same(a: object, b: object) -> bool:
    """Whether *a* and *b* serialize alike in JavaScript's property order (``js_form``)."""
    return js_form(a) == js_form(b)


_BYTES_DIGIT_AFTER_QUOTE = re.compile(b'"[0-9]')
