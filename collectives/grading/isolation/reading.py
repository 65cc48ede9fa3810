"""Reading a learner's function and what it uses: the bundle a graded re-run is made from.

Tasks that ask a learner to *design* or *estimate* (a diameter, a bisection bandwidth, the
time of a collective on a slice) have answers the package computes in one call. To grade the
learner's own reasoning, a hidden test writes ``_grading.call(function, *args, isolated=True)``:
instead of calling the function in the kernel, :mod:`.calls` reads its source code there
(:func:`inspect.getsource`), together with what it uses (:func:`bundle`), and makes the call
later in the *learner's process* (:mod:`.learner_process`), in which ``collectives`` cannot be
imported. This module is the reading; :func:`policy` turns a task's ``allow``/``forbid`` into
the plain rules that process applies.

What a bundle carries: the function's source, the source of every function of the notebook it
calls (recursively), the plain values (numbers, strings, lists, tuples, dicts, sets, numeric
numpy arrays) of the notebook's globals it reads, and, by name, the modules and library
objects it uses (``np``, ``math.comb``), imported afresh in the learner's process. A module or
object of ``collectives`` (``cl``, ``from collectives.measures import diameter``, a Topology)
becomes a stand-in that raises the package's ``ImportError`` when the code touches it, so an
unused mention does no harm. Anything else the function reads (an object of a class of the
learner's own, say) becomes a stand-in that raises ``NameError`` saying what to do. Left out:
functions defined inside other functions, and classes whose source cannot be read (both are
refused with a message). What this stops and what it does not: the docstring of
:mod:`collectives.grading`.
"""

import ast
import dis
import importlib
import inspect
import textwrap
import types

import numpy as np

from ...errors import GradingError
from ..checks import MAX_ITEMS, in_words, type_name
from . import wire
from .origin import check_origin
from .trust import TYPE_DICT, TYPE_QUALNAME, trusted_type

__all__ = ["NO_PACKAGE", "FORBIDDEN", "SCHEDULE_TOOLS", "bundle", "policy"]

#: the start of the message a learner reads when a graded function uses the package
NO_PACKAGE = wire.NO_PACKAGE
#: what the message says of a name of the package a task forbids ("collectives.busbw is
#: forbidden in this task ...")
FORBIDDEN = wire.FORBIDDEN
#: what a task that asks for a schedule usually allows: building one, checking it, the
#: topologies to draw it on (``allow=SCHEDULE_TOOLS``)
SCHEDULE_TOOLS = (
    "collectives.Schedule",
    "collectives.Step",
    "collectives.verify",
    "collectives.simulate",
    "collectives.topology",
    "collectives.ScheduleError",
    "collectives.CollectivesError",
)
_PACKAGE = "collectives"
_ADVICE = wire.ADVICE
_GLOBAL_OPS = {
    "LOAD_GLOBAL",
    "LOAD_NAME",
    "STORE_GLOBAL",
    "DELETE_GLOBAL",
    "LOAD_FROM_DICT_OR_GLOBALS",
}


# ---- reading a function and what it uses -------------------------------------------------


def _is_package_name(name):
    return isinstance(name, str) and (name == _PACKAGE or name.startswith(_PACKAGE + "."))


def _code_objects(code):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _names_read(function, source):
    """Global names the function's code reads or writes (its bytecode, nested code included),
    and the names in its decorators and default values (evaluated where it is defined)."""
    names = []
    top = getattr(function, "__code__", None)
    for code in _code_objects(top) if top is not None else ():
        for instruction in dis.get_instructions(code):
            if instruction.opname in _GLOBAL_OPS and instruction.argval not in names:
                names.append(instruction.argval)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return names
    for node in tree.body[:1]:
        parts = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            parts = list(node.decorator_list)
            if not isinstance(node, ast.ClassDef):
                parts += list(node.args.defaults) + [d for d in node.args.kw_defaults if d]
            else:
                parts += list(node.bases) + [k.value for k in node.keywords]
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.Expr)):
            parts = [node]
        for part in parts:
            for sub in ast.walk(part):
                if isinstance(sub, ast.Name) and sub.id not in names:
                    names.append(sub.id)
    return names


def _plain(value, budget):
    """Whether ``value`` is plain data that :func:`.wire.encode` sends as it is (of trusted
    classes only: :func:`trusted_type`)."""
    budget[0] -= 1
    if budget[0] < 0 or not trusted_type(type(value)):
        return False
    if value is None or isinstance(
        value, (bool, int, float, str, np.bool_, np.integer, np.floating)
    ):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biuf" and value.size <= budget[0]
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_plain(v, budget) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, budget) for k, v in value.items())
    return False


def _importable(value):
    """``(module, qualname)`` under which ``value`` can be imported afresh, or None."""
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if (
        not isinstance(module, str)
        or not isinstance(qualname, str)
        or "<" in qualname
        or module == "__main__"
    ):
        return None
    try:
        target = importlib.import_module(module)
        for part in qualname.split("."):
            target = getattr(target, part)
    except Exception:
        return None
    return (module, qualname) if target is value else None


def _unwrap(value):
    """The function under decorators such as ``functools.lru_cache`` (``__wrapped__``),
    followed only through objects of trusted classes (:func:`trusted_type`): the last of
    them, when the next one is the learner's own object."""
    seen = set()
    while id(value) not in seen and trusted_type(type(value)):
        seen.add(id(value))
        try:
            inner = getattr(value, "__wrapped__", value)
        except Exception:  # an odd library object
            return value
        if inner is value or not trusted_type(type(inner)):
            return value
        value = inner
    return value


def _source_of(obj, label):
    """The source of a function (from its code object: :func:`inspect.getsource` would follow
    a ``__wrapped__`` attribute into whatever it names) or of a class of the notebook."""
    if isinstance(obj, types.FunctionType):
        obj = obj.__code__
    elif "__wrapped__" in TYPE_DICT.__get__(obj):
        raise GradingError(
            f"{label} is a class with a __wrapped__ attribute, which the graded re-run does not "
            "follow: remove it"
        )
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError):
        raise GradingError(
            f"the source code of {label} cannot be read, so it cannot be re-run for grading: "
            "define it with `def` in a notebook cell and run that cell"
        ) from None


def _package_object(name):
    """The object the dotted name ``collectives....`` stands for, or None."""
    parts = name.split(".")
    target = importlib.import_module(_PACKAGE)
    for i, part in enumerate(parts[1:], start=2):
        try:
            target = getattr(target, part)
        except AttributeError:
            try:
                target = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                return None
    return target


def _names(value, what):
    if isinstance(value, str) or not isinstance(value, (list, tuple, set, frozenset)):
        raise GradingError(
            f"{what} must be a tuple of dotted names inside collectives such as "
            f"('collectives.Schedule', 'collectives.verify'), got {value!r} (a "
            "bug in the test, not in your answer)"
        )
    names = []
    for name in value:
        if not _is_package_name(name) or not all(p.isidentifier() for p in name.split(".")):
            raise GradingError(
                f"{what}: {name!r} is not a dotted name inside collectives such "
                "as 'collectives.topology.ring' (a bug in the test, not in your "
                "answer)"
            )
        if _package_object(name) is None:
            raise GradingError(
                f"{what}: collectives has no {name!r} (a bug in the test, not in your answer)"
            )
        names.append(name)
    return tuple(sorted(set(names)))


def policy(allow=None, forbid=None):
    """What a graded function may use of the package, as plain data: None when it may use
    nothing (the whole package refused), else ``{"allow": names or None, "forbid": names}``.

    ``allow``: dotted names (``"collectives.Schedule"``, ``"collectives.topology"``) the
    function may use, a module with everything in it; every other name of the package is
    refused. ``forbid``: names refused even so (with ``allow=None``: the only ones refused).
    Raises :class:`~collectives.GradingError` for a name the package does not have."""
    if allow is None and forbid is None:
        return None
    return {
        "allow": None if allow is None else list(_names(allow, "allow")),
        "forbid": list(_names(forbid or (), "forbid")),
    }


def _refused(name, message, package):
    return {"kind": "refused", "name": name, "package": package, "message": message}


def bundle(function, name=None, policy=None):
    """The plain data the learner's process needs to re-run ``function``: its source, the
    sources of the notebook's functions it calls, and what else it reads (module docstring).

    Raises :class:`~collectives.GradingError` if ``function`` is not a function defined with
    ``def`` (or a lambda) whose source code can be read, if it is defined inside another
    function, or if it (or anything it wraps) comes from the package or a copy of it, or was
    not written in the notebook (:func:`.origin.check_origin`).
    """
    if not trusted_type(type(function)):
        raise GradingError(
            f"{name or 'your function'} is an object of a class of your own, not a function; "
            f"define it with `def {name or 'your_function'}(...):`"
        )
    label = name or getattr(function, "__name__", None) or "your function"
    if not callable(function):
        raise GradingError(
            f"{label} is {in_words(function)}, not a function; define it with `def {label}(...):`"
        )
    check_origin(function, label)
    target = _unwrap(function)
    if not isinstance(target, types.FunctionType):
        raise GradingError(
            f"{label} is {in_words(function)}, not a function written in the "
            f"notebook; define it with `def {label}(...):`"
        )
    namespace = target.__globals__
    binding = label if namespace.get(label) is function else None
    if binding is None:
        binding = next((k for k, v in namespace.items() if v is function), target.__name__)
    seen_values = {}
    sources = {}  # id(function) -> its entry
    queue = [(target, binding)]
    while queue:
        current, alias = queue.pop(0)
        if id(current) in sources:
            if alias not in sources[id(current)]["names"]:
                sources[id(current)]["names"].append(alias)
            continue
        if getattr(current, "__closure__", None):
            raise GradingError(
                f"{alias} is defined inside another function; the graded re-run needs it at the "
                "top level of a cell (`def` at the start of a line)"
            )
        source = _source_of(current, alias)
        entry = {
            "kind": "source",
            "names": [alias],
            "def_name": current.__name__,
            "source": source,
            "filename": f"<your {alias}>",
        }
        sources[id(current)] = entry
        reads = _names_read(current, source)
        if isinstance(current, type):
            for member in vars(current).values():
                if isinstance(member, types.FunctionType):
                    reads += [n for n in _names_read(member, "") if n not in reads]
        for read in reads:
            if read not in namespace:
                continue  # a builtin, or undefined (a NameError there, as here)
            value = namespace[read]
            if not trusted_type(type(value)):
                seen_values[read] = _refused(
                    read,
                    f"{read} ({TYPE_QUALNAME.__get__(type(value))}) cannot be sent to the "
                    "graded re-run of your function: compute it inside the function, or make "
                    "it plain numbers, strings, lists, tuples or dicts",
                    False,
                )
                continue
            inner = _unwrap(value)
            if inner is current:  # recursion, perhaps under another name
                if read not in entry["names"]:
                    entry["names"].append(read)
                continue
            if isinstance(inner, types.FunctionType) and inner.__globals__ is namespace:
                queue.append((inner, read))  # a function of the notebook
                continue
            if isinstance(value, type) and value.__module__ == target.__module__:
                try:
                    inspect.getsource(value)
                except (OSError, TypeError):
                    seen_values[read] = _refused(
                        read,
                        f"{read} is a class defined in the notebook, which the graded "
                        "re-run cannot rebuild; define what your function needs inside it",
                        False,
                    )
                else:
                    queue.append((value, read))
                continue
            if read not in seen_values:
                seen_values[read] = _entry_for(read, value, policy)
    entries = list(seen_values.values()) + list(sources.values())[::-1]
    return {"target": binding, "entries": entries}


def _entry_for(name, value, policy=None):
    """How the learner's process gets the global ``name`` (module docstring)."""
    if policy is not None:
        found = _package_entry(name, value)
        if found is not None:
            return found
    if isinstance(value, types.ModuleType):
        module = value.__name__
        if _is_package_name(module):
            what = "the collectives package" if module == _PACKAGE else f"the module {module}"
            return _refused(
                name, f"{NO_PACKAGE} (your code uses {name}, which is {what}){_ADVICE}", True
            )
        return {"kind": "module", "name": name, "module": module}
    origin = getattr(value, "__module__", None)
    if (
        (inspect.isclass(value) or inspect.isroutine(value))
        and isinstance(origin, str)
        and _is_package_name(origin)
    ):
        what = getattr(value, "__qualname__", None) or getattr(value, "__name__", "?")
        return _refused(
            name, f"{NO_PACKAGE} (your code uses {name}, which is {origin}.{what}){_ADVICE}", True
        )
    origin = type(value).__module__
    if _is_package_name(origin):
        return _refused(
            name,
            f"{NO_PACKAGE} (your code uses {name}, a {type(value).__name__} "
            f"from {origin}){_ADVICE}",
            True,
        )
    if _plain(value, [MAX_ITEMS]):
        return {"kind": "value", "name": name, "value": wire.encode(value)}
    found = _importable(value)
    if found is not None:
        return {"kind": "object", "name": name, "module": found[0], "qualname": found[1]}
    return _refused(
        name,
        f"{name} ({type_name(value)}) cannot be sent to the graded re-run of "
        "your function: compute it inside the function, or make it plain numbers, "
        "strings, lists, tuples or dicts",
        False,
    )


def _package_entry(name, value):
    """A module, class or function of the package, by name, for a task that allows part of
    the package (the learner's process decides whether this one is allowed); else None."""
    if isinstance(value, types.ModuleType) and _is_package_name(value.__name__):
        return {"kind": "package", "name": name, "module": value.__name__, "qualname": ""}
    origin = getattr(value, "__module__", None)
    if (inspect.isclass(value) or inspect.isroutine(value)) and _is_package_name(origin):
        found = _importable(value)
        if found is not None:
            return {"kind": "package", "name": name, "module": found[0], "qualname": found[1]}
    return None
