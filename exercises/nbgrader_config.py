"""nbgrader configuration of the course directory ``exercises/`` (see exercises/README.md).

Run every ``nbgrader`` command from this directory, with the project's ``.venv/bin`` first on
PATH (nbgrader calls ``alembic`` from PATH). The paths below are relative to this file, so
the same configuration serves a copy of the course directory elsewhere (the pipeline test
copies it to a temporary directory).

Assignments: one folder per assignment under ``source/``, one per chapter group; the release
script (scripts/release_notebooks.py) finds them there. nbgrader 0.9 keeps no list of
assignments in its configuration: ``nbgrader generate_assignment`` records each one in the
gradebook. Currently:

    cost_models                 source/cost_models/ring_all_gather.ipynb          10 points
                                (chapter "Cost models and the ring all-gather")
    all_gather_reduce_scatter   source/all_gather_reduce_scatter/rings_and_duality.ipynb
                                10 points (chapters "All-gather", "Reduce-scatter")
    all_reduce                  source/all_reduce/rabenseifner_all_reduce.ipynb   10 points
                                (chapter "All-reduce")
    all_to_all                  source/all_to_all/bruck_all_to_all.ipynb          10 points
                                (chapter "All-to-all")
    topology_reasoning          source/topology_reasoning/topology_reasoning.ipynb
                                10 points (chapter "TPU cluster topology"; solved without
                                the package, see collectives.grading)
    cluster_collectives         source/cluster_collectives/cluster_collectives.ipynb
                                10 points (chapters "GPU nodes and clusters", "Collectives
                                inside a node", "Collectives across nodes"; solved without
                                the package)
    fp8                         source/fp8/fp8.ipynb                             10 points
                                (chapter "The FP8 training format"; solved without the
                                package)
    real_processes              source/real_processes/real_processes.ipynb       10 points
                                (chapter "From the model to real processes")
    fabric                      source/fabric/fabric.ipynb                       10 points
                                (chapter "Designing the fabric"; solved without the package)
    planning                    source/planning/plan_a_training_run.ipynb        10 points
                                (chapter "Putting it together"; tasks 1-3 solved without
                                the package, task 4 with cl.plan; one written answer)
"""

import os

c = get_config()

COURSE_DIR = os.path.dirname(os.path.abspath(__file__))

# ---- where things are ----------------------------------------------------------------------
c.CourseDirectory.course_id = "collectives"
c.CourseDirectory.root = COURSE_DIR
# the gradebook: SQLite, in the course directory, never committed (.gitignore)
c.CourseDirectory.db_url = "sqlite:///" + os.path.join(COURSE_DIR, "gradebook.db")
# submitted/<student>/<assignment>/, autograded/..., feedback/... (nbgrader's defaults)
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.source_directory = "source"

# ---- generate_assignment -------------------------------------------------------------------
# Solutions between "### BEGIN SOLUTION" and "### END SOLUTION" become this stub; tests
# between "### BEGIN HIDDEN TESTS" and "### END HIDDEN TESTS" are removed.
c.ClearSolutions.code_stub = {
    "python": (
        "# YOUR CODE HERE\n"
        'raise NotImplementedError("not written yet: replace this line with your code")'
    )
}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"
c.ClearSolutions.begin_solution_delimeter = "BEGIN SOLUTION"
c.ClearSolutions.end_solution_delimeter = "END SOLUTION"
c.ClearSolutions.enforce_metadata = True
c.ClearHiddenTests.begin_test_delimeter = "BEGIN HIDDEN TESTS"
c.ClearHiddenTests.end_test_delimeter = "END HIDDEN TESTS"
c.ClearHiddenTests.enforce_metadata = True
c.GenerateAssignment.create_assignment = True

# ---- autograde and validate ----------------------------------------------------------------
# Seconds per cell. The slowest test cell (hidden re-checks in a fresh Python process) takes
# about a second; the margin is for loaded machines. A learner's endless loop costs this much.
c.Execute.timeout = 120
c.Execute.interrupt_on_timeout = True
c.Execute.execute_retries = 0
c.Autograde.create_student = True
# Every notebook runs in the grading sandbox (collectives_grader/sandbox.py): bubblewrap, no
# network, only the student's own folder visible and writable, limits on CPU, memory, processes
# and output. `make setup` installs its kernel spec; `make sandbox` installs bubblewrap. Without
# a working bwrap, kernels refuse to start unless COLLECTIVES_GRADING_SANDBOX=off.
c.Execute.kernel_name = "collectives-sandbox"
# Keep long outputs (a learner printing in a loop) out of the gradebook and feedback.
c.LimitOutput.max_lines = 1000
c.LimitOutput.max_traceback = 100

# ---- the same grading on every path ----------------------------------------------------------
# Plain `nbgrader autograde`, the formgrader and `make grade` all run nbgrader's autograde
# pipeline with these steps of the project's (collectives_grader/pipeline.py): a submission that
# cannot be graded (not JSON, duplicated or emptied grade_ids, old-format metadata, deleted or
# added test cells, another assignment's notebook) becomes a stand-in that scores 0 and says why,
# instead of stopping the class run or being graded as it is; hand grades of written answers
# unchanged since they were graded stay settled on a regrade.
c.Autograde.exporter_class = "collectives_grader.pipeline.TolerantNotebookExporter"
c.Autograde.sanitize_preprocessors = [
    "collectives_grader.pipeline.Precheck",
    "nbgrader.preprocessors.ClearOutput",
    "nbgrader.preprocessors.DeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "nbgrader.preprocessors.OverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]
c.Autograde.autograde_preprocessors = [
    "collectives_grader.pipeline.Execute",
    "collectives_grader.pipeline.ShowRubric",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "collectives_grader.pipeline.AfterGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# ---- feedback without the answer key ---------------------------------------------------------
# The pages students get show each test cell without its hidden tests and each error without its
# traceback (only "Error: message"), and load nothing from a CDN.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "collectives_grader.pipeline.FeedbackWithoutAnswerKey",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
c.GenerateFeedback.exporter_class = "collectives_grader.pipeline.FeedbackExporter"
# Always made again from the gradebook: a hand grade given after `make grade` reaches the page
# (without this, `nbgrader generate_feedback` keeps the earlier page, "Skipping existing").
c.GenerateFeedback.force = True

# ---- zip_collect: the file names of learning platforms' downloads --------------------------
# Matched against each file's whole path: `<student_id>_<notebook>.ipynb`, and Canvas-style
# `<name>_<user id>_<submission id>_<notebook>[-<n>].ipynb` with an optional LATE_/late_ mark
# (before the name or after it); the student id is the first part. Files of other names are
# skipped by nbgrader with a warning.
c.FileNameCollectorPlugin.named_regexp = (
    r".*/(?:LATE_|late_)?(?P<student_id>[^/_]+)_(?:LATE_|late_)?(?:\d+_\d+_)?"
    r"(?P<file_id>[^/]+?)(?:-\d+)?\.ipynb$"
)

# ---- the cohort --------------------------------------------------------------------------------
# The hidden tests draw part of their cases from this seed (collectives.grading.cohort): change
# it for every new cohort, so that a table of answers built from an earlier cohort's feedback
# misses this cohort's cases. The seed never enters a grading kernel (a learner's cell could
# read it there and compute the drawn cases' answers): Execute gives each test cell a key of
# its own, a hash of the seed, the submission and the cell's grade_id, as the cell's first
# hidden line. The variable COLLECTIVES_COURSE_SEED, where set, overrides it (one grading run
# under another cohort's seed).
COURSE_SEED = "collectives-2026"
c.Execute.course_seed = os.environ.get("COLLECTIVES_COURSE_SEED") or COURSE_SEED
