import pathlib
import sys

# tests import their shared first-principles helpers (ground_truth.py) by module name
sys.path.insert(0, str(pathlib.Path(__file__).parent))
