"""Fixtures shared by the tests of collectives.dist."""

import uuid

import pytest

from collectives import dist


@pytest.fixture
def no_launch(monkeypatch):
    """Fail the test if a process would be started."""

    def refuse(*args, **kwargs):
        raise AssertionError("a worker process was started")

    monkeypatch.setattr(dist.jobs, "run_tasks", refuse)


@pytest.fixture
def marked_env(monkeypatch):
    """A unique variable in this process's environment: every process started from here
    inherits it, so a leftover one can be found in /proc."""
    mark = f"COLLECTIVES_TEST_{uuid.uuid4().hex}"
    monkeypatch.setenv("COLLECTIVES_LEAK_MARK", mark)
    return mark
