"""The scenario view check of ENV-072 (conformance/test_scenario_display.py) catches hosts
whose view shows the snapshot or nothing, and passes the reference."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import faux_scenario

from dsh_conformance.adapters.client import Implementation
from dsh_conformance.conformance import test_scenario_display as shown
from dsh_conformance.model import scenario


class ShowsTheModelContent(scenario.Runner):
    """The view renders each prompt as the model reads it: the snapshot, baked in."""

    def run(self) -> dict[str, Any]:
        out = super().run()
        events = out["log"]["events"]
        by_seq = {e["seq"]: e for e in events}
        for message in out.get("display", {}).get("messages", []):
            if message["role"] == "user":
                message["content"] = by_seq[message["seq"]]["data"]["content"]
        return out


class ShowsNoSources(scenario.Runner):
    """The view drops the compact source list."""

    def run(self) -> dict[str, Any]:
        out = super().run()
        for message in out.get("display", {}).get("messages", []):
            message["sources"] = []
        return out


class IgnoresDisplay(scenario.Runner):
    """The host never reports its view."""

    def run(self) -> dict[str, Any]:
        out = super().run()
        out.pop("display", None)
        return out


def _host(runner: type[scenario.Runner]) -> Implementation:
    kit = faux_scenario.KitAdapter()
    kit.runner = runner
    return Implementation(kit, runner.__name__)


def test_the_reference_passes() -> None:
    impl = _host(scenario.Runner)
    script = shown.keyless_script(impl)
    shown.shows_display_content_and_sources(
        impl.call("scenario.run", **script), script["steps"][0]["content"]
    )


@pytest.mark.parametrize("runner", [ShowsTheModelContent, ShowsNoSources, IgnoresDisplay])
def test_a_broken_view_is_caught(runner: type[scenario.Runner]) -> None:
    impl = _host(runner)
    script = shown.keyless_script(impl)
    result = impl.call("scenario.run", **script)
    with pytest.raises(AssertionError):
        shown.shows_display_content_and_sources(result, script["steps"][0]["content"])
