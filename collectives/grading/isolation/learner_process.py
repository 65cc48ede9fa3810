"""The program of the learner's process: a learner's functions re-run from their source code,
with the ``collectives`` package made unimportable.

:mod:`.calls` starts ``python -I`` on this file in the read-only package copy
(:mod:`.snapshot`; by its path: it is a program, never imported by the grading code) and
writes one JSON request on its stdin: the learner's functions as source text, the plain
values, modules and library objects they use (:func:`.reading.bundle`), and the calls to
make. This program

1. removes every ``collectives`` module from ``sys.modules`` (there are none: nothing here
   imports the package) and every ``sys.path`` entry from which it could be imported other
   than the interpreter's library directories (a wheel puts the package in site-packages,
   beside numpy, which the learner may use), and
   puts :class:`RefuseCollectives` first on ``sys.meta_path``, so that ``import collectives``
   (and any ``collectives.*``) raises ``ImportError`` with :data:`NO_PACKAGE` in its message;
   or, for a task that allows part of the package, imports it from the copy and guards every
   way into it (:func:`guard_package`);
2. executes each function's source in a fresh namespace holding what it uses (a module or
   object of the package is bound to a stand-in that raises the same ``ImportError`` when the
   code touches it);
3. makes the calls and writes their results, as the plain data of :mod:`.wire` (or the error
   each call raised), on one stdout line tagged with the request's nonce. What the learner's
   code prints goes to stderr.

Only the standard library is used, and the wire codec ``wire.py``, loaded by its path as a
module of its own (numpy only to decode an array argument, and to encode the numpy values a
learner's code returns, when that code imported numpy itself). The checks never run in this
process: the learner's code could have tampered with anything in it. The ranks of the task on
real processes (:mod:`collectives.grading.tasks.real_processes`) use :func:`make_unimportable`
and :func:`namespace` of this file the same way. What this stops and what it does not is in
the docstring of :mod:`collectives.grading`.
"""

import builtins
import importlib
import importlib.util
import json
import os
import sys
import traceback

__all__ = [
    "NO_PACKAGE",
    "FORBIDDEN",
    "RESULT_MARK",
    "RefuseCollectives",
    "Refused",
    "Policy",
    "Guarded",
    "make_unimportable",
    "guard_package",
    "encode",
    "decode",
    "namespace",
    "run",
    "main",
    "wire",
]


def _load_wire():
    """The wire codec (``wire.py`` beside this file), loaded by its path as a module of its
    own: this program imports nothing of the package."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "wire.py")
    spec = importlib.util.spec_from_file_location("collectives_grading_wire", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: the wire codec, shared with the kernel and the re-check process
wire = _load_wire()
#: the start of every message that refuses the package
NO_PACKAGE = wire.NO_PACKAGE
#: what the message says of a name a task forbids
FORBIDDEN = wire.FORBIDDEN
_ADVICE = wire.ADVICE
#: the mark of this program's reply line on stdout
RESULT_MARK = wire.LEARNER_MARK
_PACKAGE = "collectives"
_import_module = importlib.import_module  # the real one, kept before guard_package patches it


def _is_package(name):
    return name == _PACKAGE or name.startswith(_PACKAGE + ".")


class RefuseCollectives:
    """A ``sys.meta_path`` finder that refuses ``collectives`` and its submodules."""

    def find_spec(self, name, path=None, target=None):
        if _is_package(name):
            raise ImportError(f"{NO_PACKAGE} (your code imports {name!r}){_ADVICE}", name=name)
        return None

    def invalidate_caches(self):
        pass


class Refused:
    """Stands in for a name the learner's code uses but cannot have here: touching it (an
    attribute, a call, an item, iteration) raises the stored error."""

    def __init__(self, error, message):
        object.__setattr__(self, "_error", error)
        object.__setattr__(self, "_message", message)

    def _raise(self, *args, **kwargs):
        raise object.__getattribute__(self, "_error")(object.__getattribute__(self, "_message"))

    def __getattr__(self, name):
        self._raise()

    __call__ = __getitem__ = __iter__ = __len__ = __bool__ = _raise
    __add__ = __radd__ = __mul__ = __rmul__ = __sub__ = __rsub__ = _raise
    __truediv__ = __rtruediv__ = __floordiv__ = __rfloordiv__ = __index__ = __float__ = _raise

    def __repr__(self):
        return "<not available in the graded re-run>"


class _Touched(Exception):
    """A :class:`Refused` stand-in found in an answer: its error, raised when it is read."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def _site_directories():
    """The interpreter's own library directories (site-packages and the user site): where a
    wheel installs the package beside numpy and everything else the learner may use."""
    import site

    found = set(site.getsitepackages() if hasattr(site, "getsitepackages") else ())
    user = getattr(site, "getusersitepackages", lambda: None)()
    if isinstance(user, str):
        found.add(user)
    return {os.path.realpath(d) for d in found}


def make_unimportable():
    """Step 1 of the module docstring.

    The package is blocked, not the environment: a ``sys.path`` entry that holds the package is
    dropped only when it is not one of the interpreter's library directories (the repository
    root of an editable install, a copy of the package), since site-packages also holds numpy
    and every other library a learner may import. The finder refuses the package wherever it
    is installed."""
    for name in [m for m in sys.modules if _is_package(m)]:
        del sys.modules[name]
    libraries = _site_directories()
    kept = []
    for entry in sys.path:
        base = entry or os.getcwd()
        holds_package = os.path.isdir(os.path.join(base, _PACKAGE)) or os.path.isfile(
            os.path.join(base, _PACKAGE + ".py")
        )
        if holds_package and os.path.realpath(base) not in libraries:
            continue
        kept.append(entry)
    sys.path[:] = kept
    sys.meta_path.insert(0, RefuseCollectives())
    importlib.invalidate_caches()


# ---- part of the package allowed ----------------------------------------------------------


def _under(name, prefixes):
    return any(name == p or name.startswith(p + ".") for p in prefixes)


class Policy:
    """What a task allows of the package (``{"allow": names or None, "forbid": names}``),
    decided on the real objects: an object is allowed if it is one the task names, or lives
    in a module it names; a module that leads to an allowed name is handed out guarded."""

    def __init__(self, rules, package):
        self.allow = None if rules["allow"] is None else tuple(rules["allow"])
        self.forbid = tuple(rules["forbid"])
        self._objects = {}
        for name in (self.allow or ()) + self.forbid:
            self._objects[name] = self._resolve(name)
        self.allowed_ids = {
            id(self._objects[n])
            for n in (self.allow or ())
            if not isinstance(self._objects[n], type(sys))
        }
        self.forbidden_ids = {
            id(self._objects[n]) for n in self.forbid if not isinstance(self._objects[n], type(sys))
        }
        self.allowed_modules = self._module_names(self.allow or ())
        self.forbidden_modules = self._module_names(self.forbid)

    @staticmethod
    def _resolve(name):
        parts = name.split(".")
        target = importlib.import_module(parts[0])
        for i, part in enumerate(parts[1:], start=2):
            try:
                target = getattr(target, part)
            except AttributeError:
                target = importlib.import_module(".".join(parts[:i]))
        return target

    def _module_names(self, names):
        found = set()
        for name in names:
            target = self._objects[name]
            if isinstance(target, type(sys)):
                found |= {name, target.__name__}
        return tuple(found)

    def message(self, name, used=None):
        """The refusal of ``name`` (the learner's ``used`` expression, if it differs)."""
        how = f" (your code uses {used})" if used and used != name else ""
        if self.allow is None:
            what = (
                f"the task forbids {', '.join(self.forbid)}; use them in scratch cells to "
                "check your answers"
            )
        else:
            what = (
                f"here you may use only {', '.join(self.allow) or 'none of the package'}; "
                "use the rest in scratch cells to check your answers"
            )
        return f"{name} {FORBIDDEN}{how}: write that part yourself ({what})"

    def verdict(self, path, value):
        """``"real"``, ``"guard"`` (a module to hand out guarded) or ``"refuse"``."""
        if isinstance(value, type(sys)):
            module = value.__name__
            if _under(module, self.forbidden_modules) or _under(path, self.forbidden_modules):
                return "refuse"
            if self.allow is None:
                return "guard" if self.forbid else "real"
            if _under(module, self.allowed_modules) or _under(path, self.allowed_modules):
                below = [
                    f for f in self.forbid if f.startswith(path + ".") or f.startswith(module + ".")
                ]
                return "guard" if below else "real"
            leads = any(a.startswith(path + ".") or a.startswith(module + ".") for a in self.allow)
            return "guard" if leads else "refuse"
        if id(value) in self.forbidden_ids or _under(path, self.forbid):
            return "refuse"
        origin = getattr(value, "__module__", None)
        defined = isinstance(origin, str) and (isinstance(value, type) or callable(value))
        if defined and _under(origin, self.forbidden_modules):
            return "refuse"
        if self.allow is None or id(value) in self.allowed_ids:
            return "real"
        if _under(path, self.allowed_modules) or (defined and _under(origin, self.allowed_modules)):
            return "real"
        return "refuse"


_HARMLESS = ("__name__", "__doc__", "__package__", "__file__", "__path__")
_REAL: dict[int, tuple] = {}  # id(Guarded) -> (the real module, its path, the policy)


class Guarded:
    """A module of the package as a task that allows part of it shows it: reading an
    attribute hands out the real object if the task allows it, a guarded module on the way
    to one, and raises ``ImportError`` naming the forbidden name otherwise."""

    def __init__(self, module, path, rules):
        _REAL[id(self)] = (module, path, rules)

    def __getattribute__(self, attr):
        if attr == "__class__":
            return Guarded
        module, path, rules = _REAL[id(self)]
        value = getattr(module, attr)
        if attr in _HARMLESS:
            return value
        return _hand_out(f"{path}.{attr}", value, rules)

    def __setattr__(self, attr, value):
        module, path, rules = _REAL[id(self)]
        raise ImportError(rules.message(f"{path}.{attr}"))

    def __repr__(self):
        return f"<module {_REAL[id(self)][1]!r}, part of it allowed in this task>"

    def __dir__(self):
        return dir(_REAL[id(self)][0])


def _hand_out(path, value, rules, used=None):
    verdict = rules.verdict(path, value)
    if verdict == "real":
        return value
    if verdict == "guard":
        return Guarded(value, path, rules)
    raise ImportError(rules.message(path, used))


def guard_package(package_dir, rules):
    """Import the package from ``package_dir`` (the grading copy) and let the learner's code
    reach only what ``rules`` allows, through ``import`` statements, ``importlib`` and the
    names of the notebook (step 1 of the module docstring, for a task that allows part of the
    package). Returns the :class:`Policy`."""
    sys.path.insert(0, package_dir)
    package = _import_module(_PACKAGE)
    if os.path.dirname(os.path.dirname(os.path.abspath(package.__file__))) != package_dir:
        raise ImportError("collectives was not imported from the grading copy")
    sys.path.remove(package_dir)
    policy = Policy(rules, package)
    real_import, real_import_module = builtins.__import__, _import_module

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        module = real_import(name, globals, locals, fromlist, level)
        caller = globals.get("__name__") if isinstance(globals, dict) else None
        if level or (isinstance(caller, str) and _is_package(caller)) or not _is_package(name):
            return module  # the package's own imports, and other modules
        path = name if fromlist else _PACKAGE
        return _hand_out(path, module, policy)

    def guarded_import_module(name, package=None):
        module = real_import_module(name, package)
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if _is_package(str(caller)) or not _is_package(module.__name__):
            return module
        return _hand_out(module.__name__, module, policy)

    builtins.__import__ = guarded_import
    importlib.import_module = guarded_import_module
    return policy


# ---- plain data ------------------------------------------------------------------------------


def decode(value):
    """Arguments back from JSON (:func:`wire.decode`: tuples, sets, dicts, numeric arrays)."""
    return wire.decode(value)


def _refuse_touched(value, encode_item):
    """A :class:`Refused` stand-in returned, not touched: it fails all the same."""
    if isinstance(value, Refused):
        try:
            value._raise()
        except Exception as exc:
            raise _Touched(exc) from None
    return None


def encode(value):
    """A learner's value as plain data (:func:`wire.encode`; numpy values only if numpy is
    imported). A :class:`Refused` stand-in in it raises its error."""
    return wire.encode(value, _refuse_touched)


# ---- running the learner's code --------------------------------------------------------------


def _lookup(module, qualname):
    target = _import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _package_global(entry, policy):
    """A global of the notebook that is a module, class or function of the package."""
    name, path = entry["name"], entry["module"]
    try:
        value = _import_module(entry["module"])
        for part in filter(None, entry["qualname"].split(".")):
            value = getattr(value, part)
            path = f"{path}.{part}"
        return _hand_out(path, value, policy, used=name)
    except ImportError as exc:
        return Refused(ImportError, str(exc))
    except Exception as exc:
        return Refused(
            NameError,
            f"{name} could not be imported in the graded re-run: {type(exc).__name__}: {exc}",
        )


def namespace(bundle, policy=None):
    """A fresh namespace with the learner's definitions and what they use (step 2)."""
    ns = {"__name__": "__main__", "__builtins__": builtins}
    for entry in bundle["entries"]:
        kind, name = entry["kind"], entry.get("name")
        if kind == "package" and policy is not None:
            ns[name] = _package_global(entry, policy)
        elif kind == "value":
            ns[name] = decode(entry["value"])
        elif kind in ("module", "object"):
            try:
                ns[name] = (
                    _import_module(entry["module"])
                    if kind == "module"
                    else _lookup(entry["module"], entry["qualname"])
                )
            except ImportError as exc:
                ns[name] = Refused(
                    ImportError,
                    str(exc)
                    if NO_PACKAGE in str(exc)
                    else f"{name} could not be imported in the graded re-run: {exc}",
                )
            except Exception as exc:
                ns[name] = Refused(
                    NameError,
                    f"{name} could not be imported in the graded "
                    f"re-run: {type(exc).__name__}: {exc}",
                )
        elif kind == "refused":
            error = ImportError if entry.get("package") else NameError
            ns[name] = Refused(error, entry["message"])
    for entry in bundle["entries"]:
        if entry["kind"] != "source":
            continue
        try:
            code = compile(entry["source"], entry["filename"], "exec")
            exec(code, ns)
        except BaseException as exc:  # a decorator or default that fails here
            for alias in entry["names"]:
                ns[alias] = Refused(
                    type(exc) if isinstance(exc, Exception) else RuntimeError, str(exc)
                )
            continue
        for alias in entry["names"]:
            if alias not in ns and entry["def_name"] in ns:
                ns[alias] = ns[entry["def_name"]]
    return ns


def _outcome(function, args):
    try:
        value = function(*args)
    except BaseException as exc:  # SystemExit and the like too: it is the learner's code
        return {
            "raised": type(exc).__name__,
            "message": str(exc),
            "traceback": "".join(traceback.format_exception_only(type(exc), exc))[-2000:],
        }
    try:
        return {"value": encode(value)}
    except _Touched as touched:
        return {"raised": type(touched.error).__name__, "message": str(touched.error)}
    except Exception as exc:
        return {"raised": "GradingError", "message": f"its answer could not be read: {exc}"}


def run(request, policy=None):
    """The results of the request's calls (steps 2 and 3), as a list of dicts."""
    namespaces = [namespace(bundle, policy) for bundle in request["bundles"]]
    results = []
    for item in request["calls"]:
        bundle = request["bundles"][item["bundle"]]
        function = namespaces[item["bundle"]].get(bundle["target"])
        if not callable(function):
            results.append(
                {
                    "raised": "NameError",
                    "message": f"{bundle['target']} is not "
                    "defined by the code sent to the graded re-run",
                }
            )
            continue
        results.append(_outcome(function, decode(item["args"])))
    return results


def main():
    """Entry point: JSON request on stdin, one tagged JSON line on stdout."""
    request = json.loads(sys.stdin.read())
    out = sys.stdout
    sys.stdout = sys.stderr  # what the learner's code prints stays out of the reply
    if request.get("policy") is None:
        make_unimportable()
        policy = None
    else:
        policy = guard_package(request["package"], request["policy"])
    results = run(request, policy)
    out.write(wire.reply_line(RESULT_MARK, request["nonce"], results))
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
