"""Fabric arithmetic (collectives.fabric.sizing): counts against Al-Fares and the built Clos,
bisection after failures, the slowdown a failure causes."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectives import fabric
from collectives.errors import TopologyError

BW = 50e9


@pytest.mark.parametrize("k", [2, 4, 6, 8, 16, 48])
def test_fat_tree_counts_match_al_fares_and_the_builder(k):
    counts = fabric.fat_tree_counts(k)
    # Al-Fares et al. 2008: k^3/4 hosts, 5k^2/4 switches, (k/2)^2 cores
    assert counts["hosts"] * 4 == k**3
    assert counts["switches"] * 4 == 5 * k**2
    assert counts["core"] * 4 == k**2
    if k <= 16:
        t = fabric.fat_tree(k, BW)
        assert (t.n_ranks, t.n_switches, t.n_links // 2) == (
            counts["hosts"],
            counts["switches"],
            counts["cables"],
        )


@settings(max_examples=40, deadline=None)
@given(
    radix=st.sampled_from([4, 6, 8, 12]),
    tiers=st.integers(1, 3),
    ratio=st.sampled_from([1, 2, 3, 5]),
)
def test_clos_counts_match_the_built_clos(radix, tiers, ratio):
    try:
        t = fabric.clos(radix, tiers, BW, ratio)
    except TopologyError:
        with pytest.raises(TopologyError):
            fabric.clos_counts(radix, tiers, BW, ratio)
        return
    c = fabric.clos_counts(radix, tiers, BW, ratio)
    assert c["hosts"] == t.n_ranks
    assert c["switches_per_tier"] == t.switches_per_tier
    assert c["cables"] * 2 == t.n_links
    assert c["bisection"] == pytest.approx(fabric.bisection_bandwidth(t))
    if ratio == 1:
        assert c["hosts"] == (radix if tiers == 1 else 2 * (radix // 2) ** tiers)


@settings(max_examples=25, deadline=None)
@given(hosts=st.integers(1, 12), uplinks=st.integers(1, 8), data=st.data())
def test_failure_slowdown_is_the_ceiling_ratio(hosts, uplinks, data):
    # placed at best, the busiest uplink carries ceil(hosts / live uplinks) flows
    failed = data.draw(st.integers(0, uplinks - 1))
    expected = -(-hosts // (uplinks - failed)) / -(-hosts // uplinks)
    assert fabric.failure_slowdown(hosts, uplinks, failed) == pytest.approx(expected)


@settings(max_examples=25, deadline=None)
@given(half=st.integers(1, 4), hosts=st.integers(1, 6), spines=st.integers(1, 6), data=st.data())
def test_leaf_spine_bisection_is_the_narrower_side(half, hosts, spines, data):
    failed = data.draw(st.integers(0, spines - 1))
    got = fabric.leaf_spine_bisection(2 * half, hosts, spines, 10.0, failed)
    assert got == pytest.approx(half * min(hosts, spines - failed) * 10.0)


def test_clos_count_names_what_it_counts():
    assert fabric.clos_count(8, 2, "hosts", 3) == 48
    assert fabric.clos_count(8, 2, "bisection", 3, 50e9) == 48 * 50e9 / 2 / 3
    with pytest.raises(TopologyError, match="what must be 'hosts'"):
        fabric.clos_count(8, 2, "ports")


# ---- PFC headroom --------------------------------------------------------------------------


def test_pfc_headroom_term_by_term():
    # 400 Gb/s = 5e10 bytes/s, 3 m: two 4,096-byte frames, a round trip of 6 m at 2e8 m/s
    # (30 ns: 1,500 bytes) and the 2.408 us response (301 bytes per Gb/s x 400 = 120,400)
    assert fabric.pfc_headroom(50e9, 3, response_s=0) == pytest.approx(2 * 4096 + 1500)
    assert fabric.pfc_headroom(50e9, 3) == pytest.approx(2 * 4096 + 1500 + 120_400)
    # 500 m: the round trip, 5 us, is 250,000 bytes
    assert fabric.pfc_headroom(50e9, 500) == pytest.approx(2 * 4096 + 250_000 + 120_400)
    with pytest.raises(TopologyError, match="cable_m"):
        fabric.pfc_headroom(50e9, -1)


def test_pfc_headroom_receiver_frame_of_any_class_and_interface_delays():
    # Cisco: the receiver's frame may be of any class, so the largest MTU: a 9,216-byte
    # jumbo frame ahead of the pause, then the sender's 4,096-byte RoCE frame. 3 m at
    # 400 Gb/s without the reaction: 9,216 + 4,096 + 1,500 = 14,812 bytes
    assert fabric.pfc_headroom(50e9, 3, receiver_mtu=9216, response_s=0) == pytest.approx(14_812)
    # a separate 100 ns of transceiver and interface delay at 5e10 bytes/s adds 5,000 bytes
    assert fabric.pfc_headroom(
        50e9, 3, receiver_mtu=9216, response_s=0, interface_s=100e-9
    ) == pytest.approx(19_812)
    # receiver_mtu left out: the same frame twice, as before
    assert fabric.pfc_headroom(50e9, 3, mtu=1000, response_s=0) == pytest.approx(3500)
    assert fabric.sizing.JUMBO_FRAME_BYTES == 9216
    with pytest.raises(TopologyError, match="receiver_mtu"):
        fabric.pfc_headroom(50e9, 3, receiver_mtu=0)
    with pytest.raises(TopologyError, match="interface_s"):
        fabric.pfc_headroom(50e9, 3, interface_s="soon")


def test_mlx5_xoff_is_the_drivers_formula():
    # port_buffer.c: (301 + 2.16 len) * Gb/s + 2.72 MTU; at 400 Gb/s, 3 m, MTU 4,096:
    # (301 + 6.48) * 400 + 11,141.12 = 134,133.12 bytes
    assert fabric.mlx5_xoff(50e9, 3) == pytest.approx((301 + 6.48) * 400 + 2.72 * 4096)
    # below 40 Gb/s the driver takes 40
    assert fabric.mlx5_xoff(10e9 / 8, 0, mtu=1000) == pytest.approx(301 * 40 + 2720)
