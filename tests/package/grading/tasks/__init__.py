"""Tests of collectives.grading.tasks, one module per graded assignment."""
