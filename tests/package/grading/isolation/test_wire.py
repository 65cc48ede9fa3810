"""collectives.grading.isolation.wire: the one codec between the grading processes, and the
kernel's side of it (collectives.grading.isolation.calls.encode/decode).
"""


import numpy as np

import collectives as cl
import collectives.analytic
import collectives.grading
from collectives.grading import check_number
from collectives.grading.isolation.calls import decode, encode

from ..helpers import Lying, message


def test_answers_travel_as_plain_data():
    schedule = cl.algorithms.ring_all_reduce(3)
    value = [1, np.int64(2), 2.5, np.float32(0.5), None, True, "s", (1, (2, 3)), {4, 5},
             np.arange(6, dtype=np.int16).reshape(2, 3), {"k": [1]}, Lying(3.0), schedule,
             object()]
    back = decode(encode(value))
    assert back[:7] == [1, 2, 2.5, 0.5, None, True, "s"]
    assert type(back[1]) is int and type(back[3]) is float
    assert back[7] == (1, (2, 3)) and back[8] == frozenset({4, 5})
    assert back[9].dtype == np.int16 and back[9].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert back[10] == {"k": [1]}
    assert type(back[11]) is float and back[11] == 3.0
    assert back[12].to_lists() == schedule.to_lists() and back[12].collective == "all_reduce"
    assert repr(back[13]).startswith("<object object at")
    assert "an object" in message(check_number, back[13], "x")
