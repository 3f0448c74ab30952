"""Reference operations for URIs, mentions and tag-safe serialization."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from dsh_conformance.adapters.reference import State, op
from dsh_conformance.model import jsstr, mentions, serialization, uri
from dsh_conformance.model.errors import DshError, ErrorCode


def _missing(name: str) -> DshError:
    return DshError(ErrorCode.INVALID_ARGUMENT, f"missing argument {name!r}")


def _arg(args: Mapping[str, Any], name: str) -> Any:
    try:
        return args[name]
    except KeyError:
        raise _missing(name) from None


@op("uri.encode", "uri", pure=True)
def _encode(state: State, args: Mapping[str, Any]) -> str:
    try:  # _arg, inlined: the protocol's most frequent call
        session_id = args["sessionId"]
    except KeyError:
        raise _missing("sessionId") from None
    return uri.encode(session_id)


@op("uri.decode", "uri", pure=True)
def _decode(state: State, args: Mapping[str, Any]) -> str:
    return uri.decode(_arg(args, "uri"))


@op("mention.format", "uri", pure=True)
def _format(state: State, args: Mapping[str, Any]) -> str:
    return mentions.format_mention(_arg(args, "sessionId"), args.get("label"))


@op("mention.parse", "mention", pure=True)
def _parse(state: State, args: Mapping[str, Any]) -> dict[str, object]:
    return mentions.parse(_arg(args, "text")).to_json()


@op("json.tagSafe", "serialization", pure=True)
def _tag_safe(state: State, args: Mapping[str, Any]) -> str:
    return serialization.stringify_tag_safe(args.get("value", jsstr.UNDEFINED))
