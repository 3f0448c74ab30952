"""Request reconstruction: every captured model request is derivable from the log alone.

Seed 000: target replay satisfies "the model-visible/log-reconstructable invariant" without a
new event type (ENV-058).  For the step opened by the ``step/start`` at index *i*, the
request is the request header in force at that step (the latest ``request/header`` up to
the one logged right after the ``step/start``) plus ``derive_messages(events[:i])`` -- the
surface as it stood at the step boundary (research note B §2.13, D-72).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from dsh_conformance.model.frozen import thaw
from dsh_conformance.model.session import Event, derive_messages


def _header_at(events: Sequence[Event], step_index: int) -> Mapping[str, Any] | None:
    header: Mapping[str, Any] | None = None
    for index, event in enumerate(events):
        if index > step_index + 1:
            break
        if event.type == "request/header" and isinstance(event.data, Mapping):
            value = event.data.get("header")
            if isinstance(value, Mapping):
                header = value
    return header


def replay_requests(events: Sequence[Event], session_id: str) -> list[dict[str, Any]]:
    """The model request of every ``step/start`` in *events*, reconstructed from the log."""
    out = []
    for index, event in enumerate(events):
        if event.type != "step/start":
            continue
        header = _header_at(events, index)
        config = header.get("config", {}) if header is not None else {}
        request: dict[str, Any] = {
            "provider": thaw(config.get("provider")),
            "model": thaw(config.get("model")),
            "messages": derive_messages(events[:index]),
        }
        if header is not None and "system" in header:
            request["system"] = thaw(header["system"])
        if header is not None and "tools" in header:
            request["tools"] = thaw(header["tools"])
        request["sessionId"] = session_id
        out.append(request)
    return out
