"""TPU slices (collectives.hardware.tpu): the wraparound rule, hosts, full pods."""

import numpy as np
import pytest

import collectives as cl
from collectives import hardware


def test_full_v5e_pod_is_a_wrapped_16x16_torus():
    t = cl.hardware.preset("tpu-v5e")
    assert t.n_ranks == 256 and t.shape == (16, 16) and t.wraparound == (True, True)
    assert t.n_links == 256 * 4
    assert set(t.link_bandwidth) == {4.5e10}


def test_v5e_8x16_wraps_only_the_long_axis():
    t = cl.hardware.preset("tpu-v5e", shape=(8, 16))
    assert t.wraparound == (False, True)


@pytest.mark.parametrize("shape, wrap", [
    ((2, 2, 1), (False, False, False)), ((2, 2, 4), (False, False, False)),
    ((4, 4, 4), (True, True, True)), ((4, 8, 12), (True, True, True)),
])
def test_3d_slices_wrap_only_when_built_of_whole_cubes(shape, wrap):
    t = cl.hardware.preset("tpu-v5p", shape=shape)
    # a 2-long axis never gets a duplicate wraparound link, so compare the rule itself
    assert hardware.tpu_wraparound("tpu-3d", shape) == wrap
    assert t.n_ranks == shape[0] * shape[1] * shape[2]


def test_full_v5p_pod_routes_and_times():
    t = cl.hardware.preset("tpu-v5p")
    assert t.n_ranks == 8960
    # 16x20x28 torus: farthest chip is 8 + 10 + 14 = 32 hops away
    far = (8 * 20 + 10) * 28 + 14
    assert len(t.route(0, far)) == 32


@pytest.mark.parametrize("name, chips_per_host, hosts_in_pod", [
    # The Scaling Book (2026-07): v5e/v6e one host per 8 chips ("4x2"), v4/v5p/TPU7x per 2x2x1;
    # TPU7x: each VM holds four chips and two NICs
    # (Google's GKE Ironwood page): 9216 / 4 = 2304 hosts in the pod
    ("tpu-v5e", 8, 256 // 8), ("tpu-v6e", 8, 32), ("tpu-v5p", 4, 8960 // 4),
    ("tpu-v4", 4, 4096 // 4), ("tpu7x", 4, 2304),
])
def test_tpu_hosts(name, chips_per_host, hosts_in_pod):
    assert hardware.spec(name).chips_per_host == chips_per_host
    host = hardware.tpu_hosts(name)
    assert host.max() + 1 == hosts_in_pod
    assert set(np.bincount(host).tolist()) == {chips_per_host}
    # a 2x2 v5e slice sits on part of one host
    assert hardware.tpu_hosts("tpu-v5e", (2, 2)).tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("shape, hosts", [
    # Google's v5e slice table (cloud.google.com/tpu/docs/v5e): topology | chips | hosts
    ((2, 2), 1), ((2, 4), 1), ((4, 4), 2), ((4, 8), 4), ((8, 8), 8), ((8, 16), 16),
    ((16, 16), 32),
])
def test_v5e_hosts_match_googles_slice_table(shape, hosts):
    assert np.unique(hardware.tpu_hosts("tpu-v5e", shape)).size == hosts


def test_v5e_host_is_two_rows_of_four_chips():
    # a 2 x 4 tile: chips 0-3 (row 0) and 16-19 (row 1) of a 16 x 16 pod share host 0
    host = hardware.tpu_hosts("tpu-v5e").reshape(16, 16)
    assert (host[:2, :4] == 0).all() and host[0, 4] == 1 and host[2, 0] == 4


def test_tpu7x_hosts_are_2x2x1_tiles_of_its_4x4x576_pod():
    # a 4 x 4 x 576 pod in 2 x 2 x 1 tiles: 2 x 2 x 576 = 2304 hosts; chips 0, 1, 4, 5 of the
    # first 4 x 4 plane (row-major over 4 x 4 x 576: chip (x, y, z) = (x * 4 + y) * 576 + z)
    # share host 0
    host = hardware.tpu_hosts("tpu7x")
    assert host.size == 9216 and np.unique(host).size == 2304
    first = [(x * 4 + y) * 576 for x in (0, 1) for y in (0, 1)]
    assert set(host[first].tolist()) == {0}
    assert hardware.spec("tpu7x").host_shape == (2, 2, 1)
    assert any("four chips and two NICs" in s for s in hardware.spec("tpu7x").extra_sources)
