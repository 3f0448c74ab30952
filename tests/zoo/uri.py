"""URI defects: the canonical ``dsh-session:`` identifier (URI-*)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from typing import Any

from dsh_conformance.adapters.contract import ImplementationError
from dsh_conformance.model import jsstr
from zoo import Area
from zoo._base import Broken

AREA = Area(capabilities=["uri"], requirements=["URI-*", "JS-*"])
SCHEME = "dsh-session:"
INVALID = "SESSION_REFERENCE_INVALID_REFERENCE"


def _sid(uri: object) -> str | None:
    return uri.removeprefix(SCHEME) if isinstance(uri, str) and uri.startswith(SCHEME) else None


class PaddedUris(Broken):
    name = "padded URIs"
    invariant = "Encodes with base64 '=' padding (and decodes only that form)."
    kills = frozenset({"URI-004"})
    collateral_ok = frozenset({"URI-003"})

    def op_uri_encode(self, args: Mapping[str, Any]) -> Any:
        uri = self.reference.call("uri.encode", args)
        return uri + "=" * (-len(uri.removeprefix(SCHEME)) % 4)

    def op_uri_decode(self, args: Mapping[str, Any]) -> Any:
        payload = _sid(args.get("uri"))
        if payload is None or (not payload.endswith("=") and len(payload) % 4):
            raise ImplementationError(INVALID, "not a padded URI")
        return self.reference.call("uri.decode", {"uri": SCHEME + payload.rstrip("=")})


class StandardAlphabet(Broken):
    name = "standard base64 alphabet"
    invariant = "Encodes with the standard '+/' base64 alphabet instead of base64url."
    kills = frozenset({"URI-001"})
    # '+' and '/' break URI-004's "base64url alphabet" too, seen once every check runs.
    collateral_ok = frozenset({"JS-001", "URI-002", "URI-004"})

    def op_uri_encode(self, args: Mapping[str, Any]) -> Any:
        uri = self.reference.call("uri.encode", args)
        return uri.replace("-", "+").replace("_", "/")

    def op_uri_decode(self, args: Mapping[str, Any]) -> Any:
        payload = _sid(args.get("uri"))
        if payload is None or "-" in payload or "_" in payload:
            raise ImplementationError(INVALID, "not a standard-alphabet URI")
        swapped = payload.replace("+", "-").replace("/", "_")
        return self.reference.call("uri.decode", {"uri": SCHEME + swapped})


class UnquotedId(Broken):
    name = "no JSON string step"
    invariant = "Base64url-encodes the id's UTF-8 bytes directly, skipping JSON.stringify."
    kills = frozenset({"URI-001"})
    collateral_ok = frozenset({"JS-001", "URI-002", "URI-003"})
    # Without the JSON step a lone surrogate has no UTF-8 form: those ids cannot round-trip.

    def op_uri_encode(self, args: Mapping[str, Any]) -> Any:
        sid = args.get("sessionId")
        if not isinstance(sid, str):
            return self.reference.call("uri.encode", args)
        return SCHEME + jsstr.base64url_encode(jsstr.utf8_encode(sid))

    def op_uri_decode(self, args: Mapping[str, Any]) -> Any:
        payload = _sid(args.get("uri"))
        try:
            raw = base64.urlsafe_b64decode((payload or "") + "=" * (-len(payload or "") % 4))
            sid = raw.decode("utf-8")
        except (binascii.Error, ValueError) as exc:
            raise ImplementationError(INVALID, "undecodable") from exc
        if payload is None or self.op_uri_encode({"sessionId": sid}) != args.get("uri"):
            raise ImplementationError(INVALID, "not canonical")
        return sid


class LenientDecoding(Broken):
    name = "lenient decoding"
    invariant = "Decodes any URI whose payload base64-decodes to a JSON string, canonical or not."
    kills = frozenset({"URI-003"})

    def op_uri_decode(self, args: Mapping[str, Any]) -> Any:
        try:
            return self.reference.call("uri.decode", args)
        except ImplementationError:
            payload = _sid(args.get("uri"))
            if payload is None:
                raise
        try:
            raw = base64.urlsafe_b64decode(payload.rstrip("=") + "=" * (-len(payload) % 4))
            value = json.loads(raw.decode("utf-8", "replace"))
        except ValueError as exc:
            raise ImplementationError(INVALID, "undecodable") from exc
        if not isinstance(value, str):
            raise ImplementationError(INVALID, "not a string")
        return value


class LossySurrogates(Broken):
    name = "lossy lone surrogates"
    invariant = (
        "Replaces lone surrogates with U+FFFD before encoding, so such ids do not round-trip."
    )
    kills = frozenset({"URI-002"})
    collateral_ok = frozenset({"JS-001", "URI-001"})

    def op_uri_encode(self, args: Mapping[str, Any]) -> Any:
        sid = args.get("sessionId")
        if isinstance(sid, str):
            sid = jsstr.utf8_decode(jsstr.utf8_encode(sid))
        return self.reference.call("uri.encode", {**args, "sessionId": sid})


class WrongErrorCode(Broken):
    name = "untyped decode error"
    invariant = "Rejects an invalid URI with a generic error code instead of INVALID_REFERENCE."
    kills = frozenset({"URI-005"})

    def op_uri_decode(self, args: Mapping[str, Any]) -> Any:
        try:
            return self.reference.call("uri.decode", args)
        except ImplementationError as exc:
            raise ImplementationError("DSH_INVALID_ARGUMENT", exc.message) from exc


MEMBERS = (
    PaddedUris,
    StandardAlphabet,
    UnquotedId,
    LenientDecoding,
    LossySurrogates,
    WrongErrorCode,
)
