"""URI-*: the canonical dsh-session: identifier."""

from __future__ import annotations

import base64
import json
import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.conformance.strategies import base64url_runs, js_strings

pytestmark = pytest.mark.capability("uri")

INVALID = "SESSION_REFERENCE_INVALID_REFERENCE"
URI_SHAPE = re.compile(r"dsh-session:[A-Za-z0-9_-]+")


def independent_decode(uri: str) -> object:
    """Decode a URI with the standard library only (no model code)."""
    payload = uri.removeprefix("dsh-session:")
    raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
    return json.loads(raw.decode("utf-8"))


@pytest.mark.req("URI-001", "URI-004", "JS-001")
@given(js_strings())
@example("")
@example("\ud800")
@example('unicode/引号"/slash\\/line\n')
def test_encode_is_scheme_plus_unpadded_base64url_of_json(impl: Implementation, sid: str) -> None:
    uri = impl.call("uri.encode", sessionId=sid)
    assert URI_SHAPE.fullmatch(uri), f"{uri!r} is not 'dsh-session:' + unpadded base64url"
    assert "=" not in uri
    assert independent_decode(uri) == sid


@pytest.mark.req("URI-002", "JS-001")
@given(js_strings())
def test_every_js_string_round_trips(impl: Implementation, sid: str) -> None:
    assert impl.call("uri.decode", uri=impl.call("uri.encode", sessionId=sid)) == sid


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
    uri = "dsh-session:" + payload
    code = impl.error_code("uri.decode", uri=uri)
    if code is not None:
        assert code == INVALID
        return
    sid = impl.call("uri.decode", uri=uri)
    assert isinstance(sid, str)
    assert impl.call("uri.encode", sessionId=sid) == uri


@pytest.mark.req("URI-003", "URI-004", "URI-005")
@given(js_strings(), st.sampled_from(["=", "==", " ", "\n", "%", "+", "/", "."]))
def test_decorated_uris_are_rejected(impl: Implementation, sid: str, junk: str) -> None:
    uri = impl.call("uri.encode", sessionId=sid)
    for bad in (uri + junk, junk + uri, uri.upper().replace("DSH-SESSION:", "DSH-SESSION:")):
        if bad == uri:
            continue
        assert impl.error_code("uri.decode", uri=bad) == INVALID, repr(bad)


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
    assert impl.error_code("uri.decode", uri=uri) == INVALID


@pytest.mark.req("URI-005")
@pytest.mark.parametrize("value", [None, 1, ["dsh-session:ImEi"], {"uri": "x"}, True])
def test_non_string_uri_is_invalid_reference(impl: Implementation, value: object) -> None:
    assert impl.error_code("uri.decode", uri=value) == INVALID


@pytest.mark.req("URI-002")
@given(js_strings())
def test_matches_reference_model(impl: Implementation, oracle: Implementation, sid: str) -> None:
    assert impl.call("uri.encode", sessionId=sid) == oracle.call("uri.encode", sessionId=sid)
