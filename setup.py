"""Build the optional C fast path (goldeval._fast); everything else is in pyproject.toml.

The extension is optional: where it cannot be compiled, goldeval installs anyway and scores with the pure-Python
rule, which gives the same numbers (a test checks the two agree), only slower.

The SHA-256 of _fast.c is compiled in as ``_fast.SOURCE_SHA256``, so that an in-place build left behind by a
``git pull`` that changed _fast.c is noticed and not used (goldeval/_native.py).
"""

import hashlib
from pathlib import Path

from setuptools import Extension, setup

SOURCE = "src/goldeval/_fast.c"
DIGEST = hashlib.sha256((Path(__file__).parent / SOURCE).read_bytes()).hexdigest()

setup(
    ext_modules=[
        Extension(
            "goldeval._fast",
            [SOURCE],
            optional=True,
            extra_compile_args=["-O3", "-ffp-contract=off"],
            define_macros=[("GOLDEVAL_FAST_SOURCE_SHA256", f'"{DIGEST}"')],
        )
    ]
)
