"""ENV-072 on an implementation's own loop: what the host shows of a keyless prompt.

The keyless prompt (conformance/keyless.py: a parsed mention, its prepared snapshot) is sent
in a ``scenario.run`` that asks for the host's view (``display: true``); the view must show
the prompt as its envelope's display content with one compact source entry for the
referenced session, and no text of the snapshot.  The same sentence is checked through the
micro-step ops in conformance/test_placement.py; this test needs neither ``agent`` nor a
stepped driver, only the host's own renderer of its own log (capability agent.display).
"""

from __future__ import annotations

from typing import Any

import pytest

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.checks import check
from dsh_conformance.conformance.keyless import CWD, SOURCE_ID, keyless_contexts

pytestmark = [pytest.mark.capability("scenario"), pytest.mark.capability("agent.display")]

#: Texts only the snapshot holds: its checkpoint, its retained question, its data tag.
SNAPSHOT_TEXTS = ("Retained checkpoint.", "Recent retained question.", "referenced-sessions")


def keyless_script(impl: Implementation) -> dict[str, Any]:
    """One keyless prompt sent on the host's loop, its view asked for."""
    content, contexts = keyless_contexts(impl)
    return {
        "agent": {"id": "target-session", "header": {"cwd": CWD}},
        "display": True,
        "replies": [{"text": "Answer."}],
        "steps": [{"do": "send", "content": content, "contexts": contexts}],
    }


def shows_display_content_and_sources(result: dict[str, Any], typed: Any) -> None:
    """ENV-072: the prompt shown as its display content (what the user typed: the content
    the script sent, whatever the host's log keeps of it) with a compact source list."""
    view = result.get("display")
    assert isinstance(view, dict), "the outcome carries no display although asked"
    users = [m for m in view["messages"] if m["role"] == "user"]
    assert len(users) == 1, f"{len(users)} user messages shown"
    assert users[0]["content"] == typed, "not the display content"
    assert [s["sessionId"] for s in users[0]["sources"]] == [SOURCE_ID], "source list"
    assert not any(t in repr(view["messages"]) for t in SNAPSHOT_TEXTS), "snapshot shown"


@pytest.mark.req("ENV-072")
def test_the_host_view_shows_display_content_and_a_source_list(impl: Implementation) -> None:
    script = keyless_script(impl)
    result = impl.call("scenario.run", **script)
    with check("ENV-072", display=result.get("display")):
        shows_display_content_and_sources(result, script["steps"][0]["content"])
