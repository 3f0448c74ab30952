"""Each run's Hypothesis profile reaches every property of the suite (D-512).

A ``@settings(...)`` decorator fills every setting it does not name from the profile
loaded when its module is imported, and pytest imports a conformance module once per
process (``--import-mode=importlib`` finds it in ``sys.modules`` again).  So in a process
that runs the suite more than once (the project's in-process runs; an xdist worker that
collected ``conformance/`` first) the decorated properties of every later run kept the
first profile's phases and seeding: a ``fixed`` run generated examples, a ``dev`` run after
a ``fixed`` one generated none.  Before a run, the suite's test modules imported under
another profile are forgotten, so its collection imports them again under its own; runs
under one profile import them once.
"""

from __future__ import annotations

import sys
from pathlib import Path

#: What chose the profile the suite's test modules were last imported under.
_imported_under: list[object] = [None]


def forget_other_profiles(profile: object) -> None:
    """Forget the suite's test modules unless they were imported under *profile* (what
    chooses a run's profile: its ``--hypothesis-profile``, ``--max-examples`` and the
    environment the default profile comes from)."""
    if _imported_under[0] == profile:
        return
    from dsh_conformance import suite

    root = suite.conformance_root()
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        # Only pytest's own names for the suite's files: the package's modules
        # (dsh_conformance.conformance.*) are helpers other code holds on to.
        ours = isinstance(file, str) and not name.startswith("dsh_conformance")
        if ours and Path(str(file)).resolve().is_relative_to(root):
            del sys.modules[name]
    _imported_under[0] = profile
