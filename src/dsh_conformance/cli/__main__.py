"""``python -m dsh_conformance.cli``."""

from dsh_conformance.cli import main

main()
