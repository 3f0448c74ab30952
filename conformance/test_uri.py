"""URI-*: the canonical dsh-session: identifier.

Seed checks (URI-001, URI-002) state the note's sentence; the decisions' details (no
padding URI-004, canonical-only decoding URI-003, the error code URI-005) are checked
apart and blamed on their own ids, so a seed-conforming decoder that differs only there
passes the seed verdict (D-5, D-7).
"""

from __future__ import annotations

import base64
import binascii
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check, expect, expect_equal, expect_error
from dsh_conformance.conformance.strategies import base64url_runs, js_strings
from dsh_conformance.model import jsstr

pytestmark = pytest.mark.capability("uri")

INVALID = "SESSION_REFERENCE_INVALID_REFERENCE"
SCHEME = "dsh-session:"
#: base64url with the padding RFC 4648 allows (the seed does not forbid it).
PADDED_OK = re.compile(r"[A-Za-z0-9_-]+={0,2}")
URI_SHAPE = re.compile(r"dsh-session:[A-Za-z0-9_-]*")  # an empty payload is URI-001's


def json_text(uri: str) -> str | None:
    """The JSON text a URI carries (standard library only), or None when it has none."""
    payload = uri.removeprefix(SCHEME)
    if not uri.startswith(SCHEME) or not PADDED_OK.fullmatch(payload):
        return None
    stripped = payload.rstrip("=")
    try:
        raw = base64.urlsafe_b64decode(stripped + "=" * (-len(stripped) % 4))
        return raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None


@pytest.mark.req("URI-001", "URI-004")
@given(js_strings())
@example("")
@example("\ud800")
@example('unicode/引号"/slash\\/line\n')
def test_encode_is_scheme_plus_base64url_of_json_stringify(impl: Implementation, sid: str) -> None:
    uri = impl.call("uri.encode", sessionId=sid)
    with check("URI-001", sessionId=sid, uri=uri):
        assert isinstance(uri, str)
        assert uri.startswith(SCHEME), "the scheme is 'dsh-session:'"
        assert json_text(uri) == jsstr.quote(sid), "the payload is base64url(JSON.stringify(id))"
    expect("URI-004", URI_SHAPE.fullmatch(uri), "the payload is unpadded base64url", uri=uri)


@pytest.mark.req("URI-002")
@given(js_strings())
# Fixed (D-400): lone surrogates, which an encoder through UTF-8 (or any well-formed
# Unicode form) replaces by U+FFFD; every JavaScript string keeps its code units.
@example("\ud800")
@example("a\udfffb")
@example("\udc00\ud800")
def test_every_js_string_round_trips(impl: Implementation, sid: str) -> None:
    uri = impl.call("uri.encode", sessionId=sid)
    expect_equal("URI-002", impl.call("uri.decode", uri=uri), sid, what="decoded id", uri=uri)


@pytest.mark.req("JS-001")
@pytest.mark.parametrize("sid", ["\ud800", "a\udfff", "\udc00\ud800", "😀", "\ud83d\ude00x"])
def test_ids_are_utf16_code_units(impl: Implementation, sid: str) -> None:
    """A lone surrogate is one code unit kept as it is; a pair is one character (D-1)."""
    uri = impl.call("uri.encode", sessionId=sid)
    same = jsstr.canonical(sid)  # the same code units, with a valid pair as one character
    expect_equal("JS-001", json_text(uri), jsstr.quote(same), what="JSON text", sessionId=sid)
    expect_equal("JS-001", impl.call("uri.decode", uri=uri), same, what="decoded id", uri=uri)


@pytest.mark.req("URI-001")
@given(js_strings(), js_strings())
def test_distinct_ids_have_distinct_uris(impl: Implementation, a: str, b: str) -> None:
    if a != b:
        assert impl.call("uri.encode", sessionId=a) != impl.call("uri.encode", sessionId=b)


@pytest.mark.req("URI-003", "URI-005")
@given(base64url_runs(max_size=24))
@example("IiJ")
@example("ImEiA")
@example("ImFiIx")
@example("IiJhIiA")
@example("IFwiYVwi")
def test_decode_accepts_exactly_canonical_uris(impl: Implementation, payload: str) -> None:
    uri = SCHEME + payload
    code = impl.error_code("uri.decode", uri=uri)
    if code is not None:
        expect_equal("URI-005", code, INVALID, what="error code", uri=uri)
        return
    sid = impl.call("uri.decode", uri=uri)
    with check("URI-003", uri=uri, decoded=sid):
        assert isinstance(sid, str)
        assert impl.call("uri.encode", sessionId=sid) == uri, "accepted a non-canonical URI"


@pytest.mark.req("URI-003", "URI-005")
@given(js_strings(), st.sampled_from(["=", "==", " ", "\n", "%", "+", "/", "."]))
def test_decorated_uris_are_rejected(impl: Implementation, sid: str, junk: str) -> None:
    uri = impl.call("uri.encode", sessionId=sid)
    for bad in (uri + junk, junk + uri, uri.upper()):
        if bad == uri:
            continue
        code = expect_error("URI-003", impl, "uri.decode", {"uri": bad})
        if code is not None:  # it failed: which code is judged apart
            expect_equal("URI-005", code, INVALID, what="error code", uri=bad)


@pytest.mark.req("URI-003", "URI-005")
@pytest.mark.parametrize(
    "uri",
    [
        "",
        "dsh-session:",
        "https://example.test",
        "DSH-SESSION:ImEi",
        "dsh-session:ImFiIg=",
        "dsh-session:IiJ",
        "dsh-session:eyJpZCI6IngifQ",  # base64url of {"id":"x"}: JSON, but not a string
        "dsh-session:MQ",  # the number 1
        "dsh-session:Ilx1MDA2MSI",  # JSON "\u0061": an alternative escape of "a"
        " dsh-session:ImEi",
    ],
)
def test_malformed_uris_are_invalid_reference(impl: Implementation, uri: str) -> None:
    code = expect_error("URI-003", impl, "uri.decode", {"uri": uri})
    if code is not None:  # it failed: which code is judged apart
        expect_equal("URI-005", code, INVALID, what="error code", uri=uri)


@pytest.mark.req("URI-003", "URI-005")
@pytest.mark.parametrize("value", [None, 1, ["dsh-session:ImEi"], {"uri": "x"}, True])
def test_non_string_uri_is_invalid_reference(impl: Implementation, value: object) -> None:
    """No sentence of the notes speaks of a non-string URI (the seed-era code throws a
    TypeError): rejecting it and its code are the reference profile's (D-7)."""
    code = expect_error("URI-003", impl, "uri.decode", {"uri": value})
    if code is not None:  # it failed: which code is judged apart
        expect_equal("URI-005", code, INVALID, what="error code", uri=value)


@pytest.mark.differential
@pytest.mark.req("REF-001")
@given(js_strings())
def test_matches_reference_model(impl: Implementation, oracle: Implementation, sid: str) -> None:
    expect_equal(
        "REF-001",
        impl.call("uri.encode", sessionId=sid),
        oracle.call("uri.encode", sessionId=sid),
        what="URI",
        sessionId=sid,
    )
