"""Finished training runs, kept for the rest of a test session: CI's second notebook pass.

``make test`` checks every notebook twice, once per edition, and the Chinese notebooks run the
English ones' code (``tests/test_editions.py``). Without this module the second pass trains every
model again, with the same code, the same seeds and the same CPU kernels, and gets the same
weights bit for bit: more than half of CI's time for nothing new.

With ``ATTNBOOK_RUN_CACHE=<folder>`` set, :func:`~attnbook.train.fit` and
:func:`~attnbook.train.fit_together` (both wrapped in :func:`reusable`) store each finished run
under a fingerprint of everything it is computed from, and a later call with the same fingerprint
takes the stored result instead of training again:

* the run's arguments, followed all the way down: the models' classes, attributes, parameters
  and buffers (their bytes); the config; the functions that make batches, compute the loss and
  evaluate, by their compiled code, defaults, closures and the notebook globals they read;
* the library's source (every file of ``attnbook``), PyTorch's version, the CPU kernels
  (``torch.backends.cpu.get_cpu_capability()``, so a pass on other kernels trains again) and the
  number of threads. Not the global random states at the call: both functions seed them first.

A hit restores what the run leaves behind: the models' parameters, buffers and train/eval modes,
Python's and PyTorch's global random states, and the text the run printed (its progress
bar); then it returns the stored histories. Anything the fingerprint cannot follow — a hook on a
model (it would record during training), an object it cannot read — makes the run train as usual.

``ATTNBOOK_RUN_CACHE_TRACE=1`` also writes, next to each run, the tokens its fingerprint was
made of, so that two traces can be compared to find why a run was not taken.

The variable is unset for readers, ``make notebooks`` and the unit tests: only ``make test``
sets it, on a folder it empties first. A wrong hit could not pass unnoticed: the stored outputs
it would be compared with were computed by real training.
"""

from __future__ import annotations

import datetime
import enum
import fractions
import functools
import hashlib
import inspect
import io
import os
import random
import sys
import types
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import torch
from torch import nn

__all__ = ["ENV", "Uncacheable", "fingerprint", "reusable"]

#: The environment variable that names the folder of stored runs; unset, nothing is stored.
ENV = "ATTNBOOK_RUN_CACHE"

TRACE: list[bytes] | None = [] if os.environ.get("ATTNBOOK_RUN_CACHE_TRACE") else None

F = TypeVar("F", bound=Callable[..., Any])

_LIBRARY = Path(__file__).resolve().parent
# Modules whose functions and classes are named, not read: their code is fixed by the versions
# in the fingerprint (attnbook's source, PyTorch's version, the pinned requirements).
_NAMED_PACKAGES = (
    "attnbook",
    "torch",
    "numpy",
    "math",
    "random",
    "functools",
    "builtins",
    "typing",
    "collections",
    "itertools",
    "operator",
    "dataclasses",
    "tqdm",
)


_BY_REPR = (
    datetime.date,
    datetime.time,
    datetime.timedelta,
    slice,
    range,
    enum.Enum,
    fractions.Fraction,
)


class Uncacheable(Exception):
    """The fingerprint cannot follow something the run depends on; the run trains as usual."""


@functools.cache  # the library's files do not change while a notebook runs
def _library_digest() -> str:
    digest = hashlib.sha256()
    for path in sorted(_LIBRARY.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(_LIBRARY)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


class _Fingerprint:
    """Feeds a description of an object graph into one hash, each object once (cycles allowed)."""

    def __init__(self) -> None:
        self.digest = hashlib.sha256()
        self.seen: dict[int, int] = {}
        self.keep: list[Any] = []  # keeps visited objects alive, so that ids are not reused

    def put(self, *tokens: Any) -> None:
        for token in tokens:
            data = token if isinstance(token, bytes) else repr(token).encode()
            if TRACE is not None:
                TRACE.append(data[:200])
            self.digest.update(len(data).to_bytes(8, "little") + data)

    def named(self, obj: Any) -> bool:
        module = getattr(obj, "__module__", None) or ""
        return module.split(".")[0] in _NAMED_PACKAGES

    def add(self, obj: Any) -> None:  # noqa: C901 (one case per kind of object, read in order)
        if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
            self.put(type(obj).__name__, obj)
            return
        if isinstance(obj, (torch.dtype, torch.device, torch.Size, torch.layout)):
            self.put(type(obj).__name__, str(obj))
            return
        if isinstance(obj, _BY_REPR):  # immutable values whose repr says all of them
            self.put(type(obj).__qualname__, repr(obj))
            return
        if isinstance(obj, weakref.ref):  # what it points to, if that still exists
            self.put("weakref")
            self.add(obj())
            return
        if id(obj) in self.seen:
            self.put("ref", self.seen[id(obj)])
            return
        self.seen[id(obj)] = len(self.seen)
        self.keep.append(obj)
        if isinstance(obj, torch.Tensor):
            self.tensor(obj)
        elif type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray":
            self.put("ndarray", obj.dtype.str, obj.shape, obj.tobytes())  # tobytes: C order
        elif isinstance(obj, (list, tuple)):
            self.put(type(obj).__qualname__, len(obj))
            for item in obj:
                self.add(item)
        elif isinstance(obj, dict):
            self.put(type(obj).__qualname__, len(obj))
            for key, value in obj.items():
                self.add(key)
                self.add(value)
        elif isinstance(obj, (set, frozenset)):
            parts = []
            for item in obj:
                inner = _Fingerprint()
                inner.add(item)
                parts.append(inner.digest.hexdigest())
            self.put(type(obj).__qualname__, sorted(parts))
        elif isinstance(obj, types.ModuleType):
            self.put("module", obj.__name__)
        elif isinstance(obj, nn.Module):
            self.module(obj)
        elif isinstance(obj, (types.FunctionType, types.MethodType, functools.partial, type)):
            self.callable(obj)
        elif isinstance(obj, (types.BuiltinFunctionType, types.MethodWrapperType)):
            self.put("builtin", getattr(obj, "__module__", None), obj.__qualname__)
            self.add(
                getattr(obj, "__self__", None)
                if not isinstance(getattr(obj, "__self__", None), types.ModuleType)
                else None
            )
        elif isinstance(obj, torch.Generator):
            self.put("generator", obj.get_state().numpy().tobytes())
        elif isinstance(obj, random.Random):
            self.put("random", obj.getstate())
        elif isinstance(obj, (staticmethod, classmethod, property)):
            self.put(type(obj).__name__)
            for part in (
                getattr(obj, "__func__", None),
                getattr(obj, "fget", None),
                getattr(obj, "fset", None),
            ):
                self.add(part)
        elif hasattr(obj, "__dict__") or hasattr(type(obj), "__slots__"):
            self.callable(type(obj))
            state = dict(getattr(obj, "__dict__", {}))
            for name in getattr(type(obj), "__slots__", ()):
                if hasattr(obj, name):
                    state[name] = getattr(obj, name)
            self.add(state)
        else:
            raise Uncacheable(f"cannot read an object of type {type(obj).__qualname__}")

    def tensor(self, t: torch.Tensor) -> None:
        if t.layout != torch.strided or t.device.type == "meta" or t.is_quantized:
            raise Uncacheable(f"cannot read a tensor on {t.device} with layout {t.layout}")
        if getattr(t, "_backward_hooks", None) or getattr(t, "_post_accumulate_grad_hooks", None):
            raise Uncacheable("a tensor has a hook, which would run during training")
        data = t.detach().cpu().contiguous().reshape(-1)
        self.put("tensor", type(t).__qualname__, t.dtype, tuple(t.shape), t.requires_grad)
        self.put(data.view(torch.uint8).numpy().tobytes() if data.numel() else b"")

    def module(self, module: nn.Module) -> None:
        hooks = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
        if any(getattr(module, name, None) for name in hooks):
            raise Uncacheable(f"{type(module).__qualname__} has a hook")
        self.callable(type(module))
        self.add(dict(module.__dict__))

    def callable(self, obj: Any) -> None:
        if isinstance(obj, functools.partial):
            self.put("partial")
            self.add(obj.func)
            self.add(obj.args)
            self.add(obj.keywords)
            return
        if isinstance(obj, types.MethodType):
            self.put("method")
            self.add(obj.__func__)
            self.add(obj.__self__)
            return
        self.put(type(obj).__name__, getattr(obj, "__module__", None), obj.__qualname__)
        if isinstance(obj, type) and self.named(obj):
            return
        if isinstance(obj, type):  # a class defined in a notebook: its bases and its namespace
            self.add(obj.__bases__)
            self.add(
                {
                    k: v
                    for k, v in vars(obj).items()
                    if k not in ("__dict__", "__weakref__", "__doc__", "__module__")
                }
            )
            return
        if not self.named(obj):  # a library function's code is in the library's digest
            self.code(obj.__code__, obj.__globals__)
        self.add(obj.__defaults__)
        self.add(obj.__kwdefaults__)
        for cell in obj.__closure__ or ():
            try:
                self.add(cell.cell_contents)
            except ValueError:  # a cell not filled yet
                self.put("empty cell")

    def code(self, code: types.CodeType, globals_: dict[str, Any]) -> None:
        self.put("code", code.co_code, code.co_names, code.co_varnames, code.co_freevars)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self.code(const, globals_)
            else:
                self.put(type(const).__name__, const)
        for name in code.co_names:  # the globals it reads (attributes are names too: skipped)
            if name in globals_:
                self.put("global", name)
                self.add(globals_[name])


def fingerprint(run: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """A hash of everything ``run(*args, **kwargs)`` is computed from; raises :class:`Uncacheable`."""
    bound = inspect.signature(run).bind(*args, **kwargs)
    bound.apply_defaults()
    seen = _Fingerprint()
    seen.put(
        run.__module__,
        run.__qualname__,
        _library_digest(),
        torch.__version__,
        torch.backends.cpu.get_cpu_capability(),
        torch.get_num_threads(),
        os.environ.get("ONEDNN_MAX_CPU_ISA"),
        os.environ.get("MKL_ENABLE_INSTRUCTIONS"),
        torch.are_deterministic_algorithms_enabled(),
        torch.get_default_dtype(),
        torch.is_grad_enabled(),
    )
    seen.add(dict(bound.arguments))
    return seen.digest.hexdigest()


def _modules(first: Any) -> list[nn.Module]:
    return [first] if isinstance(first, nn.Module) else list(first)


def _state(models: list[nn.Module]) -> list[dict[str, Any]]:
    return [
        {
            "tensors": {
                n: t.detach().clone() for n, t in (*m.named_parameters(), *m.named_buffers())
            },
            "training": [sub.training for sub in m.modules()],
        }
        for m in models
    ]


def _restore(models: list[nn.Module], states: list[dict[str, Any]]) -> None:
    for model, state in zip(models, states, strict=True):
        with torch.no_grad():
            for name, tensor in (*model.named_parameters(), *model.named_buffers()):
                tensor.copy_(state["tensors"][name])
        for sub, training in zip(model.modules(), state["training"], strict=True):
            sub.training = training


class _Tee(io.TextIOBase):
    """Standard output as it was, plus a copy of everything written to it."""

    def __init__(self, out: Any) -> None:
        self.out, self.copy = out, io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.out, name)


@contextmanager
def _teed() -> Iterator[_Tee]:
    tee = _Tee(sys.stdout)
    sys.stdout = tee
    try:
        yield tee
    finally:
        sys.stdout = tee.out


def reusable(run: F) -> F:
    """Wrap a training function whose first argument is a model or a sequence of models.

    With :data:`ENV` unset this returns ``run``'s result unchanged and adds nothing else; see the
    module's docstring for what it does when set.
    """

    @functools.wraps(run)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        folder = os.environ.get(ENV)
        if not folder:
            return run(*args, **kwargs)
        try:
            key = fingerprint(run, *args, **kwargs)
        except Uncacheable as reason:  # noted, so that a pass can see what it could not reuse
            Path(folder).mkdir(parents=True, exist_ok=True)
            with open(Path(folder, "not-stored.log"), "a", encoding="utf-8") as log:
                log.write(f"{os.getpid()} {run.__qualname__}: {reason}\n")
            return run(*args, **kwargs)
        models = _modules(args[0] if args else next(iter(kwargs.values())))
        path = Path(folder) / f"{key}.pt"
        if TRACE is not None:
            Path(folder).mkdir(parents=True, exist_ok=True)
            Path(folder, f"{key}.trace").write_bytes(b"\n".join(TRACE))
            TRACE.clear()
        if path.exists():
            stored = torch.load(path, weights_only=False)
            _restore(models, stored["models"])
            random.setstate(stored["random"])
            torch.set_rng_state(stored["torch"])
            sys.stdout.write(stored["printed"])
            sys.stdout.flush()
            return stored["result"]
        with _teed() as tee:
            result = run(*args, **kwargs)
        stored = {
            "models": _state(models),
            "result": result,
            "printed": tee.copy.getvalue(),
            "random": random.getstate(),
            "torch": torch.get_rng_state(),
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.part")
        torch.save(stored, partial)
        partial.replace(path)  # atomic: a reader in another process sees all of it or nothing
        return result

    return wrapper  # type: ignore[return-value]
