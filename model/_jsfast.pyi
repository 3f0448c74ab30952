# The optional C accelerator of jsstr.py (model/_jsfast.c); each function has a
# pure-Python twin in jsstr.py with the same result on every input (answer's and take's
# twins are the general paths of adapters/serve.py and adapters/subprocess.py).

from collections.abc import Callable
from typing import Any

def surrogates(s: str, /) -> int: ...
def utf8_length(s: str, /) -> int: ...
def canonical_length(s: str, /) -> int: ...
def quote_base64url(s: str, /) -> str: ...
def unquote_base64url(payload: str, /) -> str: ...
def find(text: str, needle: str, start: int, end: int, /) -> int: ...
def plain(value: object, /) -> bool: ...
def answer(
    lines: list[bytes],
    start: int,
    call: Callable[[str, dict[str, Any]], Any],
    loads: Callable[[bytes], Any],
    dumps: Callable[..., bytes],
    option: int,
    pending: list[bytes],
    /,
) -> int | tuple[int, int | str, Any]: ...
def take(
    batch: list[tuple[str, dict[str, Any]]],
    index: int,
    arrived: Any,
    popleft: Callable[[], Any],
    appendleft: Callable[[Any], None],
    loads: Callable[[bytes], Any],
    out: list[Any],
    /,
) -> int: ...
