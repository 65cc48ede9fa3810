"""The program of the learner's process: a learner's functions re-run from their source code,
with the ``collectives`` package made unimportable.

:mod:`collectives.grading.isolation` starts ``python -I`` on this file (by its path: it is a
script, not imported by the grading code) and writes one JSON request on its stdin: the
learner's functions as source text, the plain values, modules and library objects they use
(see :func:`collectives.grading.isolation.bundle`), and the calls to make. This program

1. removes every ``collectives`` module from ``sys.modules`` (there are none: nothing here
   imports the package) and every ``sys.path`` entry from which it could be imported, and
   puts :class:`RefuseCollectives` first on ``sys.meta_path``, so that ``import collectives``
   (and any ``collectives.*``) raises ``ImportError`` with :data:`NO_PACKAGE` in its message;
2. executes each function's source in a fresh namespace holding what it uses (a module or
   object of the package is bound to a stand-in that raises the same ``ImportError`` when the
   code touches it);
3. makes the calls and writes their results, as the plain data of
   :func:`collectives.grading.recheck.encode` (or the error each call raised), on one stdout
   line tagged with the request's nonce. What the learner's code prints goes to stderr.

Only the standard library is used (numpy only to decode an array argument, and to encode the
numpy values a learner's code returns, when that code imported numpy itself). The checks never
run in this process: the learner's code could have tampered with anything in it. What this
stops and what it does not is in the docstring of :mod:`collectives.grading`.
"""

import builtins
import importlib
import json
import numbers
import os
import sys
import traceback

__all__ = ["NO_PACKAGE", "RefuseCollectives", "Refused", "encode", "decode", "run", "main"]

#: the start of every message that refuses the package
NO_PACKAGE = "this task must be solved without the collectives package"
_ADVICE = ("; use the package in scratch cells to check your answers, not inside the functions "
           "that are graded")
_RESULT_MARK = "collectives-learner-result "
_MAX_ITEMS = 5_000_000
_PACKAGE = "collectives"


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


def make_unimportable():
    """Step 1 of the module docstring."""
    for name in [m for m in sys.modules if _is_package(m)]:
        del sys.modules[name]
    kept = []
    for entry in sys.path:
        base = entry or os.getcwd()
        if os.path.isdir(os.path.join(base, _PACKAGE)) or os.path.isfile(
                os.path.join(base, _PACKAGE + ".py")):
            continue
        kept.append(entry)
    sys.path[:] = kept
    sys.meta_path.insert(0, RefuseCollectives())
    importlib.invalidate_caches()


# ---- plain data ------------------------------------------------------------------------------

def decode(value):
    """Arguments back from JSON: tagged tuples, sets, dicts and numeric arrays."""
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "__tuple__" in value:
        return tuple(decode(v) for v in value["__tuple__"])
    if "__set__" in value:
        return frozenset(decode(v) for v in value["__set__"])
    if "__dict__" in value:
        return {k: decode(v) for k, v in value["__dict__"].items()}
    if "__ndarray__" in value:
        import numpy
        return numpy.array(decode(value["__ndarray__"]), dtype=numpy.dtype(value["dtype"]))
    raise ValueError(f"cannot decode {value!r}")


def _type_name(value):
    kind = type(value)
    return f"numpy.{kind.__name__}" if kind.__module__ == "numpy" else kind.__name__


def _short(value):
    try:
        text = repr(value)
    except Exception:          # a learner's __repr__ may raise anything
        return f"<{_type_name(value)} object>"
    return text if len(text) <= 80 else text[:77] + "..."


def encode(value, depth=0, budget=None):
    """A learner's value as plain data, in the format of
    :func:`collectives.grading.recheck.encode` (numpy values only if numpy is imported)."""
    budget = budget if budget is not None else [_MAX_ITEMS]
    budget[0] -= 1
    if budget[0] < 0:
        raise ValueError("the answer is too large to check")
    np = sys.modules.get("numpy")
    if isinstance(value, Refused):              # returned, not touched: it fails all the same
        try:
            value._raise()
        except Exception as exc:
            raise _Touched(exc) from None
    if depth > 12:
        return {"__opaque__": _type_name(value), "repr": "a structure nested too deeply"}
    if value is None or isinstance(value, str):
        return str(value) if value is not None else None
    if isinstance(value, bool) or (np is not None and isinstance(value, np.bool_)):
        return bool(value)
    if isinstance(value, int) or (np is not None and isinstance(value, np.integer)):
        return int(value)
    if isinstance(value, float) or (np is not None and isinstance(value, np.floating)):
        return float(value)
    if isinstance(value, list):
        return [encode(v, depth + 1, budget) for v in list(value)]
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, depth + 1, budget) for v in tuple(value)]}
    if isinstance(value, (set, frozenset)):
        return {"__set__": [encode(v, depth + 1, budget) for v in list(value)]}
    if np is not None and isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return {"__ndarray__": encode(value.tolist(), depth + 1, budget),
                "dtype": value.dtype.str}
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"__dict__": {str(k): encode(v, depth + 1, budget) for k, v in value.items()}}
    if isinstance(value, numbers.Real) and not isinstance(value, complex):
        try:
            return float(value)
        except Exception:
            pass
    return {"__opaque__": _type_name(value), "repr": _short(value)}


# ---- running the learner's code --------------------------------------------------------------

def _lookup(module, qualname):
    target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target


def _namespace(bundle):
    """A fresh namespace with the learner's definitions and what they use (step 2)."""
    ns = {"__name__": "__main__", "__builtins__": builtins}
    for entry in bundle["entries"]:
        kind, name = entry["kind"], entry.get("name")
        if kind == "value":
            ns[name] = decode(entry["value"])
        elif kind in ("module", "object"):
            try:
                ns[name] = (importlib.import_module(entry["module"]) if kind == "module"
                            else _lookup(entry["module"], entry["qualname"]))
            except ImportError as exc:
                ns[name] = Refused(ImportError, str(exc) if NO_PACKAGE in str(exc) else
                                   f"{name} could not be imported in the graded re-run: {exc}")
            except Exception as exc:
                ns[name] = Refused(NameError, f"{name} could not be imported in the graded "
                                   f"re-run: {type(exc).__name__}: {exc}")
        elif kind == "refused":
            error = ImportError if entry.get("package") else NameError
            ns[name] = Refused(error, entry["message"])
    for entry in bundle["entries"]:
        if entry["kind"] != "source":
            continue
        try:
            code = compile(entry["source"], entry["filename"], "exec")
            exec(code, ns)
        except BaseException as exc:             # a decorator or default that fails here
            for alias in entry["names"]:
                ns[alias] = Refused(type(exc) if isinstance(exc, Exception) else RuntimeError,
                                    str(exc))
            continue
        for alias in entry["names"]:
            if alias not in ns and entry["def_name"] in ns:
                ns[alias] = ns[entry["def_name"]]
    return ns


def _outcome(function, args):
    try:
        value = function(*args)
    except BaseException as exc:   # SystemExit and the like too: it is the learner's code
        return {"raised": type(exc).__name__, "message": str(exc),
                "traceback": "".join(traceback.format_exception_only(type(exc), exc))[-2000:]}
    try:
        return {"value": encode(value)}
    except _Touched as touched:
        return {"raised": type(touched.error).__name__, "message": str(touched.error)}
    except Exception as exc:
        return {"raised": "GradingError", "message": f"its answer could not be read: {exc}"}


def run(request):
    """The results of the request's calls (steps 2 and 3), as a list of dicts."""
    namespaces = [_namespace(bundle) for bundle in request["bundles"]]
    results = []
    for item in request["calls"]:
        bundle = request["bundles"][item["bundle"]]
        function = namespaces[item["bundle"]].get(bundle["target"])
        if not callable(function):
            results.append({"raised": "NameError", "message": f"{bundle['target']} is not "
                            "defined by the code sent to the graded re-run"})
            continue
        results.append(_outcome(function, decode(item["args"])))
    return results


def main():
    """Entry point: JSON request on stdin, one tagged JSON line on stdout."""
    request = json.loads(sys.stdin.read())
    out = sys.stdout
    sys.stdout = sys.stderr                 # what the learner's code prints stays out of the reply
    make_unimportable()
    results = run(request)
    reply = json.dumps({"nonce": request["nonce"], "results": results})
    out.write(_RESULT_MARK + reply + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
