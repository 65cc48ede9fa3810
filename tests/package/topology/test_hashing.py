"""The one flow hash (collectives.topology.hashing), held to an independent implementation
of MurmurHash3's 64-bit finaliser in Python integers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectives.topology import hashing

MASK = 2**64 - 1


def reference_fmix64(h):
    """MurmurHash3 fmix64 (Appleby's public-domain reference), on Python ints."""
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK
    return h ^ (h >> 33)


def reference_flow_hash(src, dst, flow=0, seed=0):
    """flow_hash by its docstring: fmix64((src << 32 | dst) ^ fmix64(flow F ^ seed S))."""
    f, s = 0x9E3779B97F4A7C15, 0xD6E8FEB86659FD93
    extra = reference_fmix64(((flow & MASK) * f & MASK) ^ ((seed & MASK) * s & MASK))
    return reference_fmix64(((src << 32) | dst) ^ extra)


def test_fmix64_matches_the_reference_and_maps_zero_to_zero():
    values = [0, 1, 2, 12345, 2**32 + 7, 2**63, MASK]
    got = hashing.fmix64(np.array(values, dtype=np.uint64))
    assert got.tolist() == [reference_fmix64(v) for v in values]
    assert int(got[0]) == 0  # 0 -> 0: flow 0, seed 0 add nothing


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**31),
    st.integers(0, 2**31),
    st.integers(-(2**40), 2**40),
    st.integers(-5, 2**20),
)
def test_flow_hash_matches_its_definition(src, dst, flow, seed):
    got = hashing.flow_hash(np.array([src]), np.array([dst]), np.array([flow]), seed)
    assert int(got[0]) == reference_flow_hash(src, dst, flow, seed)


def test_flow_zero_seed_zero_is_the_hash_of_the_two_endpoints():
    # what the SuperPOD cluster has always hashed: fmix64(src * 2**32 + dst)
    src, dst = np.array([0, 3, 1023]), np.array([9, 19, 0])
    plain = hashing.flow_hash(src, dst)
    assert plain.tolist() == [reference_fmix64(int(s) * 2**32 + int(d)) for s, d in zip(src, dst)]
    assert np.array_equal(hashing.flow_hash(src, dst, np.zeros(3, np.int64), 0), plain)
    assert not np.array_equal(hashing.flow_hash(src, dst, np.ones(3, np.int64), 0), plain)
    assert not np.array_equal(hashing.flow_hash(src, dst, None, 1), plain)


def test_digits_are_read_lowest_first_in_their_bases():
    # 1234567 in the bases (10, 10, 1, 100): 7, then 6, then 0 (a base of 1 uses no bits),
    # then 12345 % 100 = 45
    key = np.array([1234567], dtype=np.uint64)
    assert [int(d[0]) for d in hashing.hash_digits(key, [10, 10, 1, 100])] == [7, 6, 0, 45]


def test_digits_past_the_limit_come_from_the_remixed_hash():
    # three digits of base 2**20: the first two use 40 bits (the limit); the third comes
    # from fmix64(key ^ 3 F), its low 20 bits
    key = 0x0123456789ABCDEF
    digits = hashing.hash_digits(np.array([key], dtype=np.uint64), [2**20] * 3)
    assert int(digits[0][0]) == key % 2**20
    assert int(digits[1][0]) == (key >> 20) % 2**20
    remixed = reference_fmix64(key ^ (3 * 0x9E3779B97F4A7C15 & MASK))
    assert int(digits[2][0]) == remixed % 2**20


def test_one_digit_of_many_flows_is_uniform():
    # 18 uplinks (a Meta rack switch), 18,000 flows of one connection: each uplink about
    # 1,000; chi-square with 17 degrees of freedom stays below its 99.9 % point, 40.79
    flows = np.arange(18_000)
    key = hashing.flow_hash(np.zeros(len(flows), np.int64), np.full(len(flows), 5), flows)
    counts = np.bincount(hashing.hash_digits(key, [18])[0], minlength=18)
    chi = float(((counts - 1000) ** 2 / 1000).sum())
    assert counts.sum() == 18_000 and chi < 40.79


def test_negative_flows_and_seeds_hash_as_their_twos_complement():
    a = hashing.flow_hash(np.array([1]), np.array([2]), np.array([-1]), -3)
    assert int(a[0]) == reference_flow_hash(1, 2, -1, -3)


@pytest.mark.parametrize("bases", [[2, 3, 5], [1], [7, 1, 7]])
def test_digits_lie_in_their_bases(bases):
    key = hashing.flow_hash(np.arange(100), np.arange(100, 200))
    for base, digit in zip(bases, hashing.hash_digits(key, bases)):
        assert digit.dtype == np.int64 and digit.min() >= 0 and digit.max() < base
