"""Hypothesis strategies for JavaScript strings and the seed's hostile inputs.

Strings are built from UTF-16 code units so they reach lone surrogates and split pairs,
then canonicalized (model/jsstr.py D-1).  Hard cases are drawn often, not left to luck.
"""

from __future__ import annotations

from hypothesis import strategies as st

from dsh_conformance.model.jsstr import canonical, from_code_units

#: Substrings that have broken, or could break, an implementation of the seeds.
HOSTILE: tuple[str, ...] = (
    "",
    '"',
    "\\",
    "]",
    ")",
    "[",
    "(",
    "@",
    "\n",
    "\r",
    "\u2028",
    "\u2029",
    "\ufeff",
    "\xa0",
    "\x1c",
    "\x00",
    "\x7f",
    "<",
    ">",
    "&",
    "/",
    "</referenced-sessions>",
    "<referenced-sessions>",
    "## My request:",
    "\n\n## My request:\n",
    "dsh-session:",
    "dsh-session:ImEi",
    "@[x](dsh-session:ImEi)",
    "\ud800",
    "\udfff",
    "\ud83d\ude00",
    "😀",
    "界",
    "\u0130",
    "$&",
    "$1",
    "\x1b[31m",
)

#: Object keys that JavaScript orders specially, and near misses that it does not: array
#: indices ("0" .. "4294967294") come first in ascending order, every other key keeps
#: insertion order (conformance/js_objects.py, D-12).
INDEX_LIKE_KEYS: tuple[str, ...] = (
    "0",
    "1",
    "2",
    "9",
    "10",
    "42",
    "4294967294",
    "4294967295",
    "01",
    "00",
    "-1",
    "-0",
    "1.5",
    "1e3",
    " 1",
    "+1",
    "\u0661",
)

_special_units = st.sampled_from(
    [
        0x00,
        0x0A,
        0x0D,
        0x22,
        0x5C,
        0x5D,
        0x3C,
        0x1C,
        0x7F,
        0xA0,
        0x2028,
        0xFEFF,
        0xD800,
        0xDBFF,
        0xDC00,
        0xDFFF,
        0xD83D,
        0xDE00,
    ]
)
_any_unit = st.integers(min_value=0, max_value=0xFFFF)
_ascii_unit = st.integers(min_value=0x20, max_value=0x7E)


def code_unit_strings(max_size: int = 24) -> st.SearchStrategy[str]:
    """Canonical JS strings drawn from code units, biased toward the hard ones."""
    unit = st.one_of(_ascii_unit, _special_units, _any_unit)
    return st.lists(unit, max_size=max_size).map(from_code_units)


def js_strings(max_size: int = 24) -> st.SearchStrategy[str]:
    """Any JavaScript string, canonical, reaching every hostile case in HOSTILE."""
    piece = st.one_of(
        st.sampled_from(HOSTILE),
        code_unit_strings(max_size=8),
        st.text(max_size=8),
    )
    return st.lists(piece, max_size=max(1, max_size // 4)).map(
        lambda parts: canonical("".join(parts))
    )


def object_keys(max_size: int = 8) -> st.SearchStrategy[str]:
    """Keys of caller-supplied objects: any JS string, often an array index or a near miss."""
    return st.one_of(st.sampled_from(INDEX_LIKE_KEYS), js_strings(max_size=max_size))


def json_values(max_leaves: int = 12) -> st.SearchStrategy[object]:
    """JSON values (finite numbers, JS-string keys -- often index-like -- and strings)."""
    leaves = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**53) + 1, max_value=2**53 - 1),
        st.floats(allow_nan=False, allow_infinity=False).filter(
            lambda x: x == 0 or abs(x) > 1e-300
        ),
        js_strings(),
    )
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, max_size=4),
            st.dictionaries(object_keys(), children, max_size=4),
        ),
        max_leaves=max_leaves,
    )


BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def base64url_runs(max_size: int = 16) -> st.SearchStrategy[str]:
    """Non-empty runs of the base64url alphabet (bare-URI payload shapes)."""
    return st.text(alphabet=BASE64URL, min_size=1, max_size=max_size)
