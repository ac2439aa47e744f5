"""Build of skrank's one optional compiled module (the project's metadata is in pyproject.toml).

``skrank._engine._speedups`` reads numpy object arrays of query ids in C, and sums
tie-averaged average precision in two passes over the ranked rows (see
skrank/_engine/_speedups.c).  It is optional: where no C compiler is found the build
warns and skrank installs without it, using its pure-numpy path (same values,
slower only for object-dtype ids and tie-averaged MAP on tied scores).
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("skrank._engine._speedups", ["skrank/_engine/_speedups.c"], optional=True)])
