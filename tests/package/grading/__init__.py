"""Tests of collectives.grading, one module per module of the package (a package of tests, so
that their names, such as tasks/test_fp8.py, do not clash with other folders')."""
