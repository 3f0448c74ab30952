"""MENTION-*: formatting and parsing mentions in text."""

from __future__ import annotations

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.conformance.strategies import HOSTILE, base64url_runs, js_strings

pytestmark = pytest.mark.capability("mention")

INVALID = "SESSION_REFERENCE_INVALID_REFERENCE"
#: JavaScript whitespace under /u (ECMAScript WhiteSpace + LineTerminator).
JS_WS = set("\t\n\x0b\x0c\r \xa0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | {
    chr(c) for c in range(0x2000, 0x200B)
}
B64URL = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


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
    assert mention.startswith("@[")
    assert mention.endswith("](" + uri_of(impl, sid) + ")")
    parsed = impl.call("mention.parse", text=mention)
    assert parsed == {"text": "@" + shown, "references": refs((sid, shown))}


@pytest.mark.req("MENTION-002")
@given(js_strings())
def test_label_escaping_touches_only_backslash_and_bracket(
    impl: Implementation, label: str
) -> None:
    mention = impl.call("mention.format", sessionId="s", label=label)
    raw = mention[2 : mention.rindex("](")]
    expected = label.replace("\\", "\\\\").replace("]", "\\]")
    assert raw == expected


@pytest.mark.req("MENTION-007")
@given(js_strings(max_size=60))
def test_text_without_the_scheme_is_unchanged(impl: Implementation, text: str) -> None:
    assume("dsh-session:" not in text)
    assert impl.call("mention.parse", text=text) == {"text": text, "references": []}


@pytest.mark.req("MENTION-004", "MENTION-007")
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
    assert impl.call("mention.parse", text=text) == {"text": text, "references": []}


@pytest.mark.req("MENTION-005", "MENTION-004")
@given(js_strings(max_size=12), st.sampled_from([*".,;:!?)'`\"]}>", "\xa0x", " and", "\n"]))
def test_boundary_punctuation_stays_in_text(impl: Implementation, sid: str, tail: str) -> None:
    uri = uri_of(impl, sid)
    parsed = impl.call("mention.parse", text=f"see {uri}{tail}")
    assert parsed == {"text": f"see @{sid}{tail}", "references": refs((sid, sid))}


@pytest.mark.req("MENTION-005")
def test_upstream_boundary_vectors(impl: Implementation) -> None:
    u = uri_of(impl, "a")
    cases = {
        f"see {u}. and `{u}`": "see @a. and `@a`",
        f"({u})": "(@a)",
        f"{u}'s": "@a's",
        f"{u},{u}": "@a,@a",
        f"@@[x]({u})": "@@x",
        f"\\@[x]({u})": "\\@x",
        f"[@[x]({u})]": "[@x]",
        f"@[x]({u} )": "@[x](@a )",
        f"@[x]({u}": "@[x](@a",
        f"@[x]\n({u})": "@[x]\n(@a)",
        f"@[x]({u}\ufeff)": "@[x](@a\ufeff)",
        f"@[a\\\nb]({u})": "@[a\\\nb](@a)",
        f"@[a\nb]({u})": "@a\nb",
        f"@[]({u})": "@",
        f"{u}\xa0x": "@a\xa0x",
    }
    for text, expected in cases.items():
        assert impl.call("mention.parse", text=text)["text"] == expected, repr(text)


@pytest.mark.req("MENTION-009")
def test_surrogate_pair_is_one_character_in_a_label(impl: Implementation) -> None:
    u = uri_of(impl, "a")
    parsed = impl.call("mention.parse", text=f"@[\\😀\\a]({u})")
    assert parsed == {"text": "@😀a", "references": refs(("a", "😀a"))}


@pytest.mark.req("MENTION-009", "MENTION-003")
@pytest.mark.parametrize("char", ["\x1c", "\x1d", "\x1e", "\x1f", "\x85"])
def test_python_only_whitespace_does_not_end_a_mention_uri(impl: Implementation, char: str) -> None:
    """U+001C..U+001F and U+0085 are whitespace to Python but not to JavaScript: the
    explicit mention swallows them into its URI, which is then malformed."""
    u = uri_of(impl, "a")
    assert impl.error_code("mention.parse", text=f"@[x]({u}{char})") == INVALID


@pytest.mark.req("MENTION-003", "MENTION-008")
@given(
    st.text(alphabet=st.characters(blacklist_characters=JS_WS | {")"}), max_size=12),
    js_strings(max_size=8),
)
@example("%%%", "bad")
@example("", "x")
def test_explicit_mentions_reject_malformed_uris(
    impl: Implementation, junk: str, label: str
) -> None:
    uri = "dsh-session:" + junk
    if impl.error_code("uri.decode", uri=uri) is None:
        return  # happened to draw a canonical URI
    mention = "@[" + label.replace("\\", "\\\\").replace("]", "\\]") + "](" + uri + ")"
    assert (
        impl.error_code("mention.parse", text=f"ok {uri_of(impl, 'a')} then {mention}") == INVALID
    )


@pytest.mark.req("MENTION-004", "MENTION-008")
@given(base64url_runs())
@example("IiJ")
@example("ImEi_")
@example("ImEiabc")
def test_bare_base64url_runs_must_decode_canonically(impl: Implementation, payload: str) -> None:
    uri = "dsh-session:" + payload
    text = f"prose {uri} more"
    decoded = impl.error_code("uri.decode", uri=uri)
    if decoded is None:
        sid = impl.call("uri.decode", uri=uri)
        assert impl.call("mention.parse", text=text) == {
            "text": f"prose @{sid} more",
            "references": refs((sid, sid)),
        }
    else:
        assert impl.error_code("mention.parse", text=text) == INVALID


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


@pytest.mark.req("MENTION-008")
def test_one_bad_mention_fails_the_whole_parse(impl: Implementation) -> None:
    good = uri_of(impl, "a")
    assert impl.error_code("mention.parse", text=f"{good} {good} dsh-session:IiJ") == INVALID
    assert impl.error_code("mention.parse", text=f"@[bad](dsh-session:%%%) {good}") == INVALID


@pytest.mark.req("MENTION-003", "MENTION-004", "MENTION-005", "MENTION-006", "MENTION-007")
@given(st.lists(st.one_of(st.sampled_from(HOSTILE), js_strings(max_size=6)), max_size=10))
def test_matches_reference_model(
    impl: Implementation, oracle: Implementation, parts: list[str]
) -> None:
    text = "".join(parts)
    expected_error = oracle.error_code("mention.parse", text=text)
    if expected_error is not None:
        assert impl.error_code("mention.parse", text=text) == expected_error
    else:
        assert impl.call("mention.parse", text=text) == oracle.call("mention.parse", text=text)
