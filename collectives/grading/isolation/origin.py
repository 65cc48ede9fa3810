"""Where a learner's graded function comes from: written in the notebook, or taken elsewhere.

A task's answer is graded by re-running the learner's function from its source code
(:mod:`.reading`). That decides on what the source *uses*; it says nothing of where the
function *comes from*. A name bound to the package's own function (``qps_for_efficiency =
cl.fabric.qps_for_efficiency``: no ``def``, no call) hands the grader the package's source,
and the package's source of a self-contained function imports nothing: it would pass. So
before a function is read, :func:`check_origin` decides on its origin:

- every layer of what the name is bound to is looked at: a ``functools.partial`` (its
  ``func``), the functions under ``functools.wraps`` and other decorators (``__wrapped__``), a
  bound method (``__func__``), a class's ``staticmethod`` or ``classmethod`` (the function it
  holds), a callable object (its class's ``__call__``);
- a layer is *foreign* when it is not a Python function (a builtin, a C function), when its
  module (``__module__``) is ``collectives`` or one of its modules, when its code
  (``__code__.co_filename``) lies in the package's folder or in a copy of it (the grading
  copy, or any file whose bytes are those of a file of the package), and, in a notebook's
  kernel (IPython), when its code was not compiled from one of the notebook's cells (the cell
  files IPython's compiler records) or its globals are not the notebook's namespace.

A foreign layer is refused with :class:`~collectives.GradingError`, a message that names what
the function is and says to write it with ``def`` in the notebook; the task scores 0.

Left out: the package's source text copied into a notebook cell (it is then the learner's
code, compiled from a cell), and code written to get round the check in the kernel (adding a
file to IPython's record of cells, rebinding ``__module__`` and building a function from a cell
around the package's code object): the sandbox bounds what such code reaches, and the
instructor reads the tamper report.
"""

import functools
import hashlib
import inspect
import os
import sys
import types

from ...errors import GradingError
from .snapshot import PACKAGE_DIR, sources
from .trust import trusted_type

__all__ = ["NOT_YOURS", "check_origin", "layers", "notebook_cells", "foreign_reason"]

#: what every refusal of a function that was not written in the notebook says
NOT_YOURS = "is not a function written in the notebook"
_PACKAGE = "collectives"
_MAX_LAYERS = 32
_HASHES: dict[str, set[str]] = {}  # package directory -> the set of sha256 of its source files


def _is_package_name(name):
    return isinstance(name, str) and (name == _PACKAGE or name.startswith(_PACKAGE + "."))


def layers(value):
    """What ``value`` is made of, outermost first: the object itself, then each function it
    wraps (``functools.partial``, ``__wrapped__``, bound methods, static and class methods,
    a callable object's ``__call__``), at most a few dozen deep."""
    found, queue, seen = [], [value], set()
    while queue and len(found) < _MAX_LAYERS:
        current = queue.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        found.append(current)
        if not trusted_type(type(current)):
            continue  # the learner's own object: not looked into (.trust)
        inner = []
        if isinstance(current, functools.partial):
            inner.append(current.func)
        if isinstance(current, (staticmethod, classmethod)):
            inner.append(current.__func__)
        if isinstance(current, types.MethodType):
            inner.append(current.__func__)
        try:
            wrapped = inspect.getattr_static(current, "__wrapped__", None)
        except Exception:  # a learner's object with an odd __getattr__
            wrapped = None
        if wrapped is not None and (
            not trusted_type(type(wrapped)) or not isinstance(wrapped, property)
        ):
            inner.append(wrapped)
        if not isinstance(
            current,
            (
                types.FunctionType,
                type,
                types.BuiltinFunctionType,
                types.MethodType,
                functools.partial,
            ),
        ) and callable(current):
            call = inspect.getattr_static(type(current), "__call__", None)
            if isinstance(call, types.FunctionType):
                inner.append(call)
        queue.extend(inner)
    return found


def notebook_cells():
    """``(cell files, namespace)`` of the notebook this code runs in: the file names IPython's
    compiler gave the cells it ran, and the notebook's global namespace; None outside IPython."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None) if ipython is not None else None
    shell = get() if callable(get) else None
    if shell is None:
        return None
    names = getattr(getattr(shell, "compile", None), "_filename_map", None)
    namespace = getattr(shell, "user_ns", None)
    if not isinstance(names, dict) or not isinstance(namespace, dict):
        return None
    return set(names), namespace


def _package_hashes(package_dir=PACKAGE_DIR):
    if package_dir not in _HASHES:
        _HASHES[package_dir] = set(sources(package_dir).values())
    return _HASHES[package_dir]


def _inside(path, folder):
    try:
        return os.path.commonpath(
            [os.path.realpath(path), os.path.realpath(folder)]
        ) == os.path.realpath(folder)
    except ValueError:
        return False


def _copy_of_package(filename):
    """Whether ``filename`` is a file of the package or of a copy of it."""
    if not filename or filename.startswith("<") or not os.path.isfile(filename):
        return False
    if _inside(filename, PACKAGE_DIR):
        return True
    parts = os.path.realpath(filename).split(os.sep)
    if "collectives-package-" in os.path.realpath(filename) and _PACKAGE in parts:
        return True  # a grading copy
    try:
        with open(filename, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return False
    return digest in _package_hashes()


def _describe(value):
    module = getattr(value, "__module__", None)
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if isinstance(value, functools.partial):
        return "a functools.partial"
    if isinstance(module, str) and isinstance(name, str):
        return f"{module}.{name}"
    return f"a {type(value).__name__}"


def foreign_reason(value, cells=None):
    """Why ``value`` (one layer, :func:`layers`) is not the learner's own code, or None.
    ``cells``: what :func:`notebook_cells` returned (None outside a notebook)."""
    if not trusted_type(type(value)):
        return None  # an object of a class of the learner's: theirs, and not looked into
    if isinstance(value, (functools.partial, staticmethod, classmethod, types.MethodType)):
        return None  # judged by what it holds
    if isinstance(value, type):
        module = getattr(value, "__module__", None)
        return (
            f"is {_describe(value)}, a class of the collectives package"
            if _is_package_name(module)
            else None
        )
    if not isinstance(value, types.FunctionType):
        try:
            wraps = inspect.getattr_static(value, "__wrapped__", None) is not None
        except Exception:  # a learner's object with an odd __getattr__
            wraps = False
        call = inspect.getattr_static(type(value), "__call__", None)
        if wraps or isinstance(call, types.FunctionType):
            return None  # a decorator's wrapper, or a callable object:
        #                                      judged by what it wraps, or by its __call__
        return f"is {_describe(value)}, which is not Python code of yours"
    module = getattr(value, "__module__", None)
    if _is_package_name(module):
        return f"is {_describe(value)}, a function of the collectives package"
    code = value.__code__
    if _copy_of_package(code.co_filename):
        return (
            f"is {_describe(value)}, whose code comes from the collectives package "
            f"({os.path.basename(code.co_filename)})"
        )
    if cells is not None:
        files, namespace = cells
        if code.co_filename not in files:
            return f"is {_describe(value)}, whose code was not written in a cell of this notebook"
        if value.__globals__ is not namespace:
            return f"is {_describe(value)}, which was not defined in this notebook"
    return None


def check_origin(function, label):
    """Raise :class:`~collectives.GradingError` unless ``function`` (the learner's answer
    ``label``) is the learner's own code, every layer of it (module docstring)."""
    cells = notebook_cells()
    if cells is not None and label == "your function":  # a partial has no __name__
        label = next(
            (k for k, v in cells[1].items() if v is function and not k.startswith("_")), label
        )
    for layer in layers(function):
        reason = foreign_reason(layer, cells)
        if reason is not None:
            raise GradingError(
                f"{label} {NOT_YOURS}: it {reason}. Define {label} with `def {label}(...):` "
                "in its cell and write its code yourself (binding the name to the package's "
                "function, an alias, a partial, a wrapper or a class attribute of it scores 0)"
            )
