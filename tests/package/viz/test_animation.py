"""collectives.viz.animation: a Schedule step by step, drawn from the same Schedules the rest
of the package uses (one row or frame per state of collectives.trace), on any Topology."""

import re

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

import collectives as cl
from collectives import viz
from collectives.viz import animation


def test_draw_schedule_has_a_row_per_step_and_shows_the_buffers():
    s = cl.algorithms.ring_all_gather(4)
    fig = viz.draw_schedule(s, cl.topology.ring(4, 1.0))
    assert len(fig.axes) == 2 * (s.n_steps + 1)
    grid = fig.axes[-1]  # the buffers after the last step: all full
    labels = sorted(t.get_text() for t in grid.texts)
    assert labels == sorted(str(c) for c in range(4) for _ in range(4))
    plt.close(fig)


def test_reductions_show_contribution_counts():
    s = cl.algorithms.ring_reduce_scatter(3)
    fig = viz.draw_schedule(s)
    last = [t.get_text() for t in fig.axes[-1].texts]
    # rank r ends with chunk r summed over all 3 ranks
    assert {"0\n3/3", "1\n3/3", "2\n3/3"} <= set(last)
    plt.close(fig)


def test_stepper_has_one_tab_per_frame():
    tab = viz.stepper(cl.algorithms.ring_all_gather(5), cl.topology.ring(5, 1.0))
    assert len(tab.children) == 5
    assert tab.titles == ("start", "step 0", "step 1", "step 2", "step 3")
    pngs = [animation.frame_png(frame) for frame in tab.children]
    assert all(png[:8] == b"\x89PNG\r\n\x1a\n" for png in pngs)
    # every frame differs from the one before (each step moves something)
    assert all(a != b for a, b in zip(pngs, pngs[1:]))


def test_animation_has_a_frame_per_state():
    html = viz.animate(cl.algorithms.ring_all_gather(3)).to_jshtml()
    frames = set(re.findall(r"frames\[(\d+)\] = ", html))
    assert frames == {"0", "1", "2"}  # before step 0, after steps 0 and 1


def test_a_cluster_schedule_animates_on_its_wiring_alone():
    """NVLS on a DGX node: the wiring without the buffers (buffers=False), one frame per
    state; the switch participant is placed on the node's NVSwitch, as cl.time places it."""
    dgx = cl.hardware.preset("dgx-h100")
    nvls = cl.algorithms.nvls_all_reduce(8)
    html = viz.animate(nvls, dgx, buffers=False, levels=("nvlink",)).to_jshtml()
    frames = set(re.findall(r"frames\[(\d+)\] = ", html))
    assert frames == {str(i) for i in range(nvls.n_steps + 1)}
    fig, axes = viz.frame_figure(nvls, dgx, buffers=False)
    assert axes.shape == (1, 1)
    plt.close(fig)


def test_frame_machinery_animates_any_drawing():
    """frame_animation / frame_stepper take any function that draws frame i."""
    fig, axes = plt.subplots(1, 1, squeeze=False)
    drawn = []

    def draw(i, axes):
        drawn.append(i)
        axes[0, 0].bar([0], [i + 1])

    html = animation.frame_animation(draw, 3, fig, axes).to_jshtml()
    assert set(re.findall(r"frames\[(\d+)\] = ", html)) == {"0", "1", "2"}
    assert set(drawn) == {0, 1, 2}

    def render(i):
        f, ax = plt.subplots()
        ax.plot([0, 1], [0, i])
        return animation.figure_png(f, dpi=40)

    tab = animation.frame_stepper(render, ["a", "b"], ["a line", "a steeper line"])
    assert tab.titles == ("a", "b") and tab.children[0].value != tab.children[1].value
    assert [animation.frame_description(f) for f in tab.children] == ["a line", "a steeper line"]
    with pytest.raises(cl.CollectivesError, match="descriptions must be 2 non-empty strings"):
        animation.frame_stepper(render, ["a", "b"], ["only one"])
    with pytest.raises(cl.CollectivesError, match="descriptions must be 2 non-empty strings"):
        animation.frame_stepper(render, ["a", "b"], ["a line", " "])
    assert animation.frame_titles(3) == ["start", "step 0", "step 1"]


def test_placement_draws_a_small_collective_on_part_of_a_cluster():
    """A 4-rank ring placed on GPUs 4..7 of a 2-node cluster (node 1): one arrow per link
    of every route, as cl.time places the ranks."""
    small = cl.topology.cluster(2, 4, nvlink_bandwidth=1e9, pcie_bandwidth=1e9, nic_bandwidth=1e9)
    ring = cl.algorithms.ring_all_gather(4)
    fig = viz.draw_schedule(ring, small, steps=[0], placement=[4, 5, 6, 7])
    arrows = [p for p in fig.axes[2].patches if isinstance(p, matplotlib.patches.FancyArrowPatch)]
    # each transfer crosses GPU -> NVSwitch -> GPU: 2 links, 4 transfers
    assert len(arrows) == 8
    plt.close(fig)


def test_step_titles_and_a_layout_reach_every_frame():
    dgx = cl.hardware.preset("dgx-h100")
    nvls = cl.algorithms.nvls_all_reduce(8)
    layout = viz.wiring_of(dgx, ("nvlink", "pcie"), chips=True, max_fan=3)
    titles = ["reduce", "return", "store", "multicast"]
    fig = viz.draw_schedule(nvls, dgx, steps=[3], layout=layout)
    assert fig.axes[2].get_title() == "step 3"
    plt.close(fig)
    from collectives.viz import animation as va

    assert va.step_title(3, titles) == "step 3: multicast" and va.step_title(-1) == "start"
    fig, axes = va.frame_figure(nvls, dgx, True, layout)
    # a cluster's tiers: the wiring above the buffers
    assert axes.shape == (1, 2) and axes[0, 0].get_position().y0 > axes[0, 1].get_position().y1
    va.draw_frame(nvls, dgx, cl.trace(nvls), 4, axes, layout=layout, step_titles=titles)
    assert axes[0, 0].get_title() == "step 3: multicast"
    plt.close(fig)
    import pytest

    with pytest.raises(cl.CollectivesError, match="step_titles must be 4 strings"):
        viz.animate(nvls, dgx, step_titles=titles[:2])


def test_chosen_steps_make_the_frames():
    s = cl.algorithms.ring_all_reduce(8)  # 14 steps: 15 frames, more than a phone's tab bar
    from collectives.viz import animation as va

    assert va.chosen_frames(s) == list(range(15)) and va.PHONE_TABS == 5
    # the start, then the state after each chosen step (after step k: frame k + 1)
    assert va.chosen_frames(s, [6, 0, 13]) == [0, 1, 7, 14]
    tab = viz.stepper(s, cl.topology.switch(8, 1.0), steps=[0, 6, 13], buffers=False)
    assert tab.titles == ("start", "step 0", "step 6", "step 13")
    anim = viz.animate(s, cl.topology.ring(8, 1.0), steps=[0, 1])
    assert anim.to_jshtml().count("data:image/png;base64") == 3
    import pytest

    with pytest.raises(cl.CollectivesError, match=r"steps must be steps 0\.\.13"):
        va.chosen_frames(s, [14])
    plt.close("all")


def test_a_cube_drawn_alone_gets_a_figure_of_its_own_aspect():
    """Four planes of 4 x 4 two to a row: about as high as wide (with room for the title),
    and one axes filling the figure below the title."""
    cube = cl.hardware.preset("tpu-v5p", shape=(4, 4, 4))
    lay = cl.viz.wiring_of(cube, panels_per_row=2)
    left, right, bottom, top = cl.viz.wiring.frame_limits(lay)
    width, height = animation.panel_figsize(lay)
    assert width == animation.PANEL_WIDTH
    assert abs(height - animation.TITLE_ROOM - width * (top - bottom) / (right - left)) < 1e-9
    one_row = cl.viz.wiring_of(cube)  # the four planes side by side: a flat figure
    assert animation.panel_figsize(one_row)[1] < 0.6 * height
    schedule = cl.algorithms.torus_all_gather((4, 4, 4), axes=(2,))
    fig, axes = viz.frame_figure(schedule, cube, buffers=False, layout=lay)
    assert axes.shape == (1, 1) and tuple(fig.get_size_inches()) == (width, height)
    plt.close(fig)
    tab = viz.stepper(schedule, cube, layout=lay, buffers=False, step_titles=["a", "b"])
    assert tab.titles == ("start", "step 0", "step 1")
    assert len({animation.frame_png(frame) for frame in tab.children}) == 3


def test_stepper_frames_describe_the_ring_all_gather_step_by_step():
    """Each frame's alt text comes from the Schedule. The ring all-gather on 4 ranks, by
    its definition: in step s rank r sends to its right neighbour r + 1 (mod 4) the chunk
    it received in step s - 1, i.e. chunk (r - s) mod 4. So step 0 is 0->1 chunk 0,
    1->2 chunk 1, 2->3 chunk 2, 3->0 chunk 3; after step 2 (the last of 3) every rank holds
    every chunk, and no rank does before."""
    tab = viz.stepper(cl.algorithms.ring_all_gather(4), cl.topology.ring(4, 1.0), dpi=30)
    start, step0, step1, step2 = [animation.frame_description(f) for f in tab.children]
    for r in range(4):
        assert f"rank {r} holds chunk {r}" in start
        assert f"rank {r} sends chunk {r} to rank {(r + 1) % 4}" in step0
        assert f"rank {r} sends chunk {(r - 1) % 4} to rank {(r + 1) % 4}" in step1
        assert f"rank {r} sends chunk {(r - 2) % 4} to rank {(r + 1) % 4}" in step2
    assert step0.startswith("step 0 of steps 0 to 2")
    assert "no buffer is complete" in step0 and "no buffer is complete" in step1
    assert "every buffer is complete" in step2
    assert all("png" not in d and len(d) <= animation.DESCRIPTION_LIMIT for d in (start, step2))


def test_long_steps_are_summarised_with_their_count():
    """NVLS on 8 GPUs: step 0 has 64 transfers (8 ranks x 8 chunks reduced into the
    switch); its description gives the count and stays under the limit; on the DGX node
    the transfers use the NVLink level."""
    dgx = cl.hardware.preset("dgx-h100")
    tab = viz.stepper(cl.algorithms.nvls_all_reduce(8), dgx, buffers=False, dpi=20)
    step0 = animation.frame_description(tab.children[1])
    assert "64 transfers" in step0 and "and 5" in step0 and "nvlink" in step0
    assert len(step0) <= animation.DESCRIPTION_LIMIT
    assert animation.summarised(["a", "b", "c"], 100) == "a, b, c"
    assert animation.summarised(["aaaa", "bbbb", "cccc"], 12) == "aaaa, and 2 more"


def test_a_relayed_block_is_named_by_its_owner_and_a_local_copy_is_a_move():
    """Bruck's all-to-all on 4 ranks, by its definition: step 0 rotates each buffer locally
    (rank r's slot i takes its block for rank r + i, so rank 1 moves chunk 1 from slot 1 to
    slot 0); step 1 sends the slots with bit 0 set one rank on, so rank 3 sends rank 0 its
    slot 3, which holds rank 3's block for rank 3 + 3 = 2 (mod 4); step 2 sends the slots
    with bit 1 set two ranks on, so rank 0 forwards that block, rank 3's chunk 2, to rank 2
    (its slot 3), a relay: the sender's slot holds another rank's chunk."""
    schedule = cl.algorithms.bruck_all_to_all(4)
    step0, step1, step2 = animation.schedule_descriptions(schedule, frames=[1, 2, 3])
    assert "rank 1 moves chunk 1 from slot 1 to slot 0" in step0
    assert "rank 0 sends rank 3's chunk 2 to rank 2 slot 3" in step2
    assert "rank 3 sends" not in step2.split("e.g. ")[0]  # the count, then the examples


def test_a_reduce_scatter_milestone_and_the_chapters_step_titles_are_said():
    """The ring all-reduce on 4 ranks is a reduce-scatter (steps 0 to 2) then an all-gather:
    after step 2, and not before, every rank holds one chunk summed over all 4; a step title
    given to the stepper is read with its step."""
    schedule = cl.algorithms.ring_all_reduce(4)
    titles = [f"phase {'RS' if k < 3 else 'AG'} {k}" for k in range(6)]
    descriptions = animation.schedule_descriptions(schedule, step_titles=titles)
    assert "fully reduced" not in descriptions[2]  # after step 1
    assert "every rank holds a fully reduced chunk" in descriptions[3]  # after step 2
    assert descriptions[4].startswith("step 3 of steps 0 to 5, phase AG 3: ")
    tab = viz.stepper(schedule, cl.topology.ring(4, 1.0), step_titles=titles, dpi=20)
    assert animation.frame_description(tab.children[1]).startswith(
        "step 0 of steps 0 to 5, phase RS 0"
    )


def test_a_collective_along_one_axis_is_described_as_one_per_group():
    """An all-gather along one axis of a 4 x 4 x 4 torus is 64 / 4 = 16 all-gathers of 4
    chips at once: the start says so, and the end says each buffer holds its group's
    result, not the whole torus's."""
    schedule = cl.algorithms.torus_all_gather((4, 4, 4), axes=(2,))
    descriptions = animation.schedule_descriptions(schedule)
    assert "16 all_gathers at once, each over a group of 4 of the 64 ranks" in descriptions[0]
    assert descriptions[-1].endswith("every buffer holds its group's result")
