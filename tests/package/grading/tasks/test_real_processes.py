"""collectives.grading.tasks.real_processes (earlier collectives.grading.processes): the checks
of the notebook on real processes (exercises/source/real_processes): a recorded sweep, a fit of
the ring all-reduce's alpha and beta, the Schedule-or-torch choice, broken runs and their
diagnosis, and the ring written with torch.distributed.

Values are derived by hand in comments; the renderings of broken runs are held to real runs of
the launcher's fault injection (slow: processes); the pipeline test
(tests/course/test_grading_pipeline.py -k real_processes) runs everything through nbgrader.
"""

import re

import numpy as np
import pytest

import collectives as cl
from collectives import GradingError
from collectives.grading.tasks import real_processes as rp

#: a sweep recorded on the course's build machine (the source notebook's MEASUREMENTS)
TABLE = [
    (4096, 0.02623, 0.00589),
    (16384, 0.02609, 0.006554),
    (65536, 0.02703, 0.003928),
    (262144, 0.02566, 0.004569),
    (1048576, 0.02424, 0.006971),
    (4194304, 0.03402, 0.01269),
]
SIZES = [4096 * 4**i for i in range(6)]


def exact(alpha, beta, n=4, sizes=SIZES):
    # 2(n-1) alpha + 2(n-1)/n S beta, written out here rather than through the module
    return [2 * (n - 1) * alpha + 2 * (n - 1) / n * s * beta for s in sizes]


# ---- the model and the fit --------------------------------------------------------------------


def test_ring_model_is_the_alpha_beta_cost():
    # n = 4: 6 steps of 10 us, 1.5 S bytes at 1 ns: 6e-5 + 1.5e-3 = 1.56e-3 s at S = 1e6
    assert rp.ring_model_seconds(1e6, 1e-5, 1e-9, 4) == pytest.approx(1.56e-3, rel=1e-12)


def test_reference_fit_recovers_an_exact_model():
    alpha, beta = rp.reference_fit(SIZES, exact(5e-5, 1e-9), 4)
    assert alpha == pytest.approx(5e-5, rel=1e-9) and beta == pytest.approx(1e-9, rel=1e-9)
    assert rp.relative_rms(5e-5, 1e-9, SIZES, exact(5e-5, 1e-9), 4) == pytest.approx(0, abs=1e-12)


def test_relative_rms_is_the_root_mean_square_of_relative_errors():
    # two sizes, the model exact at one and 10 % high at the other: sqrt((0 + 0.01) / 2)
    model = exact(1e-5, 1e-9, sizes=[1000, 2000])
    seconds = [model[0], model[1] / 1.1]
    assert rp.relative_rms(1e-5, 1e-9, [1000, 2000], seconds, 4) == pytest.approx(
        0.0707106781, rel=1e-8
    )


def absolute_fit(nbytes, seconds, n):
    s, t = np.asarray(nbytes, float), np.asarray(seconds, float)
    a = np.stack([np.full_like(s, 2 * (n - 1)), 2 * (n - 1) / n * s], axis=1)
    (alpha, beta), *_ = np.linalg.lstsq(a, t, rcond=None)
    return alpha, beta


def test_check_fit_takes_the_best_fit_and_refuses_a_fit_of_the_times():
    seconds = [t * f for t, f in zip(exact(2e-4, 2.5e-9), (1.05, 0.97, 1.02, 0.95, 1.04, 0.99))]
    best = rp.reference_fit(SIZES, seconds, 4)
    assert rp.check_fit(best, "fit", SIZES, seconds, 4) == 1.0
    assert rp.check_fit(list(best), "fit", SIZES, seconds, 4) == 1.0
    with pytest.raises(AssertionError, match=r"misses the measured times by .* more than the"):
        rp.check_fit(absolute_fit(SIZES, seconds, 4), "fit", SIZES, seconds, 4)
    # forgetting the 2(n-1) steps: alpha six times too large
    with pytest.raises(AssertionError, match="root mean square of the relative errors"):
        rp.check_fit((6 * best[0], best[1]), "fit", SIZES, seconds, 4)


def test_check_fit_passes_a_fit_right_to_many_digits_of_an_exact_model():
    # the least rms relative error is ~1e-16 here; alpha off by 1e-11 (an iterative fit's
    # tolerance) adds ~1e-11, and alpha and beta rounded to 6 digits 5e-6 at most
    seconds = exact(5e-5, 1e-9)
    for eps in (1e-13, 1e-11, 1e-9, 1e-7):
        assert rp.check_fit((5e-5 * (1 + eps), 1e-9), "fit", SIZES, seconds, 4) == 1.0
    rounded = [float(f"{v:.6g}") for v in (5.0000123e-5, 1.0000041e-9)]
    assert rp.check_fit(rounded, "fit", SIZES, exact(5.0000123e-5, 1.0000041e-9), 4) == 1.0
    # alpha 1e-4 off (the model 6.6e-5 off in rms, above the floor of 1e-5) fails, with the
    # rms written in digits that show it
    text = r"alpha = 5\.0005e-05 s.* by 0\.00658 % .*the best fit's [0-9.e-]+ % allows"
    with pytest.raises(AssertionError, match=text):
        rp.check_fit((5e-5 * (1 + 1e-4), 1e-9), "fit", SIZES, seconds, 4)


@pytest.mark.parametrize(
    "answer, error, text",
    [
        ((-1e-5, 1e-9), AssertionError, "a latency per step and a time per byte are positive"),
        ((1e-5,), GradingError, r"should be a pair \(alpha, beta\)"),
        ("1e-5, 1e-9", GradingError, "should be a pair"),
        ((None, 1e-9), GradingError, "the alpha of fit"),
    ],
)
def test_check_fit_errors(answer, error, text):
    with pytest.raises(error, match=text):
        rp.check_fit(answer, "fit", SIZES, exact(5e-5, 1e-9), 4)


def test_fit_cases_are_fixed_then_drawn_from_the_seed():
    a, b = rp.fit_cases(3, "cohort a"), rp.fit_cases(3, "cohort b")
    assert a[:2] == b[:2] and a[2:] != b[2:] and len(a) == len(b) == 5
    for i, (nbytes, seconds, n) in enumerate(a):
        assert 3 <= n <= 8 or n in (4, 8)
        alpha, beta = rp.reference_fit(nbytes, seconds, n)
        assert alpha > 0 and beta > 0 and len(nbytes) == len(seconds) >= 6
        if i == 0:  # the exact model (to 6 digits): any fit of the right model fits it
            assert rp.check_fit(absolute_fit(nbytes, seconds, n), "fit", nbytes, seconds, n)
            continue
        # a fit of the times themselves is refused in every case with noise (both terms matter)
        with pytest.raises(AssertionError):
            rp.check_fit(absolute_fit(nbytes, seconds, n), "fit", nbytes, seconds, n, rel=1e-3)


# ---- the recorded sweep ----------------------------------------------------------------------


def test_recorded_reads_the_table_as_plain_sorted_rows():
    rows = rp.recorded(np.array(TABLE[::-1]))
    assert rows[0] == [4096, 0.02623, 0.00589] and [r[0] for r in rows] == SIZES
    assert all(type(r[0]) is int and type(r[1]) is float for r in rows)


@pytest.mark.parametrize(
    "table, text",
    [
        ({"a": 1}, "should be a list of rows"),
        ([(4096, 0.1)], r"MEASUREMENTS\[0\] should be a row"),
        ([(4096.5, 0.1, 0.1)], "a positive whole number"),
        ([(4096, "fast", 0.1)], "the ring_all_reduce \\(your Schedule\\) seconds"),
    ],
)
def test_recorded_refuses_other_forms(table, text):
    with pytest.raises(GradingError, match=text):
        rp.recorded(table)


def test_the_build_machines_sweep_is_plausible():
    assert rp.check_sweep(rp.recorded(TABLE)) == 1.0


@pytest.mark.parametrize(
    "table, text",
    [
        ([(s // 1024, a, b) for s, a, b in TABLE], "has 4 bytes, which a float32 ring"),
        (TABLE[:4], "has 4 sizes; record at least 5"),
        (TABLE + [TABLE[0]], "has the size 4096 bytes twice"),
        # 4 KiB to 64 KiB: a factor 16
        ([(4096 * 2**i, a, b) for i, (_, a, b) in enumerate(TABLE[:5])], "a factor 256 at least"),
        (
            [(s, a, b) for (s, _, b), a in zip(TABLE, [0.03, 0.029, 0.028, 0.027, 0.026, 0.025])],
            "no longer than the 0.03 s at 4096 bytes: not a sweep of a ring",
        ),
        # slower in the middle than at both ends: the best line has a negative time per byte
        (
            [(s, a, b) for (s, _, b), a in zip(TABLE, [0.01, 0.05, 0.05, 0.05, 0.05, 0.0101])],
            "not both positive: not the times of a ring",
        ),
    ],
)
def test_implausible_sweeps_are_refused(table, text):
    with pytest.raises(AssertionError, match=text):
        rp.check_sweep(rp.recorded(table))


def test_measurements_line_is_python_the_notebook_records():
    result = cl.dist.SweepResult(
        "all_reduce",
        4,
        4,
        "gloo",
        10,
        2,
        tuple(
            cl.dist.SweepRow(s, s // 4, "float32", "sum", impl, t, 0.0, 0.0, 0)
            for s, a, b in TABLE[:2]
            for impl, t in (("ring_all_reduce", a * 1e6), ("torch.distributed.all_reduce", b * 1e6))
        ),
    )
    namespace = {}
    exec(rp.measurements_line(result), namespace)
    assert namespace["MEASUREMENTS"] == [(4096, 0.02623, 0.00589), (16384, 0.02609, 0.006554)]


# ---- the choice ---------------------------------------------------------------------------------

#: the Schedule 600 us + 0.3 ns/B, torch 120 us + 1.5 ns/B (exact lines): they cross where
#: 480 us = 1.2 ns/B x S, at S = 400 000 bytes
ELSEWHERE = [[s, 6e-4 + s * 3e-10, 1.2e-4 + s * 1.5e-9] for s in SIZES]


@pytest.mark.parametrize(
    "nbytes, faster", [(2**14, "torch"), (3e5, "torch"), (5e5, "schedule"), (2**30, "schedule")]
)
def test_check_choice_goes_by_the_fits(nbytes, faster):
    times = rp.predicted_seconds(ELSEWHERE, nbytes)
    assert times["schedule"] == pytest.approx(6e-4 + nbytes * 3e-10, rel=1e-9)
    assert rp.check_choice(faster, "c", ELSEWHERE, nbytes) == 1.0
    slower = "schedule" if faster == "torch" else "torch"
    with pytest.raises(AssertionError, match=f"is '{slower}': at .* bytes the best fits"):
        rp.check_choice(slower, "c", ELSEWHERE, nbytes)


def test_check_choice_errors():
    with pytest.raises(GradingError, match="should be 'schedule' or 'torch'"):
        rp.check_choice(None, "c", ELSEWHERE, 2**20)
    with pytest.raises(AssertionError, match="which is not 'schedule' or 'torch'"):
        rp.check_choice("gloo", "c", ELSEWHERE, 2**20)


def test_choice_cases_cover_the_table_and_both_sides_of_crossovers():
    rows = rp.recorded(TABLE)
    cases = rp.choice_cases(rows, 3, "cohort a")
    assert cases[0] == (rows, 4096)  # the learner's own table at its own sizes first
    picks = []
    for table, s in cases:
        times = rp.predicted_seconds(table, s)
        # no size outside the sweep, and no call closer than the fits' miss (at least 5 %)
        assert table[0][0] <= s <= table[-1][0]
        margin = rp.choice_margin(table)
        assert margin >= 0.05 and max(times.values()) > (1 + margin) * min(times.values())
        picks.append(min(times, key=times.get))
    assert {"schedule", "torch"} <= set(picks)
    # the build machine's table: the fits miss the torch column by 17.8 % (rms), which is
    # the margin there
    assert rp.choice_margin(rows) == pytest.approx(0.178, abs=5e-4)
    assert cases != rp.choice_cases(rows, 3, "cohort b")


# ---- broken runs --------------------------------------------------------------------------------


def test_hang_positions_by_hand():
    # ring all-reduce on 4 ranks, rank 2 never posts step 3: ranks 1 and 3 exchange with it in
    # step 3 and wait there; rank 0 (peers 3 and 1, both in step 3) completes it and waits in
    # step 4 for rank 3 (as a real run showed)
    assert rp.hang_positions(cl.algorithms.ring_all_reduce(4), 2, 3) == [4, 3, 3, 3]
    # 6 ranks, rank 3 at the last step (9 of 10): ranks 2 and 4 wait in it; 1 and 5 (two away)
    # complete it and wait in the final barrier (10), and so does 0
    assert rp.hang_positions(cl.algorithms.ring_all_reduce(6), 3, 9) == [10, 10, 9, 9, 9, 10]


def test_a_dead_rank_reports_itself():
    assert rp.broken_run(4, "die", 2, 3) == (
        "rank 2 of 4 failed over gloo in job 0 (schedule 'ring_all_reduce') at step 3 of 6: "
        "ProcessDied: exited with code 70 without a Python exception (os._exit, or a crash) "
        "(rank(s) 0, 1, 3 failed too)"
    )


def test_a_long_message_is_reported_by_its_receiver():
    # rank 3 sends to rank 0 (round the ring) in every step; one chunk of 8 bytes too many
    text = rp.broken_run(4, "mismatch", 3, 5)
    assert text.startswith(
        "rank 0 of 4 failed over gloo in job 0 (schedule 'ring_all_reduce') at step 5 of 6: "
        "ProcessDied: was killed by SIGABRT"
    )
    assert "op.preamble.length <= op.nbytes. 16 vs 8. Received data size" in text
    assert text.endswith("(rank(s) 1, 2, 3 failed too)")


def test_a_hang_names_every_ranks_step():
    text = rp.broken_run(6, "hang", 3, 9)
    assert text.startswith("timed out after 60 s running 6 ranks over gloo: rank(s) 0, 1, 2, 3, 4")
    assert "rank 0 in the final barrier, waiting for the others; " in text
    assert (
        "rank 4 in job 0 (schedule 'ring_all_reduce') at step 9 of 10; rank 5 in the final" in text
    )
    assert rp.broken_run(4, "hang", 0, 0, stall=3.0).startswith("no progress for 3 s running 4")


def test_broken_run_refuses_a_case_that_does_not_exist():
    for case in ((4, "slow", 0, 0), (4, "die", 4, 0), (4, "die", 0, 6)):
        with pytest.raises(GradingError, match="no broken run"):
            rp.broken_run(*case)


def test_check_diagnosis():
    assert rp.check_diagnosis((1, 4, "mismatch"), "d", 4, "mismatch", 1, 4) == 1.0
    assert rp.check_diagnosis([np.int64(1), 4, "mismatch"], "d", 4, "mismatch", 1, 4) == 1.0
    with pytest.raises(AssertionError, match=r"names rank 2, but rank 1 broke \(rank 2 reported"):
        rp.check_diagnosis((2, 4, "mismatch"), "d", 4, "mismatch", 1, 4)
    with pytest.raises(AssertionError, match="stop at its step too"):
        rp.check_diagnosis((3, 2, "hang"), "d", 5, "hang", 2, 2)
    with pytest.raises(AssertionError, match="says 'die', but in that run a rank hung"):
        rp.check_diagnosis((2, 2, "die"), "d", 5, "hang", 2, 2)
    with pytest.raises(AssertionError, match="names step 3, but rank 2 broke at step 2"):
        rp.check_diagnosis((2, 3, "hang"), "d", 5, "hang", 2, 2)
    with pytest.raises(AssertionError, match="not one of 'die', 'hang', 'mismatch'"):
        rp.check_diagnosis((2, 2, "crash"), "d", 5, "hang", 2, 2)
    for answer, text in (
        ((2, 2), "a triple"),
        ((2.0, 2, "hang"), "the rank of d should be an int"),
        ((2, 2, None), "the kind of d should be a string"),
    ):
        with pytest.raises(GradingError, match=text):
            rp.check_diagnosis(answer, "d", 5, "hang", 2, 2)


def test_diagnosis_cases_are_fixed_then_drawn():
    a, b = rp.diagnosis_cases(4, "cohort a"), rp.diagnosis_cases(4, "cohort b")
    assert a[:6] == b[:6] and a[6:] != b[6:] and len(a) == 10
    for n, kind, rank, step in a:
        assert 4 <= n <= 8 and kind in ("die", "hang", "mismatch")
        assert 0 <= rank < n and 0 <= step < 2 * (n - 1)
        rp.broken_run(n, kind, rank, step)


def test_broken_reports_carry_numbers_drawn_from_the_seed():
    cases = rp.diagnosis_cases(4, "cohort a")
    reports = rp.broken_reports(cases, course_seed="cohort a")
    assert [case for _, case in reports] == cases
    assert reports == rp.broken_reports(cases, course_seed="cohort a")
    assert [r for r, _ in reports] != [r for r, _ in rp.broken_reports(cases, course_seed="b")]
    # no report is one of the package's renderings with the default job, name, chunk and
    # timeout: a table of those (the 960 of broken_run's defaults) holds none of them
    table = {
        rp.broken_run(n, kind, rank, step)
        for n in range(4, 9)
        for kind in ("die", "hang", "mismatch")
        for rank in range(n)
        for step in range(2 * (n - 1))
    }
    assert len(table) == 960 and not table & {r for r, _ in reports}
    (die, _), (mismatch, _) = reports[:2]  # (4, "die", 1, 0), (5, "mismatch", 4, 2)
    head = r"rank 1 of 4 failed over gloo in job (\d+) \(schedule '(\w+)'\) at step 0 of 6"
    label, name = re.match(head, die).groups()
    assert 0 <= int(label) < 64 and name.startswith("grad_bucket_")
    sent, posted = map(int, re.search(r"op.nbytes. (\d+) vs (\d+)\.", mismatch).groups())
    assert sent == 2 * posted and posted % 4 == 0 and posted != rp.BROKEN_CHUNK_BYTES


def normalised(text):
    """A report with its list of the other failed ranks dropped (a real run lists them in the
    order it noticed them)."""
    return re.sub(r" \(rank\(s\) [\d, ]+ failed too\)", "", text)


@pytest.mark.slow
@pytest.mark.parametrize(
    "case, context",
    [
        ((4, "die", 2, 3), {}),
        ((4, "mismatch", 3, 5), {}),
        ((5, "hang", 3, 2), {}),
        ((6, "hang", 3, 9), {}),
        # what the hidden reports vary: the job's label, the Schedule's name, the chunk size
        ((5, "mismatch", 0, 6), {"job": 17, "name": "grad_bucket_40213", "chunk_bytes": 4096}),
    ],
)
def test_broken_runs_are_what_the_launcher_raises(case, context):
    from collectives.dist.jobs import _schedule_job  # as tests/package/dist/test_worker.py
    from collectives.dist.launch import run_tasks

    n, kind, rank, step = case
    schedule = cl.algorithms.ring_all_reduce(n).renamed(context.get("name", "ring_all_reduce"))
    inputs = rp.broken_inputs(n, context.get("chunk_bytes", rp.BROKEN_CHUNK_BYTES))
    job = _schedule_job(schedule, inputs)
    job["fault"] = {"rank": rank, "step": step, "kind": kind}
    stall = 2.0 if kind == "hang" else None
    with pytest.raises(cl.DistError) as info:
        run_tasks(n, [job], "gloo", 60.0, labels=[context.get("job", 0)], stall=stall)
    expected = rp.broken_run(*case, stall=stall, **context)
    assert normalised(str(info.value)) == normalised(expected)


def test_diagnosis_examples_are_one_of_each_fault_drawn_per_cohort(monkeypatch):
    monkeypatch.delenv("COLLECTIVES_COURSE_SEED", raising=False)
    practice = rp.diagnosis_examples()
    assert practice == rp.diagnosis_examples("practice")  # a learner's own kernel
    assert [kind for _, kind, _, _ in practice] == ["die", "mismatch", "hang"]
    assert rp.diagnosis_examples("cohort a") != rp.diagnosis_examples("cohort b")
    for n, _, rank, step in practice + rp.diagnosis_examples("cohort a"):
        assert 4 <= n <= 6 and 1 <= rank < n and 1 <= step < 2 * (n - 1)


# ---- the ring on processes --------------------------------------------------------------------


def ring_report(sent, length=8, n=4):
    """A report of run_on_ranks with the right sum on every rank and ``sent`` bytes."""
    want = np.sum([rp.pattern(r, length, np.float32) for r in range(n)], axis=0).tolist()
    case = {
        "length": length,
        "dtype": "float32",
        "outputs": [want] * n,
        "torch": [want] * n,
        "sent": sent,
        "forbidden": [],
    }
    return {"world_size": n, "cases": [case], "error": None}


def test_check_ring_all_reduce_holds_the_bytes_to_the_ring_from_both_sides():
    # 8 float32 elements, S = 32 bytes on 4 ranks: 2 x 3 / 4 x 32 = 48 bytes from every rank
    assert rp.check_ring_all_reduce(ring_report([48, 48, 48, 48])) == 1.0
    with pytest.raises(AssertionError, match=r"rank 2 sent 96 bytes; .* 2 times that"):
        rp.check_ring_all_reduce(ring_report([48, 48, 96, 48]))
    # the right sum with no counted byte (torch's functional all_reduce), or fewer than the
    # bound from the busiest rank
    for sent in ([0, 0, 0, 0], [47, 40, 0, 0]):
        with pytest.raises(AssertionError, match="fewer bytes than any point-to-point"):
            rp.check_ring_all_reduce(ring_report(sent))


FUNCTIONAL = """
import torch.distributed as dist

def ring_all_reduce(tensor):
    import torch.distributed._functional_collectives as fc
    tensor.copy_(fc.wait_tensor(fc.all_reduce(tensor, "sum", dist.group.WORLD)))
    return tensor
"""


@pytest.mark.slow
def test_torchs_functional_all_reduce_is_refused_by_its_bytes(tmp_path, monkeypatch):
    # it reaches gloo through torch.ops._c10d_functional: no replaced function sees it, no
    # byte is counted, and the sum is right
    (tmp_path / "functional_ring.py").write_text(FUNCTIONAL)
    monkeypatch.syspath_prepend(str(tmp_path))
    import functional_ring

    report = rp.run_on_ranks(functional_ring.ring_all_reduce, cases=((8, "float32"),))
    assert report["error"] is None and report["cases"][0]["sent"] == [0, 0, 0, 0]
    assert report["cases"][0]["forbidden"] == []
    with pytest.raises(AssertionError, match="fewer bytes than any point-to-point"):
        rp.check_ring_all_reduce(report)
