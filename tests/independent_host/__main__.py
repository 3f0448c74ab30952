"""`python -m tests.independent_host` runs the stdio host."""

from tests.independent_host.host import main

raise SystemExit(main())
