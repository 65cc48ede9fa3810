"""The README's Python examples run as written (so the front door never shows stale API)."""

import re
from pathlib import Path

import numpy as np

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_blocks_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)
    assert len(blocks) >= 2
    namespace = {"inputs": np.ones((8, 8))}  # the README's placeholder for inputs
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    assert namespace["tp_ar"].n_groups == 4 and namespace["dp_rs"].group_size == 4
