"""Deliberately broken implementations, to prove the harness blames the right requirement.

Each wraps the reference model and breaks exactly one rule; tests/test_harness_faux.py
runs the suite against each through the CLI and checks which requirement ids fail.
Selectable as ``python:fauxmplementations:<factory>`` with ``tests/`` on the path.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from dsh_conformance.adapters.contract import Handshake, ImplementationError
from dsh_conformance.adapters.reference import ReferenceAdapter

INVALID = "SESSION_REFERENCE_INVALID_REFERENCE"
SCHEME = "dsh-session:"


class _Broken:
    """The reference model with one operation replaced (``op_<name>`` methods).

    The base of every kit in tests/ (broken and allowed-different implementations alike);
    ``kind`` prefixes the handshake name so a report says which kit a run used.
    """

    name = "broken"
    kind = "faux"

    def __init__(self) -> None:
        self.reference = ReferenceAdapter()

    def handshake(self) -> Handshake:
        real = self.reference.handshake()
        info = real.implementation
        return Handshake(
            implementation=type(info)(name=f"{self.kind}: {self.name}", language="python"),
            capabilities=real.capabilities,
        )

    def call(self, op: str, args: Mapping[str, Any]) -> Any:
        override = getattr(self, "op_" + op.replace(".", "_"), None)
        if override is not None:
            return override(args)
        return self.reference.call(op, args)

    def close(self) -> None:
        self.reference.close()


class PaddedUris(_Broken):
    """Keeps base64 '=' padding in URIs (URI-004), consistently in both directions."""

    name = "padded URIs"

    def op_uri_encode(self, args: Mapping[str, Any]) -> Any:
        uri = self.reference.call("uri.encode", args)
        payload = uri.removeprefix(SCHEME)
        return uri + "=" * (-len(payload) % 4)

    def op_uri_decode(self, args: Mapping[str, Any]) -> Any:
        uri = args.get("uri")
        if not isinstance(uri, str) or not uri.startswith(SCHEME):
            return self.reference.call("uri.decode", args)
        sid = self.reference.call("uri.decode", {"uri": uri.rstrip("=")})
        if self.op_uri_encode({"sessionId": sid}) != uri:
            raise ImplementationError(INVALID, "not canonical (padded) form")
        return sid


class UnescapedLessThan(_Broken):
    """Leaves '<' raw in tag-safe JSON (SER-001)."""

    name = "unescaped <"

    def op_json_tagSafe(self, args: Mapping[str, Any]) -> Any:
        return str(self.reference.call("json.tagSafe", args)).replace("\\u003c", "<")


class LenientUris(_Broken):
    """Accepts non-canonical URIs: lenient base64 and JSON, no re-encode check (URI-003)."""

    name = "lenient URI decoding"

    def op_uri_decode(self, args: Mapping[str, Any]) -> Any:
        uri = args.get("uri")
        try:
            return self.reference.call("uri.decode", args)
        except ImplementationError:
            if not isinstance(uri, str) or not uri.startswith(SCHEME):
                raise
        payload = uri.removeprefix(SCHEME).rstrip("=")
        try:
            raw = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4))
            value = json.loads(raw.decode("utf-8", "replace"))
        except ValueError as exc:
            raise ImplementationError(INVALID, "undecodable") from exc
        if not isinstance(value, str):
            raise ImplementationError(INVALID, "not a string")
        return value


def padded() -> PaddedUris:
    return PaddedUris()


def unescaped_lt() -> UnescapedLessThan:
    return UnescapedLessThan()


def lenient() -> LenientUris:
    return LenientUris()


class OtherScheme(_Broken):
    """Writes ``dsh-sessions:`` for ``dsh-session:`` (URI-001, a seed MUST), consistently
    in both directions: the kit a written manifest must not turn green (issue 35)."""

    name = "other URI scheme"

    def op_uri_encode(self, args: Mapping[str, Any]) -> Any:
        return "dsh-sessions:" + str(self.reference.call("uri.encode", args))[len(SCHEME) :]

    def op_uri_decode(self, args: Mapping[str, Any]) -> Any:
        uri = args.get("uri")
        if isinstance(uri, str) and uri.startswith("dsh-sessions:"):
            uri = SCHEME + uri.removeprefix("dsh-sessions:")
        elif isinstance(uri, str) and uri.startswith(SCHEME):
            raise ImplementationError(INVALID, "not this host's scheme")
        return self.reference.call("uri.decode", {**args, "uri": uri})


class TwoCapabilities(_Broken):
    """The reference declaring only ``uri`` and ``serialization``: a correct partial
    implementation, whose headline must say how little was judged (issue 35)."""

    name = "two capabilities"

    def handshake(self) -> Handshake:
        real = super().handshake()
        return Handshake(
            implementation=real.implementation,
            capabilities=frozenset({"uri", "serialization", "mentions"}),
        )


def other_scheme() -> OtherScheme:
    return OtherScheme()


def two_capabilities() -> TwoCapabilities:
    return TwoCapabilities()
