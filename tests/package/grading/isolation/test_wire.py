"""collectives.grading.isolation.wire: the one codec between the grading processes, and the
kernel's side of it (collectives.grading.isolation.calls.encode/decode).
"""

import ast
import json
import subprocess
import sys
from decimal import Decimal

import numpy as np
import pytest

import collectives as cl
from collectives import GradingError
from collectives.grading import check_number, checks
from collectives.grading.isolation import calls, learner_process, wire
from collectives.grading.isolation.calls import decode, encode

from ..helpers import Lying, message


def test_answers_travel_as_plain_data():
    schedule = cl.algorithms.ring_all_reduce(3)
    value = [
        1,
        np.int64(2),
        2.5,
        np.float32(0.5),
        None,
        True,
        "s",
        (1, (2, 3)),
        {4, 5},
        np.arange(6, dtype=np.int16).reshape(2, 3),
        {"k": [1]},
        Lying(3.0),
        schedule,
        object(),
    ]
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


def test_the_json_is_plain_and_tagged():
    # by hand: what each kind of value becomes on the wire
    assert wire.encode([1, (2, 3.5), {"a": None}, np.arange(2, dtype=np.uint8)]) == [
        1,
        {"__tuple__": [2, 3.5]},
        {"__dict__": {"a": None}},
        {"__ndarray__": [0, 1], "dtype": "|u1"},
    ]
    assert wire.encode({7}) == {"__set__": [7]}
    assert wire.encode(Decimal("0.5")) == 0.5
    assert wire.encode(1j) == {"__opaque__": "complex", "repr": "1j"}
    assert wire.encode(np.complex64(1)) == {
        "__opaque__": "numpy.complex64",
        "repr": repr(np.complex64(1)),
    }
    json.dumps(wire.encode([np.int64(3), np.bool_(True), np.float16(0.5)]))


def test_the_learner_side_and_the_kernel_side_speak_the_same_wire():
    """What the learner's process encodes (its own encode, with the wire loaded by path), the
    kernel decodes; what the kernel encodes for a call's arguments, the learner decodes."""
    value = [np.int32(4), (1, [2, {"x": 3.0}]), frozenset({(1, 2)}), np.eye(2), object()]
    back = decode(json.loads(json.dumps(learner_process.encode(value))))
    assert back[0] == 4 and type(back[0]) is int
    assert back[1] == (1, [2, {"x": 3.0}]) and back[2] == frozenset({(1, 2)})
    assert back[3].tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert isinstance(back[4], checks.Opaque) and back[4].type_name == "object"
    args = learner_process.decode(json.loads(json.dumps(encode([(3, 4), {"n": [1, 2]}]))))
    assert args == [(3, 4), {"n": [1, 2]}]


def test_an_opaque_value_keeps_its_type_on_its_way_on():
    # a learner's value with no plain form comes back as Opaque; sent on to the re-check it
    # must still be named as the learner's type, not as "Opaque"
    opaque = decode(wire.encode(object()))
    again = decode(encode([opaque]))[0]
    assert (again.type_name, again.text) == ("object", opaque.text)
    assert message(check_number, again, "x").startswith("x is an object (<object object at")


def test_the_kernel_sends_schedules_and_failures_the_learner_cannot_decode():
    failure = calls.IsolatedFailure("f(1) raised ValueError: no")
    back = decode(encode([failure]))[0]
    assert isinstance(back, calls.IsolatedFailure) and back.message == failure.message
    with pytest.raises(ValueError, match="cannot decode"):
        wire.decode(encode(cl.algorithms.ring_all_gather(2)))


def test_too_much(monkeypatch):
    assert wire.MAX_ITEMS == checks.MAX_ITEMS  # the kernel's budget is the wire's
    with pytest.raises(ValueError, match=wire.TOO_LARGE):
        wire.encode([0] * 5, budget=[3])
    monkeypatch.setattr(wire, "MAX_ITEMS", 10)
    encode(np.zeros(8, dtype=np.uint8))  # the array, its list and 8 values: 10 items
    with pytest.raises(GradingError, match=wire.TOO_LARGE):
        encode(np.zeros(9, dtype=np.uint8))


def test_too_deep():
    deep = 1
    for _ in range(wire.MAX_DEPTH + 2):
        deep = [deep]
    inner = wire.encode(deep)
    for _ in range(wire.MAX_DEPTH + 1):
        inner = inner[0]
    assert inner == {"__opaque__": "list", "repr": "a structure nested too deeply"}


def test_the_reply_is_the_last_marked_line_with_the_nonce():
    line = wire.reply_line("mark ", "n1", [{"ok": True}])
    assert line.endswith("\n") and line.startswith("mark {")
    forged = wire.reply_line("mark ", "n0", [{"ok": True}])
    assert wire.read_reply("printed\n" + line, "mark ", "n1") == [{"ok": True}]
    assert wire.read_reply(line + forged, "mark ", "n1") is None  # the last one decides
    assert wire.read_reply(line + "mark {not json\n", "mark ", "n1") is None
    assert wire.read_reply("nothing\n", "mark ", "n1") is None
    assert wire.read_reply('mark {"nonce": "n1", "results": 3}\n', "mark ", "n1") is None


def test_the_wire_is_standalone():
    """It imports only the standard library, and runs, loaded by its path, in a process where
    the package cannot be imported (as the learner's process loads it)."""
    for node in ast.walk(ast.parse(open(wire.__file__).read())):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and not (node.module or "").startswith("collectives")
        elif isinstance(node, ast.Import):
            assert not any(a.name.startswith("collectives") for a in node.names)
    code = (
        "import importlib.util, sys\n"
        "class Refuse:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('collectives', 'numpy'):\n"
        "            raise ImportError(name)\n"
        "sys.meta_path.insert(0, Refuse())\n"
        "spec = importlib.util.spec_from_file_location('w', sys.argv[1])\n"
        "w = importlib.util.module_from_spec(spec); spec.loader.exec_module(w)\n"
        "print(w.decode(w.encode([(1, 2), {'a': {3}}])))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-I", "-c", code, wire.__file__],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == "[(1, 2), {'a': frozenset({3})}]"
