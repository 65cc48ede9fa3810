"""Tests of collectives.grading.isolation, one module per module."""
