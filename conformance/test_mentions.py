"""MENTION-*: formatting and parsing mentions in text.

Seed checks (MENTION-001, MENTION-003, MENTION-004) state the note's sentences and accept
any error code; the decisions' details (label escaping, readable text, order, the code,
JavaScript regex semantics, the near-miss fallback of D-9) are checked apart and blamed on
their own ids.
"""

from __future__ import annotations

import base64
import binascii
import json
import re

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check, expect, expect_equal, expect_error
from dsh_conformance.conformance.strategies import HOSTILE, base64url_runs, js_strings
from dsh_conformance.model import jsstr

pytestmark = pytest.mark.capability("mention")

INVALID = "SESSION_REFERENCE_INVALID_REFERENCE"
#: JavaScript whitespace under /u (ECMAScript WhiteSpace + LineTerminator).
JS_WS = set("\t\n\x0b\x0c\r \xa0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | {
    chr(c) for c in range(0x2000, 0x200B)
}
B64URL = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
#: Text that is an explicit mention to any reader: no escapes, brackets, controls or spaces
#: (an unescaped '[' in a label is a question of label grammar: D-9, MENTION-008).
PLAIN = re.compile(r"[!-'*-Z^-~]*")
#: A bare payload of these alone is base64url-shaped and punctuation-only at once.
PUNCTUATION = frozenset("-_")


def canonical_id(uri: str) -> str | None:
    """The id a canonical URI names (standard library + JSON.stringify), else None."""
    payload = uri.removeprefix("dsh-session:")
    if not uri.startswith("dsh-session:") or not payload or set(payload) - B64URL:
        return None
    try:
        raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
        sid = json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError):
        return None
    if not isinstance(sid, str):
        return None
    sid = jsstr.canonical(sid)
    good = base64.urlsafe_b64encode(jsstr.quote_bytes(sid)).decode("ascii").rstrip("=")
    return sid if good == payload else None


def ids(parsed: dict[str, object]) -> list[object]:
    refs = parsed.get("references")
    return [r.get("sessionId") for r in refs] if isinstance(refs, list) else [refs]


def uri_of(impl: Implementation, sid: str) -> str:
    return str(impl.call("uri.encode", sessionId=sid))


def refs(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"sessionId": s, "label": label} for s, label in pairs]


@pytest.mark.req("MENTION-001", "MENTION-002", "MENTION-007")
@given(js_strings(), st.one_of(st.none(), js_strings()))
@example("a]b\\c", None)
@example("x", "")
@example("x", "a\\\nb\u2028\\")
def test_formatted_mentions_parse_back(impl: Implementation, sid: str, label: str | None) -> None:
    args = {"sessionId": sid} if label is None else {"sessionId": sid, "label": label}
    mention = impl.call("mention.format", **args)
    shown = sid if label is None else label
    with check("MENTION-001", mention=mention):
        assert mention.startswith("@[")
        assert mention.endswith("](" + uri_of(impl, sid) + ")"), "@[label](uri)"
        parsed = impl.call("mention.parse", text=mention)
    expect_equal("MENTION-001", ids(parsed), [sid], what="referenced ids", mention=mention)
    expect_equal(
        "MENTION-002", parsed["references"], refs((sid, shown)), what="references", text=mention
    )
    expect_equal("MENTION-007", parsed["text"], "@" + shown, what="readable text", text=mention)


@pytest.mark.req("MENTION-002")
@given(js_strings())
def test_label_escaping_touches_only_backslash_and_bracket(
    impl: Implementation, label: str
) -> None:
    mention = impl.call("mention.format", sessionId="s", label=label)
    raw = mention[2 : mention.rindex("](")]
    expected = label.replace("\\", "\\\\").replace("]", "\\]")
    expect_equal("MENTION-002", raw, expected, what="escaped label", label=label)


@pytest.mark.req("MENTION-004")
@given(js_strings(max_size=60))
def test_text_without_the_scheme_is_unchanged(impl: Implementation, text: str) -> None:
    assume("dsh-session:" not in text)
    parsed = impl.call("mention.parse", text=text)
    expect_equal("MENTION-004", parsed, {"text": text, "references": []}, text=text)


@pytest.mark.req("MENTION-004")
@pytest.mark.parametrize(
    "text",
    [
        "what is a dsh-session: URI?",
        "see dsh-session:%%%",
        "dsh-session:",
        "dsh-session:.",
        "(dsh-session:)",
        "dsh-session:=",
    ],
)
def test_empty_or_punctuation_only_uses_stay_text(impl: Implementation, text: str) -> None:
    parsed = impl.call("mention.parse", text=text)
    expect_equal("MENTION-004", parsed, {"text": text, "references": []}, text=text)


@pytest.mark.req("MENTION-004", "MENTION-005")
@given(js_strings(max_size=12), st.sampled_from([*".,;:!?)'`\"]}>", "\xa0x", " and", "\n"]))
def test_boundary_punctuation_stays_in_text(impl: Implementation, sid: str, tail: str) -> None:
    text = f"see {uri_of(impl, sid)}{tail}"
    with check("MENTION-004", text=text):
        parsed = impl.call("mention.parse", text=text)
    expect_equal("MENTION-004", ids(parsed), [sid], what="referenced ids", text=text)
    expected = {"text": f"see @{sid}{tail}", "references": refs((sid, sid))}
    expect_equal("MENTION-005", parsed, expected, text=text)


def boundary_vectors(u: str) -> dict[str, str]:
    """Punctuation around a URI or a well-formed mention (research note A §1.6)."""
    return {
        f"see {u}. and `{u}`": "see @a. and `@a`",
        f"({u})": "(@a)",
        f"{u}'s": "@a's",
        f"{u},{u}": "@a,@a",
        f"@@[x]({u})": "@@x",
        f"\\@[x]({u})": "\\@x",
        f"[@[x]({u})]": "[@x]",
        f"@[a\nb]({u})": "@a\nb",
        f"@[]({u})": "@",
        f"{u}\xa0x": "@a\xa0x",
    }


def near_miss_vectors(u: str) -> dict[str, str]:
    """Almost explicit mentions, read by the seed-era code as bare URIs (D-9)."""
    return {
        f"@[x]({u} )": "@[x](@a )",
        f"@[x]({u}": "@[x](@a",
        f"@[x]\n({u})": "@[x]\n(@a)",
        f"@[x]({u}\ufeff)": "@[x](@a\ufeff)",
        f"@[a\\\nb]({u})": "@[a\\\nb](@a)",
    }


@pytest.mark.req("MENTION-004", "MENTION-005")
def test_upstream_boundary_vectors(impl: Implementation) -> None:
    for text, expected in boundary_vectors(uri_of(impl, "a")).items():
        with check("MENTION-004", text=text):
            parsed = impl.call("mention.parse", text=text)
        expect("MENTION-004", set(ids(parsed)) == {"a"}, "the URI is a reference", text=text)
        expect_equal("MENTION-005", parsed["text"], expected, what="readable text", text=text)


@pytest.mark.req("MENTION-003")
def test_near_miss_mentions_never_reference_anything_else(impl: Implementation) -> None:
    """Rejecting a near miss (a typed error) or reading its canonical URI as bare text are
    both seed behaviour (D-9); referencing anything but that URI's id is not."""
    for text in near_miss_vectors(uri_of(impl, "a")):
        if impl.error_code("mention.parse", text=text) is None:
            parsed = impl.call("mention.parse", text=text)
            expect("MENTION-003", set(ids(parsed)) <= {"a"}, "a reference from no URI", text=text)


@pytest.mark.req("MENTION-010")
def test_near_miss_mentions_fall_back_to_bare_uris(impl: Implementation) -> None:
    for text, expected in near_miss_vectors(uri_of(impl, "a")).items():
        parsed = impl.call("mention.parse", text=text)
        expect_equal(
            "MENTION-010",
            parsed,
            {"text": expected, "references": refs(("a", "a"))},
            text=text,
        )


@pytest.mark.req("MENTION-009")
def test_surrogate_pair_is_one_character_in_a_label(impl: Implementation) -> None:
    u = uri_of(impl, "a")
    parsed = impl.call("mention.parse", text=f"@[\\😀\\a]({u})")
    expect_equal("MENTION-009", parsed, {"text": "@😀a", "references": refs(("a", "😀a"))})


@pytest.mark.req("MENTION-003", "MENTION-008", "MENTION-009")
@pytest.mark.parametrize("char", ["\x1c", "\x1d", "\x1e", "\x1f", "\x85"])
def test_python_only_whitespace_does_not_end_a_mention_uri(impl: Implementation, char: str) -> None:
    """U+001C..U+001F and U+0085 are whitespace to Python but not to JavaScript: the
    explicit mention swallows them into its URI, which is then malformed.  The seed
    accepts a reader that ends the URI there (a near miss, D-9)."""
    text = f"@[x]({uri_of(impl, 'a')}{char})"
    code = impl.error_code("mention.parse", text=text)
    if code is None:
        parsed = impl.call("mention.parse", text=text)
        expect("MENTION-003", set(ids(parsed)) <= {"a"}, "a reference from no URI", text=text)
    code = expect_error("MENTION-009", impl, "mention.parse", {"text": text})
    if code is not None:  # it failed: which code is judged apart
        expect_equal("MENTION-008", code, INVALID, what="error code", text=text)


@pytest.mark.req("MENTION-003", "MENTION-008")
@given(
    st.text(alphabet=st.characters(blacklist_characters=JS_WS | {")"}), max_size=12),
    js_strings(max_size=8),
)
@example("%%%", "bad")
@example("", "x")
@example("I", "")
@example("ImEi%", "")  # '@[](...)': label grammar decides; D-9 reads a mention (MENTION-008)
def test_explicit_mentions_reject_malformed_uris(
    impl: Implementation, junk: str, label: str
) -> None:
    uri = "dsh-session:" + junk
    if canonical_id(uri) is not None:
        return  # happened to draw a canonical URI
    mention = "@[" + label.replace("\\", "\\\\").replace("]", "\\]") + "](" + uri + ")"
    text = f"ok {uri_of(impl, 'a')} then {mention}"
    if label and PLAIN.fullmatch(label) and PLAIN.fullmatch(junk):
        # An explicit mention to any reader (a non-empty plain label: whether '@[]' or
        # '@[[]' opens a mention is label grammar, D-9): the seed's sentence, any error.
        code = expect_error("MENTION-003", impl, "mention.parse", {"text": text})
        if code is not None:  # it failed: which code is judged apart
            expect_equal("MENTION-008", code, INVALID, what="error code", text=text)
        return
    # Label grammar and near misses: the reference reads an explicit mention (D-9, D-255).
    code = impl.error_code("mention.parse", text=text)
    expect_equal("MENTION-008", code, INVALID, what="error code", text=text)


@pytest.mark.req("MENTION-004", "MENTION-007", "MENTION-008")
@given(base64url_runs())
@example("IiJ")
@example("ImEi_")
@example("ImEiabc")
@example("-")
@example("__")
def test_bare_base64url_runs_must_decode_canonically(impl: Implementation, payload: str) -> None:
    uri = "dsh-session:" + payload
    text = f"prose {uri} more"
    sid = canonical_id(uri)
    if set(payload) <= PUNCTUATION:
        # '-' and '_' are base64url and punctuation at once: the note's "punctuation-only
        # uses remain ordinary discussion text" admits text, D-10 reads a payload that
        # fails to decode (MENTION-008 pins the reference's reading).
        code = impl.error_code("mention.parse", text=text)
        if code is None:
            parsed = impl.call("mention.parse", text=text)
            expect_equal("MENTION-004", ids(parsed), [], what="referenced ids", text=text)
        expect_equal("MENTION-008", code, INVALID, what="error code", text=text)
    elif sid is not None:
        with check("MENTION-004", text=text):
            parsed = impl.call("mention.parse", text=text)
        expect_equal("MENTION-004", ids(parsed), [sid], what="referenced ids", text=text)
        expect_equal("MENTION-007", parsed["text"], f"prose @{sid} more", what="text", text=text)
    else:
        code = expect_error("MENTION-004", impl, "mention.parse", {"text": text})
        if code is not None:  # it failed: which code is judged apart
            expect_equal("MENTION-008", code, INVALID, what="error code", text=text)


@pytest.mark.req("MENTION-006")
@given(st.lists(st.tuples(js_strings(max_size=8), st.booleans()), min_size=1, max_size=5))
def test_references_in_appearance_order_with_duplicates(
    impl: Implementation, items: list[tuple[str, bool]]
) -> None:
    pieces, expected_text, expected_refs = [], [], []
    for sid, as_markdown in items:
        if as_markdown:
            pieces.append(impl.call("mention.format", sessionId=sid, label="L" + sid))
            expected_refs.append((sid, "L" + sid))
            expected_text.append("@L" + sid)
        else:
            pieces.append(uri_of(impl, sid))
            expected_refs.append((sid, sid))
            expected_text.append("@" + sid)
    parsed = impl.call("mention.parse", text=" | ".join(pieces + pieces))
    assert parsed["references"] == refs(*expected_refs, *expected_refs)
    assert parsed["text"] == " | ".join(expected_text + expected_text)


@pytest.mark.req("MENTION-007")
@pytest.mark.parametrize("label", ["$&", "$1", "$$", "\\1", "\\g<0>"])
def test_labels_are_inserted_literally(impl: Implementation, label: str) -> None:
    mention = impl.call("mention.format", sessionId="a", label=label)
    assert impl.call("mention.parse", text=f"x {mention} y")["text"] == f"x @{label} y"


@pytest.mark.req("MENTION-003", "MENTION-004", "MENTION-008")
def test_one_bad_mention_fails_the_whole_parse(impl: Implementation) -> None:
    good = uri_of(impl, "a")
    for owner, text in (
        ("MENTION-004", f"{good} {good} dsh-session:IiJ"),
        ("MENTION-003", f"@[bad](dsh-session:%%%) {good}"),
    ):
        code = expect_error(owner, impl, "mention.parse", {"text": text})
        if code is not None:  # it failed: which code is judged apart
            expect_equal("MENTION-008", code, INVALID, what="error code", text=text)


@pytest.mark.req("MENTION-004")
@given(st.lists(st.one_of(st.sampled_from(HOSTILE), js_strings(max_size=6)), max_size=10))
def test_references_come_only_from_canonical_uris_in_the_text(
    impl: Implementation, parts: list[str]
) -> None:
    """The seed's sentences beside the differential test: whatever a parse returns, each
    reference names an id whose canonical URI is spelled in the text."""
    text = "".join(parts)
    if impl.error_code("mention.parse", text=text) is not None:
        return
    for sid in ids(impl.call("mention.parse", text=text)):
        with check("MENTION-004", text=text, sessionId=sid):
            assert isinstance(sid, str)
            good = base64.urlsafe_b64encode(jsstr.quote_bytes(sid)).decode("ascii")
            assert "dsh-session:" + good.rstrip("=") in text, "a reference from no URI"


@pytest.mark.differential
@pytest.mark.req("REF-001")
@given(st.lists(st.one_of(st.sampled_from(HOSTILE), js_strings(max_size=6)), max_size=10))
def test_matches_reference_model(
    impl: Implementation, oracle: Implementation, parts: list[str]
) -> None:
    text = "".join(parts)
    expected_error = oracle.error_code("mention.parse", text=text)
    if expected_error is not None:
        actual = impl.error_code("mention.parse", text=text)
        expect_equal("REF-001", actual, expected_error, what="error code", text=text)
    else:
        actual = impl.call("mention.parse", text=text)
        expected = oracle.call("mention.parse", text=text)
        expect_equal("REF-001", actual, expected, what="parse", text=text)
