#!/usr/bin/env python3
"""A complete dsh-conformance adapter in plain Python (standard library only).

Copy this file, replace the three `uri` functions with calls into your implementation,
add the operations of each capability you implement to OPS and CAPABILITIES, then:

    dsh-conformance smoke --adapter 'subprocess:python3 adapter.py'
    dsh-conformance run   --adapter 'subprocess:python3 adapter.py' --report-dir out/

The protocol (docs/protocol.md): one JSON request per line on stdin, one reply per line
on stdout, in request order; stderr is free for logs. Every field of every operation is
in docs/protocol-reference.md.
"""

import base64
import json
import re
import sys

PROTOCOL = 2  # the version this adapter speaks (docs/protocol-changelog.md)
CAPABILITIES = ["uri"]  # declare a capability only when every one of its ops answers


class Failure(Exception):
    """A typed error: the harness compares the code, never the message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


# --- the implementation under test (replace these with calls into yours) ------------------

SCHEME = "dsh-session:"
INVALID = "SESSION_REFERENCE_INVALID_REFERENCE"


def js_quote(text):
    """JSON.stringify(text): a lone surrogate becomes a \\udxxx escape, so UTF-8 can hold it."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif code < 0x20:
            short = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
            out.append(short.get(char, f"\\u{code:04x}"))
        elif 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out) + '"'


def encode_uri(session_id):
    payload = base64.urlsafe_b64encode(js_quote(session_id).encode("utf-8"))
    return SCHEME + payload.decode("ascii").rstrip("=")


def decode_uri(uri):
    """The exact inverse of encode_uri: anything it could not have produced is invalid."""
    if not isinstance(uri, str) or not re.fullmatch(r"dsh-session:[A-Za-z0-9_-]+", uri):
        raise Failure(INVALID, "not a dsh-session: URI")
    payload = uri[len(SCHEME) :]
    try:
        text = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode("utf-8")
        session_id = json.loads(text)
    except ValueError:
        raise Failure(INVALID, "the URI payload is not base64url JSON") from None
    if not isinstance(session_id, str) or encode_uri(session_id) != uri:
        raise Failure(INVALID, "not the canonical URI of a session id")
    return session_id


def format_mention(session_id, label=None):
    shown = session_id if label is None else label
    return "@[" + re.sub(r"([\\\]])", r"\\\1", shown) + "](" + encode_uri(session_id) + ")"


# --- the operations --------------------------------------------------------------------------


def argument(args, name):
    if name not in args:
        raise Failure("DSH_INVALID_ARGUMENT", f"missing argument {name!r}")
    return args[name]


def handshake(args):
    # The harness offers its newest version; answer ours when it runs it, else refuse
    # (the harness then offers an older one).
    offered = args.get("protocol")
    if not isinstance(offered, int) or offered < PROTOCOL:
        raise Failure("DSH_PROTOCOL_MISMATCH", f"this adapter speaks protocol {PROTOCOL}")
    return {
        "protocol": PROTOCOL,
        "implementation": {"name": "my-implementation", "language": "python", "version": "0.1.0"},
        "capabilities": CAPABILITIES,
    }


OPS = {
    "handshake": handshake,
    "reset": lambda args: None,  # drop every piece of state your implementation keeps
    "uri.encode": lambda args: encode_uri(argument(args, "sessionId")),
    "uri.decode": lambda args: decode_uri(argument(args, "uri")),
    "mention.format": lambda args: format_mention(argument(args, "sessionId"), args.get("label")),
}


def error(request_id, code, message):
    return {"id": request_id, "error": {"code": code, "message": message}}


def answer(line):
    """(the reply to one request line, whether to exit after it); never raises."""
    try:
        request = json.loads(line)
        request_id, op, args = request["id"], request["op"], request.get("args", {})
    except (ValueError, TypeError, KeyError):
        return error(None, "DSH_INVALID_REQUEST", "not a request"), False
    if op == "shutdown":  # reply null, then exit
        return {"id": request_id, "result": None}, True
    run = OPS.get(op)
    if run is None:
        return error(request_id, "DSH_UNSUPPORTED_OPERATION", f"unknown operation {op!r}"), False
    try:
        return {"id": request_id, "result": run(args)}, False
    except Failure as failure:
        return error(request_id, failure.code, str(failure)), False
    except Exception as exc:  # any other failure is the adapter's own, still typed
        return error(request_id, "DSH_ADAPTER_FAILURE", repr(exc)), False


def main():
    # Read line by line and answer in order: the harness may send many requests at once.
    for line in sys.stdin:
        if not line.strip():
            continue
        reply, done = answer(line)
        # ensure_ascii: a lone surrogate travels as \udxxx, so every line is valid UTF-8.
        sys.stdout.write(json.dumps(reply, ensure_ascii=True) + "\n")
        sys.stdout.flush()
        if done:
            return 0
    return 0  # stdin closed: leave


if __name__ == "__main__":
    sys.exit(main())
