"""collectives.hardware.nvswitch: the NVSwitch chips of a DGX H100 node, as The Scaling Book
gives them (4 chips, 5 + 4 + 4 + 5 of each GPU's 18 NVLink 4 links)."""

import pytest

import collectives as cl
from collectives.hardware import nvswitch, systems


def test_a_dgx_h100_gpu_splits_its_18_links_5_4_4_5():
    assert nvswitch.links("dgx-h100") == (5, 4, 4, 5)
    assert sum(nvswitch.links("dgx-h100")) == systems.NVLINKS_PER_GPU == 18
    # by record and by the topology built from it; a SuperPOD is made of the same nodes
    assert nvswitch.links(cl.hardware.spec("dgx-h100")) == (5, 4, 4, 5)
    assert nvswitch.links(cl.hardware.preset("dgx-h100", nodes=2)) == (5, 4, 4, 5)
    assert nvswitch.links(cl.hardware.preset("superpod-h100", units=1)) == (5, 4, 4, 5)
    assert "scaling-book/gpus" in nvswitch.SOURCE


def test_systems_without_a_recorded_split_are_refused():
    with pytest.raises(cl.TopologyError, match="no NVSwitch chips recorded for 'dgx-b200'"):
        nvswitch.links("dgx-b200")
    with pytest.raises(cl.TopologyError, match="no NVSwitch chips recorded"):
        nvswitch.links(cl.topology.switch(8, 1.0))  # built from no hardware record
