"""Build the optional C fast path (goldeval._fast); everything else is in pyproject.toml.

The extension is optional: where it cannot be compiled, goldeval installs anyway and scores with the pure-Python
rule, which gives the same numbers (a test checks the two agree), only slower.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("goldeval._fast", ["src/goldeval/_fast.c"], optional=True, extra_compile_args=["-O3", "-ffp-contract=off"])])
