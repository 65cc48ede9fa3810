"""The fixture of the grading tests that re-run a learner's functions."""

import importlib.util
import itertools
import textwrap

import pytest

_counter = itertools.count()


@pytest.fixture
def learner(tmp_path):
    """``learner(code)``: the module ``code`` defines (a stand-in for a notebook's namespace)."""

    def load(code):
        name = f"learner_module_{next(_counter)}"
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(code))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load
