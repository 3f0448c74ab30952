"""An implementation whose every string is hostile HTML, for the browser test of
report.html (tests/test_report_browser.py): its name, its URIs and its errors try to
inject markup and script; the report must show them as text.

Selectable as ``python:hostile_kit:hostile`` with ``tests/`` on the path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fauxmplementations import _Broken

#: Markup that runs script if a report pastes it unescaped.
PAYLOAD = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=2</script>'


class HostileUris(_Broken):
    """Encodes every id as a string of markup (URI-001, URI-004 and REF-010 fail)."""

    name = f"hostile {PAYLOAD}"

    def op_uri_encode(self, args: Mapping[str, Any]) -> Any:
        return f"dsh-session:{PAYLOAD}"


def hostile() -> HostileUris:
    return HostileUris()


#: Where the image-named kit points its images: the browser test's request sink.
SINK_ENV = "DSH_HOSTILE_SINK"


class ImageName(HostileUris):
    """Names itself and fails with Markdown and HTML images pointing at the request sink
    of tests/test_report_browser.py: a report that renders them requests the sink."""

    def __init__(self) -> None:
        super().__init__()
        import os

        sink = os.environ.get(SINK_ENV, "http://127.0.0.1:9/")
        self.name = (
            f"![md]({sink}md-name.png) <img src={sink}html-name.png> [link]({sink}link) "
            f"{sink}bare.png"
        )
        self.payload = f"![md]({sink}md-uri.png)<img src={sink}html-uri.png>"

    def op_uri_encode(self, args: Mapping[str, Any]) -> Any:
        return f"dsh-session:{self.payload}"


def image_name() -> ImageName:
    return ImageName()
