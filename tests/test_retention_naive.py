"""RET-009: the model's O(n log n) retention equals upstream's quadratic algorithm, byte for byte.

``naive_retain`` restates research note A §4.2-§4.3 as literally as possible -- re-serialize
the whole object after every dropped message, scan for the longest text, binary-search the
slice -- using only the standard library.  Where upstream would empty a preserved message
(its '' fallback), the model deliberately differs (D-37); those inputs are checked for the
documented difference instead.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dsh_conformance.conformance.preparation_oracles import encoded, tag_safe_bytes
from dsh_conformance.conformance.strategies import js_strings
from dsh_conformance.conformance.strategies_sessions import SessionCase, big_texts, session_cases
from dsh_conformance.model.errors import DshError
from dsh_conformance.model.retention import retain
from dsh_conformance.model.snapshot import read_log, session_from_json

NOTICE = "\n[\u2026 omitted {} UTF-8 bytes \u2026]"


def head_tail(text: str, head: int, tail: int) -> tuple[str, int]:
    data = encoded(text)
    total = len(data)
    p = min(total, head)
    s = min(total - p, tail)
    if total - p - s == 0:
        return text, 0
    # For well-formed UTF-8, dropping an incomplete trailing sequence of the head and the
    # leading continuation bytes of the tail is exactly what 'ignore' decoding drops.
    kept_head = data[:p].decode("utf-8", "ignore")
    kept_tail = data[total - s :].decode("utf-8", "ignore")
    kept = len(kept_head.encode()) + len(kept_tail.encode())
    return kept_head + kept_tail, total - kept


def truncate_with_notice(text: str, max_bytes: int) -> tuple[str, int]:
    if len(encoded(text)) <= max_bytes:
        return text, 0
    low, high, best = 0, max_bytes, ("", len(encoded(text)))
    while low <= high:
        r = (low + high) // 2
        kept, omitted = head_tail(text, (r + 1) // 2, r // 2)
        candidate = kept + NOTICE.format(omitted)
        if len(encoded(candidate)) <= max_bytes:
            best, low = (candidate, omitted), r + 1
        else:
            high = r - 1
    return best


def naive_retain(case: SessionCase, label: str, max_bytes: int) -> dict[str, Any] | None:
    header = case.session["header"]
    original = [dict(e, omitted=0, original=e["text"]) for e in case.expected]
    retained = [dict(e) for e in original]
    omitted_messages = dropped_bytes = 0

    def data() -> dict[str, Any]:
        return {
            "sessionId": header["id"],
            "label": label,
            "cwd": header.get("cwd"),
            "capturedThroughSeq": case.captured_through_seq,
            "conversation": [{"role": r["role"], "text": r["text"]} for r in retained],
        }

    while tag_safe_bytes(data()) > max_bytes:
        newest = len(retained) - 1
        index = next(
            (i for i, r in enumerate(retained) if not r["checkpoint"] and i != newest), None
        )
        if index is None:
            break
        removed = retained.pop(index)
        omitted_messages += 1
        dropped_bytes += len(encoded(removed["original"]))
    while tag_safe_bytes(data()) > max_bytes:
        lengths = [len(encoded(r["text"])) for r in retained]
        if not lengths or max(lengths) == 0:
            return None
        li = lengths.index(max(lengths))
        target = max(0, lengths[li] - (tag_safe_bytes(data()) - max_bytes))
        text, omitted = truncate_with_notice(retained[li]["original"], target)
        if text == retained[li]["text"]:
            return None
        retained[li]["text"], retained[li]["omitted"] = text, omitted
    omitted_bytes = sum(r["omitted"] for r in retained) + dropped_bytes
    return {
        "data": data(),
        "stats": {
            "compacted": any(e["checkpoint"] for e in original),
            "originalMessages": len(original),
            "retainedMessages": len(retained),
            "omittedMessages": omitted_messages,
            "omittedBytes": omitted_bytes,
            "truncated": omitted_messages > 0 or omitted_bytes > 0,
        },
    }


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    session_cases(texts=big_texts(), max_events=14),
    st.integers(min_value=120, max_value=2500),
    js_strings(max_size=6),
)
def test_model_equals_the_quadratic_upstream_algorithm(
    case: SessionCase, cap: int, label: str
) -> None:
    expected = naive_retain(case, label, cap)
    snapshot = read_log(session_from_json(case.session))
    try:
        got = retain(snapshot, label, cap)
    except DshError as exc:
        failure: DshError | None = exc
    else:
        failure = None
    if failure is not None:
        assert failure.code == "SESSION_REFERENCE_BUDGET_EXCEEDED"
        # Upstream fails too, or it would have emptied a preserved message (D-37).
        assert expected is None or "" in [c["text"] for c in expected["data"]["conversation"]]
        event("both fail" if expected is None else "D-37: upstream empties, model fails")
        return
    if expected is not None and "" in [c["text"] for c in expected["data"]["conversation"]]:
        # D-37: where upstream empties a message the model keeps the exact bare notice.
        texts = [c["text"] for c in got.data["conversation"]]
        assert "" not in texts
        event("D-37: upstream empties, model keeps a notice")
        return
    assert expected is not None, "the model succeeded where upstream fails"
    assert got.data == expected["data"]
    assert got.stats.to_json() == expected["stats"]
    event("truncated" if got.stats.omitted_bytes > 0 else "whole")
