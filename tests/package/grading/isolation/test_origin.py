"""collectives.grading.isolation.origin: a graded name must be the learner's own code.

Each attack binds a graded name to the package's own function (or an alias, a partial, a
wrapper, a class attribute, a copy of the package's file), with no ``def`` of the learner's:
before the origin check, the isolated re-run took the package's source, which for
``ecmp_no_collision_probability`` needs nothing the learner's process refuses, and scored it.
"""

import shutil
import textwrap

import pytest

from collectives import GradingError
from collectives.fabric.ecmp import ecmp_no_collision_probability
from collectives.grading import call, run_isolated
from collectives.grading.isolation import NOT_YOURS, bundle
from collectives.grading.isolation.origin import check_origin, layers
from collectives.grading.isolation.snapshot import PACKAGE_DIR

ATTACKS = {
    "bound": """
        import collectives as cl
        answer = cl.fabric.ecmp_no_collision_probability
    """,
    "imported_alias": """
        from collectives.fabric.ecmp import ecmp_no_collision_probability as answer
    """,
    "alias_of_alias": """
        import collectives.fabric as fab
        _mine = fab.ecmp_no_collision_probability
        answer = _mine
    """,
    "partial": """
        import functools
        import collectives.fabric as fab
        answer = functools.partial(fab.ecmp_no_collision_probability)
    """,
    "wraps": """
        import functools
        import collectives.fabric as fab
        @functools.wraps(fab.ecmp_no_collision_probability)
        def answer(flows, paths):
            return answer.__wrapped__(flows, paths)
    """,
    "lru_cache_of_it": """
        import functools
        import collectives.fabric as fab
        answer = functools.lru_cache(maxsize=None)(fab.ecmp_no_collision_probability)
    """,
    "static_class_attribute": """
        import collectives.fabric as fab
        class Answers:
            probability = staticmethod(fab.ecmp_no_collision_probability)
        answer = Answers.probability
    """,
    "bound_method_of_a_class_attribute": """
        import collectives.fabric as fab
        class Answers:
            probability = fab.ecmp_no_collision_probability
        answer = Answers().probability
    """,
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_name_bound_to_the_package_is_refused_before_it_runs(learner, attack):
    m = learner(ATTACKS[attack])
    # before: 4 flows on 4 paths, 4!/4**4 = 0.09375, computed by the package's own source
    with pytest.raises(GradingError, match=NOT_YOURS):
        run_isolated(m.answer, 4, 4, name="no_collision_probability")
    with pytest.raises(GradingError, match=NOT_YOURS):
        call(m.answer, 4, 4, name="no_collision_probability")  # the in-kernel call too
    with pytest.raises(GradingError, match=NOT_YOURS):
        call(m.answer, 4, 4, name="no_collision_probability", isolated=True)


def test_the_message_names_the_package_function_and_what_to_do(learner):
    m = learner(ATTACKS["bound"])
    with pytest.raises(GradingError) as info:
        run_isolated(m.answer, 4, 4, name="no_collision_probability")
    message = str(info.value)
    assert message.startswith(
        f"no_collision_probability {NOT_YOURS}: it is "
        "collectives.fabric.ecmp.ecmp_no_collision_probability, a "
        "function of the collectives package."
    )
    assert "`def no_collision_probability(...):`" in message


def test_a_lambda_that_calls_the_package_is_refused_where_it_runs(learner):
    m = learner("""
        import collectives.fabric as fab
        answer = lambda flows, paths: fab.ecmp_no_collision_probability(flows, paths)
    """)
    with pytest.raises(AssertionError, match="without the collectives package"):
        run_isolated(m.answer, 4, 4)


def test_a_copy_of_the_packages_file_elsewhere_is_refused(tmp_path):
    copy = tmp_path / "my_fabric.py"
    shutil.copy(f"{PACKAGE_DIR}/fabric/ecmp.py", copy)
    # the function built from the copy's code, under a module name of the learner's
    code = compile(copy.read_text(), str(copy), "exec")
    function = type(test_layers_go_through_partials_wrappers_and_methods)
    answer = next(
        function(c, {"__name__": "mine"})
        for c in code.co_consts
        if getattr(c, "co_name", "") == "ecmp_no_collision_probability"
    )
    assert answer.__module__ == "mine"
    with pytest.raises(GradingError, match="comes from the collectives package"):
        check_origin(answer, "no_collision_probability")


def test_the_learners_own_functions_pass_decorated_or_not(learner):
    m = learner("""
        import functools
        import math

        @functools.lru_cache(maxsize=None)
        def answer(flows, paths):
            return 0.0 if flows > paths else math.perm(paths, flows) / paths ** flows

        class Model:
            def __call__(self, flows, paths):
                return answer(flows, paths)

        short = lambda flows, paths: answer(flows, paths)
    """)
    assert run_isolated(m.answer, 4, 4) == 0.09375  # 4!/4**4, by hand
    assert run_isolated(m.short, 4, 4) == 0.09375
    check_origin(m.Model(), "model")  # judged by its own __call__
    assert bundle(m.answer)["target"] == "answer"


def test_builtins_are_not_the_learners_code(learner):
    m = learner("""
        import math
        answer = math.comb
    """)
    with pytest.raises(GradingError, match=NOT_YOURS):
        run_isolated(m.answer, 4, 2)


def test_layers_go_through_partials_wrappers_and_methods():
    import functools

    inner = functools.partial(ecmp_no_collision_probability, 4)
    assert ecmp_no_collision_probability in layers(functools.partial(inner))
    assert ecmp_no_collision_probability in layers(staticmethod(ecmp_no_collision_probability))


@pytest.fixture
def shell():
    """An IPython shell in this process (the notebook's kernel, as nbgrader runs it), cleared
    after the test so that no other test sees it."""
    from IPython.core.interactiveshell import InteractiveShell

    instance = InteractiveShell.instance()
    yield instance
    InteractiveShell.clear_instance()


def test_in_a_notebook_only_code_compiled_from_its_cells_is_the_learners(shell):
    def cell(code):
        result = shell.run_cell(textwrap.dedent(code), store_history=True)
        assert result.success, result.error_in_exec

    cell("""
        import math
        def mine(flows, paths):
            return 0.0 if flows > paths else math.perm(paths, flows) / paths ** flows
    """)
    cell("""
        _text = "def forged(flows, paths):\\n    return 0.5\\n"
        exec(compile(_text, "/tmp/not_a_cell.py", "exec"))
        stolen = type(mine)(mine.__code__, {"math": math})
    """)
    check_origin(shell.user_ns["mine"], "mine")
    with pytest.raises(GradingError, match="not written in a cell of this notebook"):
        check_origin(shell.user_ns["forged"], "forged")
    with pytest.raises(GradingError, match="not defined in this notebook"):
        check_origin(shell.user_ns["stolen"], "stolen")
