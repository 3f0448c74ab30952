"""The harness inside pytest, in rooms of one concept each (docs/architecture.md).

``plugin`` holds the pytest hooks and nothing else: each hook calls into a room.

- ``selection``: which collected conformance tests run (profile, ``-r``, ``-c``,
  ``--test``, ``--resume``/``--last-failed``), and what the harness knows of each.
- ``classify``: the outcome of one test from pytest's report (pass, fail, crash…).
- ``evidence``: what the record keeps of a failure: message, traceback, the request
  in flight, an unreadable result.
- ``blame``: which requirements a failure blames and which it still judged.
- ``expected``: the expectation manifest applied: entry matching, xfail/xpass, stale
  and unexpectedly passing entries, host reviews.
- ``recording``: the record's header, test lines and footer.
- ``write_expectations``: ``--write-expectations``, a manifest for a run's failures.

Registered by the pytest plugin for every session; it does nothing unless the session
collects conformance tests.  Nothing is imported here, so a room imports alone.
"""
