"""Build the optional accelerator; everything else is configured in pyproject.toml.

``model/_jsfast.c`` speeds up a few JavaScript-string scans and the URI payload codec
(model/jsstr.py keeps the pure-Python definition of each and uses it when the extension
is missing).  ``optional=True``: a machine without a C compiler still installs the suite.
"""

import sys

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "dsh_conformance.model._jsfast",
            ["model/_jsfast.c"],
            optional=True,
            extra_compile_args=[] if sys.platform == "win32" else ["-O3"],
        )
    ]
)
