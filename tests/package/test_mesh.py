"""Named device meshes: groups of any axes, placement on endpoints, bad input."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import collectives as cl
from collectives.mesh import Mesh


def test_groups_of_one_axis():
    m = Mesh({"dp": 2, "tp": 4})
    assert (m.axis_names, m.shape, m.n_ranks) == (("dp", "tp"), (2, 4), 8)
    assert m.groups("tp").tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert m.groups("dp").tolist() == [[0, 4], [1, 5], [2, 6], [3, 7]]
    assert (m.axis_size("dp"), m.axis_size("tp")) == (2, 4)


def test_groups_of_two_axes():
    m = Mesh({"pp": 2, "dp": 2, "tp": 2})
    # ranks 0..7 = 4 pp + 2 dp + tp
    assert m.groups("dp", "tp").tolist() == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert m.groups("pp", "tp").tolist() == [[0, 1, 4, 5], [2, 3, 6, 7]]
    # members in mesh order, whatever order the axes are named in
    assert m.groups("tp", "pp").tolist() == m.groups("pp", "tp").tolist()
    assert m.groups("pp", "dp", "tp").tolist() == [list(range(8))]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.data())
def test_groups_partition_the_ranks(sizes, data):
    names = [f"a{i}" for i in range(len(sizes))]
    m = Mesh(dict(zip(names, sizes)))
    chosen = data.draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
    g = m.groups(*chosen)
    assert g.shape == (
        m.n_ranks // math.prod(m.axis_size(a) for a in chosen),
        math.prod(m.axis_size(a) for a in chosen),
    )
    assert sorted(g.ravel().tolist()) == list(range(m.n_ranks))
    # inside a group only the chosen axes vary; members and groups are row-major
    coords = np.stack(np.unravel_index(g, m.shape), axis=-1)  # (G, m, axes)
    fixed = [i for i, n in enumerate(names) if n not in chosen]
    assert np.all(coords[:, :, fixed] == coords[:, :1, fixed])
    assert np.all(np.diff(g, axis=1) > 0) and np.all(np.diff(g[:, 0]) > 0)


def test_devices_place_mesh_ranks_on_endpoints():
    # a 2 x 4 mesh laid on a 4 x 2 torus, tp along the torus's long axis
    devices = np.arange(8).reshape(4, 2).T
    m = Mesh({"dp": 2, "tp": 4}, devices=devices)
    assert m.placement.tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert m.devices.tolist() == devices.tolist()
    assert m.device_groups("tp").tolist() == [[0, 2, 4, 6], [1, 3, 5, 7]]
    assert m.device_groups("dp").tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
    flat = Mesh({"dp": 2, "tp": 4}, devices=[10, 11, 12, 13, 20, 21, 22, 23])
    assert flat.devices.tolist() == [[10, 11, 12, 13], [20, 21, 22, 23]]
    assert Mesh({"x": 3}).placement.tolist() == [0, 1, 2]


def test_mesh_is_read_only():
    source = np.arange(4)
    m = Mesh({"x": 2, "y": 2}, devices=source)
    source[0] = 9  # the mesh kept its own copy
    assert m.placement[0] == 0
    for array in (m.placement, m.devices, m.groups("x"), m.device_groups("y")):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 5
    with pytest.raises(
        cl.CollectivesError,
        match=re.escape(
            "a Mesh cannot be changed once built (tried to set 'shape'); build a new one"
        ),
    ):
        m.shape = (4,)


def test_from_shape():
    m = Mesh.from_shape((4, 2), ("x", "y"))
    assert (m.axis_names, m.shape) == (("x", "y"), (4, 2))
    t = Mesh.from_shape(cl.topology.torus((2, 3, 4), 1.0), ["x", "y", "z"])
    assert t.shape == (2, 3, 4) and t.groups("z").shape == (6, 4)
    assert repr(t) == "Mesh({'x': 2, 'y': 3, 'z': 4})"


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: Mesh({}),
            "axes must be a non-empty mapping of axis name to size, e.g. "
            "{'dp': 4, 'tp': 8}, got {}",
        ),
        (
            lambda: Mesh([("dp", 2)]),
            "axes must be a non-empty mapping of axis name to size, e.g. "
            "{'dp': 4, 'tp': 8}, got [('dp', 2)]",
        ),
        (lambda: Mesh({"dp": 0}), "the size of mesh axis 'dp' must be an integer >= 1, got 0"),
        (lambda: Mesh({"dp": 2.0}), "the size of mesh axis 'dp' must be an integer, got 2.0"),
        (lambda: Mesh({"": 2}), "mesh axis names must be non-empty strings, got ''"),
        (lambda: Mesh({3: 2}), "mesh axis names must be non-empty strings, got 3"),
        (
            lambda: Mesh({"dp": 2, "tp": 2}, devices=[0, 1, 2]),
            "devices must hold 4 endpoint ids (one per position of a 2x2 mesh), got 3",
        ),
        (
            lambda: Mesh({"dp": 2}, devices=[1, 1]),
            "devices must be distinct: two mesh positions share an endpoint",
        ),
        (lambda: Mesh({"dp": 2}, devices=[0, -1]), "devices must be >= 0; it holds -1"),
        (
            lambda: Mesh({"dp": 2}, devices=[0.0, 1.0]),
            "devices must hold integers, got float64 values",
        ),
        (
            lambda: Mesh({"dp": 2, "tp": 4}).groups(),
            "groups() needs at least one axis name, one of dp, tp",
        ),
        (
            lambda: Mesh({"dp": 2, "tp": 4}).groups("pp"),
            "unknown mesh axis 'pp'; the axes are dp, tp",
        ),
        (
            lambda: Mesh({"dp": 2, "tp": 4}).device_groups("tp", "tp"),
            "groups() names an axis twice: ('tp', 'tp')",
        ),
        (lambda: Mesh({"dp": 2}).axis_size("tp"), "unknown mesh axis 'tp'; the axes are dp"),
        (
            lambda: Mesh.from_shape((4, 2), ("x",)),
            "names must be 2 distinct axis names (one per axis of shape (4, 2)), got ('x',)",
        ),
        (
            lambda: Mesh.from_shape((4, 2), ("x", "x")),
            "names must be 2 distinct axis names (one per axis of shape (4, 2)), got ('x', 'x')",
        ),
        (
            lambda: Mesh.from_shape(cl.topology.switch(4, 1.0), ("x",)),
            "topology_shape must be a tuple of axis sizes or a Topology with a shape, "
            "got Topology('switch of 4', n_ranks=4, n_switches=1, n_links=8)",
        ),
    ],
)
def test_bad_meshes_are_named(call, message):
    with pytest.raises(cl.CollectivesError, match=f"^{re.escape(message)}$"):
        call()
