"""Which objects the grader may touch without running code the learner wrote.

While a test cell grades, the grader reads the learner's function and the globals it uses
(:mod:`.reading`, :mod:`.origin`); if reading one of them ran the learner's own code (a dict
subclass's ``items``, an object's ``__getattr__`` or ``__class__`` property), that code would
run after the cell's key to the cohort's cases is set (:mod:`collectives.grading.cohort`), and
could compute the drawn cases' answers with the package. So both look at an object only when
:func:`trusted_type` says its class is one the learner did not write, and otherwise treat it
as the learner's, untouched (refused where it would have to be sent). Decided from the class's
own dictionary and flags, read with ``type``'s descriptors, never its (or its metaclass's)
attributes. Left out: libraries' own classes whose methods call back into code a learner
handed them (a library container of the learner's objects is looked into element by element,
each element judged by its own class). Standard library only, like :mod:`.wire`.
"""

import os
import sys
import sysconfig
import types
from pathlib import Path

__all__ = ["trusted_type", "TYPE_DICT", "TYPE_QUALNAME"]

_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made at run time (every class a notebook makes)
TYPE_DICT = type.__dict__["__dict__"]  # the descriptors read on a class without its metaclass
TYPE_FLAGS = type.__dict__["__flags__"]
TYPE_QUALNAME = type.__dict__["__qualname__"]
_TRUSTED_ROOTS: list[str] = []


def _trusted_roots():
    """The folders whose modules the learner cannot have written: the interpreter's and the
    environment's (read-only in the grading sandbox) and this package's own."""
    if not _TRUSTED_ROOTS:
        found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
        found.update(sysconfig.get_paths().values())
        found.add(str(Path(__file__).resolve().parents[2]))  # collectives/
        _TRUSTED_ROOTS.extend(sorted({os.path.realpath(f) for f in found if f}))
    return _TRUSTED_ROOTS


def trusted_type(cls):
    """Whether the grader may touch an object of class ``cls`` (call ``isinstance`` on it, read
    its attributes, iterate it) without running code the learner wrote: a built-in class, or
    one that a module outside the learner's reach (the standard library, the environment's
    libraries, this package) defines under its name. Decided without running any of ``cls``'s
    own code (nor its metaclass's): a class of the notebook's, or one whose ``__module__``
    names a library it is not in, is not trusted. (Reading a learner's dict subclass, or an
    object with ``__getattr__``, ran the learner's code while a test cell graded, when it could
    read that cell's key to the cohort's cases: the review of 2026-12-03.)"""
    if not TYPE_FLAGS.__get__(cls) & _HEAPTYPE:
        return True  # a static built-in type: a notebook cannot make one
    module_name = TYPE_DICT.__get__(cls).get("__module__")
    module = sys.modules.get(module_name) if type(module_name) is str else None
    if type(module) is not types.ModuleType:
        return False
    found = module
    for part in TYPE_QUALNAME.__get__(cls).split("."):
        space = vars(found) if type(found) is types.ModuleType else None
        if space is None and issubclass(type(found), type):
            space = TYPE_DICT.__get__(found)
        found = space.get(part) if space is not None else None
    if found is not cls:
        return False
    path = vars(module).get("__file__")
    if type(path) is not str:
        return False  # a module made at run time (types.ModuleType) has no file
    path = os.path.realpath(path)
    return any(path.startswith(root + os.sep) for root in _trusted_roots())
