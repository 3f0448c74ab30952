"""Keep freed heap memory in the process instead of handing it back after every message.

A pipe loop allocates and frees a buffer of up to 64 KiB for every read.  glibc returns
the top of the heap to the system whenever more than 128 KiB of it is free and takes it
back, page by page, on the next read: a page fault for about every request of a pipelined
batch, which doubled the served model's CPU time per call (issue 15).  Raising the trim
threshold keeps those pages; the memory is reused by the next read, never lost.
"""

from __future__ import annotations

import ctypes
import sys
from functools import cache
from typing import Final

#: ``M_TRIM_THRESHOLD`` of glibc's ``mallopt``.
_M_TRIM_THRESHOLD: Final = -1
#: Free heap top kept before any is returned to the system.
TRIM_THRESHOLD: Final = 64 * 1024 * 1024


@cache
def keep_heap() -> bool:
    """Raise glibc's heap trim threshold (once per process); ``False`` where there is no
    glibc to ask."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the process's own C library
    except (OSError, AttributeError):  # musl and other C libraries have no mallopt
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
