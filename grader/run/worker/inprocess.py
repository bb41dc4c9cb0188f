"""``--isolation module``: run every case in the worker's own process, each against a freshly
executed copy of the submission.

Forking a numpy-loaded interpreter per case costs several times what a case itself costs
(the fork, the copy-on-write faults after it, the exit). In this mode the sandboxed worker
stays alive for all of its submission's cases and gives each case a fresh submission
instead of a fresh process:

* the submission's own modules (the lab's module and every module imported from its folder,
  or from the trusted import paths the audit adds) are removed from ``sys.modules`` and
  executed again, from code compiled once (so a case that rewrites its source changes
  nothing, as in ``--isolation process``); module globals and class attributes such as
  a launch counter's ``n`` are therefore new for every case;
* what a submission may change in the process around it is put back before that: the
  namespaces of ``builtins``, numpy (and its ``random``/``linalg``/``fft`` modules), the
  standard modules the interpreter relies on and the grader's own worker modules
  (monkeypatches undone), numpy's error handling, print options and global random state,
  Python's ``random`` state, ``sys.path``/``sys.meta_path``/``sys.stdout``/..., the
  recursion limit, the working directory, the environment, the umask, signal handlers and
  timers, the garbage collector's settings;
* the methods ``dataclasses`` and ``collections.namedtuple`` write as source text for every class
  they make are compiled once per worker, not once per case (see :func:`compile_generated_once`);
* what cannot be put back retires the worker after the case (its result still counts): a
  thread left running, a changed resource limit, a descriptor opened or replaced, or an
  exception that escaped the case interpreter. The grader then starts a fresh worker for the
  next case (``RETIRE_EXITCODE`` in the case's status frame says so).

A submission whose import is slow (``SLOW_IMPORT_*``) is run as in process mode, a fork per
case from its imported state, by the same worker. A crash, hang, ``os._exit`` or malformed result ends the worker as in process mode: the case
is charged and a fresh worker takes the next case. Processes a case leaves behind are killed
before its status is sent, as in process mode.

Not covered (documented in SECURITY.md): changes to attributes of objects inside modules
that are not listed here (e.g. a class of a deep numpy submodule), and C-level state.
These can only change the submission's own later cases; judging happens in the grader's
process, which never runs submission code.
"""

from __future__ import annotations

import _signal  # the C functions: no enum conversion per signal, per case
import functools
import gc
import importlib
import importlib.machinery
import importlib.util
import operator
import os
import random
import resource
import signal
import sys
import threading
import traceback
import warnings
from types import CodeType, ModuleType

import numpy as np

from grader import framing
from grader.observe.interpreter import run_case
from grader.run.worker import guard, importing, memory

# Sent as the status frame's exit code: the case ran (its result counts), but it left the
# worker in a state that cannot be undone, so the grader ends this worker and starts another.
RETIRE_EXITCODE = 75
# An exception escaped the case interpreter (as in process mode, where its process exits 70).
CASE_EXCEPTION_EXITCODE = 70

# A submission whose first import takes longer than this (wall or CPU seconds) is run a process
# per case instead, from its imported state: re-executing it before every case would cost more
# than a fork, and could run its cases into their timeouts.
SLOW_IMPORT_WALL_S = 0.25
SLOW_IMPORT_CPU_S = 0.05

GUARDED_MODULES = (
    "builtins",
    "dataclasses",
    "numpy",
    "numpy.random",
    "numpy.linalg",
    "numpy.fft",
    "math",
    "operator",
    "functools",
    "itertools",
    "copy",
    "collections",
    "types",
    "struct",
    "json",
    "time",
    "os",
    "random",
    "threading",
)
# the grader's modules, and the lab's pack (its op vocabulary, its provided objects), loaded under
# its private package name (grader.lab.loading.PACK_PREFIX)
GUARDED_PREFIXES = ("grader.", "_graphgrade_pack_")
SYS_ATTRS = (
    "stdin",
    "stdout",
    "stderr",
    "displayhook",
    "excepthook",
    "breakpointhook",
    "unraisablehook",
    "dont_write_bytecode",
)
RLIMITS = tuple(getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_"))
_MISSING = object()
_TAG_VALUE = operator.attrgetter("value")  # of a dict version tag view (see dict_versions)


@functools.lru_cache(maxsize=4096)  # the texts dataclasses and namedtuple generate, compiled
def _compiled(source: str, mode: str) -> CodeType:
    # what exec/eval of the text compiles: same file name, no flags taken from this module
    return compile(source, "<string>", mode, dont_inherit=True)


def _caller_namespaces(globals, locals):
    if globals is None:  # as exec/eval do: the calling frame's namespaces
        frame = sys._getframe(2)
        return frame.f_globals, frame.f_locals if locals is None else locals
    return globals, locals


def _exec_compiled_once(source, globals=None, locals=None, /):
    globals, locals = _caller_namespaces(globals, locals)
    return exec(_compiled(source, "exec") if type(source) is str else source, globals, locals)


def _eval_compiled_once(source, globals=None, locals=None, /):
    globals, locals = _caller_namespaces(globals, locals)
    return eval(_compiled(source, "eval") if type(source) is str else source, globals, locals)


def compile_generated_once() -> None:
    """Make ``dataclasses`` and ``collections`` compile each text they generate once.

    A ``@dataclass`` writes ``__init__``, ``__repr__``, ``__eq__``, ... as source text and
    compiles it every time the class statement runs; re-executing a submission before every case
    made that about half of the cost of a fresh module. The two modules call ``exec``/``eval`` by
    their global name, so a module-level ``exec``/``eval`` in each (shadowing the builtin) that
    compiles a text it has seen before from a cache gives the same functions: the same text
    compiled as the builtin compiles it (file ``<string>``, no inherited ``__future__`` flags),
    run in the same namespaces. Called before the submission's first import, so that both
    names are part of the namespaces :meth:`FreshSubmission.restore` puts back."""
    import collections
    import dataclasses

    dataclasses.exec = _exec_compiled_once  # type: ignore[attr-defined]
    collections.eval = _eval_compiled_once  # type: ignore[attr-defined]


class _CachedSourceLoader(importing.SourceOnlyLoader):
    """Compiles each source file once per worker: re-executing the submission for every case
    then costs only running its module code."""

    code_cache: dict[str, object] = {}

    def get_code(self, fullname):  # type: ignore[override]
        code = self.code_cache.get(self.path)
        if code is None:
            code = super().get_code(fullname)
            self.code_cache[self.path] = code
        return code


class _CachingFinder:
    """A meta-path finder for the submission's folders only: the path finder's answer, with a
    loader that caches compiled code."""

    def __init__(self, roots: tuple[str, ...]) -> None:
        self.roots = roots

    def find_spec(self, name, path=None, target=None):
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if (
            spec is not None
            and isinstance(spec.loader, importlib.machinery.SourceFileLoader)
            and _under(spec.origin, self.roots)
        ):
            spec.loader = _CachedSourceLoader(name, spec.origin)
        return spec

    def invalidate_caches(self) -> None:
        pass


def _under(path: str | None, roots: tuple[str, ...]) -> bool:
    """``path`` lies in one of ``roots`` (given both as named and resolved), by name only: no
    file system call, so that it costs nothing per case."""
    if not path:
        return False
    path = os.path.normpath(path)
    return any(path == root or path.startswith(root + os.sep) for root in roots)


class _NullWriter:
    """Where a re-execution's prints go: module-level output was shown once, at the first import."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def import_too_slow(wall_started: float, cpu_started: float) -> bool:
    import time

    return time.monotonic() - wall_started > SLOW_IMPORT_WALL_S or time.process_time() - cpu_started > SLOW_IMPORT_CPU_S


def _thread_count() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def open_fds() -> dict[int, tuple[int, int]]:
    found = {}
    for name in os.listdir("/proc/self/fd"):
        try:
            st = os.fstat(int(name))
        except OSError:
            continue
        found[int(name)] = (st.st_dev, st.st_ino)
    return found


def dict_versions(dicts: list[dict]) -> list | None:
    """A live view of each dict's version tag (PEP 509: CPython 3.6 to 3.13 give every dict one,
    changed by every write to it), so that an untouched module namespace is recognised by one
    integer instead of comparing its hundreds of entries before every case. None where this
    interpreter has no such tag, or where it does not behave as expected on a dict of our own
    (then :meth:`FreshSubmission.restore` compares every entry, as it always may)."""
    if sys.implementation.name != "cpython" or not (3, 6) <= sys.version_info[:2] <= (3, 13):
        return None
    import ctypes

    offset = object.__basicsize__ + ctypes.sizeof(ctypes.c_ssize_t)  # PyObject_HEAD, ma_used, then ma_version_tag

    def view(d: dict):
        return ctypes.c_uint64.from_address(id(d) + offset)

    probe: dict = {"a": 1}
    tag = view(probe)
    seen = [tag.value]
    for write in (
        lambda: probe.__setitem__("a", 2),
        lambda: probe.__setitem__("b", 3),
        lambda: probe.pop("b"),
        lambda: probe.update(c=4),
        lambda: probe.setdefault("d", 5),
        lambda: probe.clear(),
    ):
        write()
        seen.append(tag.value)
    if 0 in seen or len(set(seen)) != len(seen) or any(b <= a for a, b in zip(seen, seen[1:])):
        return None
    module = ModuleType("probe")
    mtag = view(module.__dict__)
    before = mtag.value
    module.x = 1
    if mtag.value == before:
        return None
    return [view(d) for d in dicts]


class _LegacyRandomState:
    """Puts numpy's global random state (``np.random.seed``, ``rand``, ``randn``, ...) back as it was
    saved, in a few microseconds instead of ``np.random.set_state``'s ~50: ``seed(0)`` clears
    the legacy Gaussian cache (``has_gauss``), then the saved Mersenne Twister words and position
    are copied back into the generator's state (numpy's ``mt19937_state``: 624 uint32 words, then
    an int). Used only where a probe at start confirms that layout (``get_state`` agrees with
    the bytes read) and the cache was empty when saved; otherwise, and whenever the global
    RandomState's bit generator is no longer the one saved, ``set_state`` does it."""

    def __init__(self) -> None:
        self.saved = np.random.get_state()
        self.fast = None
        try:
            import ctypes

            rand = np.random.mtrand._rand
            bit_generator = rand._bit_generator
            name, key, pos, has_gauss, _ = self.saved
            address = bit_generator.ctypes.state_address
            size = key.nbytes + ctypes.sizeof(ctypes.c_int)
            data = ctypes.string_at(address, size)
            if (
                name == "MT19937"
                and not has_gauss
                and data[: key.nbytes] == key.astype(np.uint32).tobytes()
                and int.from_bytes(data[key.nbytes :], sys.byteorder, signed=True) == pos
            ):
                self.fast = (rand, bit_generator, address, data, size, ctypes.memmove)
        except Exception:  # noqa: BLE001 - another numpy: the general way
            self.fast = None

    def restore(self) -> None:
        fast = self.fast
        if fast is None or fast[0]._bit_generator is not fast[1]:
            np.random.set_state(self.saved)
            return
        rand, _, address, data, size, memmove = fast
        rand.seed(0)
        memmove(address, data, size)


class FreshSubmission:
    """The process state before the submission was first imported, and the means to give each
    case a freshly executed submission on top of it."""

    def __init__(self, roots: tuple[str, ...], module_name: str) -> None:
        compile_generated_once()
        self.module_name = module_name  # the lab's module ("pkg.module" for a handout's package layout)
        self.roots = tuple(dict.fromkeys([os.path.abspath(r) for r in roots] + [os.path.realpath(r) for r in roots]))
        self.finder = _CachingFinder(self.roots)
        sys.meta_path.insert(0, self.finder)
        self.modules_before = set(sys.modules)
        self.guarded = [
            (module.__dict__, dict(module.__dict__), tuple(module.__dict__), tuple(module.__dict__.values()))
            for module in self._guarded_modules()
        ]
        self.versions = dict_versions([live for live, *_ in self.guarded])  # None: compare every entry
        self.seen_versions = [v.value for v in self.versions] if self.versions is not None else None
        self.owned: dict[str, tuple[object, bool]] = {}  # module name -> (module, is it the submission's)
        self.sys_attrs = {name: getattr(sys, name, _MISSING) for name in SYS_ATTRS}
        self.sys_lists = {name: list(getattr(sys, name)) for name in ("path", "meta_path", "path_hooks")}
        self.recursion = sys.getrecursionlimit()
        self.np_err = np.geterr()
        self.np_errcall = np.geterrcall()
        self.np_print = np.get_printoptions()
        self.np_random = _LegacyRandomState()
        self.py_random = random.getstate()
        self.cwd = os.getcwd()
        self.environ = dict(os.environ)
        self.environ_data = dict(os.environ._data)  # type: ignore[attr-defined] - bytes to bytes: compared in C
        self.umask = os.umask(0o077)
        os.umask(self.umask)
        self.signals = {
            int(sig): _signal.getsignal(sig)
            for sig in signal.valid_signals()
            if sig not in (signal.SIGKILL, signal.SIGSTOP)
        }
        self.signal_handlers = list(self.signals.values())
        self.gc = (gc.isenabled(), gc.get_threshold())
        self.warnings = list(warnings.filters)
        self.rlimits = self._rlimits()
        self.threads = _thread_count()
        self.fds: dict[int, tuple[int, int]] | None = None  # after the first import (it may open files)
        self.spec = None  # the submission module's import spec, after the first import
        self.ceiling: memory.Ceiling | None = None  # what a case may leave held (after the first import)
        self.first: object = None  # the first import's module, until its case has run
        self.used = False

    @staticmethod
    def _guarded_modules():
        for name, module in list(sys.modules.items()):
            if (
                module is not None
                and (name in GUARDED_MODULES or name.startswith(GUARDED_PREFIXES))
                and isinstance(getattr(module, "__dict__", None), dict)
            ):
                yield module

    @staticmethod
    def _rlimits() -> tuple:
        out = []
        for which in RLIMITS:
            try:
                out.append(resource.getrlimit(which))
            except (OSError, ValueError):
                out.append(None)
        return tuple(out)

    # ------------------------------------------------------------ per case
    def fresh_module(self):
        """Put the process back as it was before the first import, then execute the submission
        again; its output is dropped (it was shown at the first import)."""
        self.restore()
        self.drop_modules()
        sys.stdout = sys.stderr = _NullWriter()
        try:
            spec, name = self.spec, self.module_name
            if spec is None or "." in name or not isinstance(spec.loader, _CachedSourceLoader):
                return importlib.import_module(name)  # a package's module: its parents are imported again too
            # what the import system does for a module it has found before, without finding it again
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                sys.modules.pop(name, None)
                raise
            return sys.modules[name]
        finally:
            sys.stdout, sys.stderr = self.sys_attrs["stdout"], self.sys_attrs["stderr"]

    def drop_modules(self) -> None:
        """Remove the submission's own modules from ``sys.modules`` (executed again per case)."""
        for name in set(sys.modules).difference(self.modules_before):
            module = sys.modules.get(name)
            if self._owned(name, module):
                del sys.modules[name]
                del self.owned[name]  # nor kept alive here: what it holds goes with it

    def _owned(self, name: str, module: object) -> bool:
        """Whether a module the submission brought in is its own (re-executed for every case)."""
        known = self.owned.get(name)
        if known is not None and known[0] is module:
            return known[1]
        try:
            paths = [getattr(module, "__file__", None), *(getattr(module, "__path__", None) or ())]
        except BaseException:  # noqa: BLE001 - a module object of the submission's making
            paths = []
        owned = name == self.module_name or any(isinstance(p, str) and _under(p, self.roots) for p in paths)
        self.owned[name] = (module, owned)
        return owned

    def restore(self) -> None:
        versions, seen = self.versions, self.seen_versions
        # every namespace untouched since it was last found intact (nearly always): one pass in C
        untouched = versions is not None and list(map(_TAG_VALUE, versions)) == seen
        for i, (live, saved, keys, values) in enumerate(() if untouched else self.guarded):
            if versions is not None:
                if versions[i].value == seen[i]:  # not written to since it was last found intact
                    continue
            # nothing changed, in C: the same keys bound to the same objects, in order
            if (
                len(live) == len(keys)
                and all(map(operator.is_, live, keys))
                and all(map(operator.is_, live.values(), values))
            ):
                if versions is not None:
                    seen[i] = versions[i].value
                continue
            for key, value in saved.items():
                if live.get(key, _MISSING) is not value:
                    live[key] = value
            # names added since go, but submodules imported lazily stay (numpy.testing is bound on
            # numpy once; without it numpy's __getattr__ would recurse), and are kept from now on
            for key in [k for k, v in live.items() if k not in saved and not isinstance(v, ModuleType)]:
                del live[key]
            saved.update((k, v) for k, v in live.items() if k not in saved)
            self.guarded[i] = (live, saved, tuple(live), tuple(live.values()))
            if versions is not None:
                seen[i] = versions[i].value
        for name, value in self.sys_attrs.items():
            if value is not _MISSING and getattr(sys, name, _MISSING) is not value:
                setattr(sys, name, value)
        for name, saved in self.sys_lists.items():
            live = getattr(sys, name)
            if live != saved:
                live[:] = saved
        if sys.getrecursionlimit() != self.recursion:
            sys.setrecursionlimit(self.recursion)
        if np.geterr() != self.np_err:  # reading is half the cost of setting, and nearly always enough
            np.seterr(**self.np_err)
        if np.geterrcall() is not self.np_errcall:
            np.seterrcall(self.np_errcall)
        if np.get_printoptions() != self.np_print:
            np.set_printoptions(**self.np_print)
        self.np_random.restore()
        random.setstate(self.py_random)
        if os.getcwd() != self.cwd:
            os.chdir(self.cwd)
        if os.environ._data != self.environ_data:  # type: ignore[attr-defined]
            os.environ.clear()
            os.environ.update(self.environ)
        os.umask(self.umask)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        # one pass in C first, by identity (never a handler's own __eq__)
        if not all(map(operator.is_, map(_signal.getsignal, self.signals), self.signal_handlers)):
            self._restore_signals()
        if sys.gettrace() is not None:
            sys.settrace(None)
        if sys.getprofile() is not None:
            sys.setprofile(None)
        enabled, threshold = self.gc
        gc.set_threshold(*threshold)
        (gc.enable if enabled else gc.disable)()
        warnings.filters[:] = self.warnings

    def _restore_signals(self) -> None:
        for sig, handler in self.signals.items():
            if handler is not None and _signal.getsignal(sig) is not handler:
                try:
                    _signal.signal(sig, handler)
                except (OSError, ValueError, TypeError):
                    pass

    def lasting_damage(self) -> str:
        """What the last case changed that :meth:`restore` cannot undo ("" if nothing)."""
        if _thread_count() != self.threads:
            return "a thread left running"
        if self._rlimits() != self.rlimits:
            return "a resource limit changed"
        if self.fds is not None and open_fds() != self.fds:
            return "a file descriptor opened or replaced"
        return ""


def run_case_here(
    fresh: FreshSubmission, module, message: bytes, res_fd: int, write_all, after_case, output_end, finish
) -> bool:
    """Run one case in this process; writes its frames; returns whether this worker may run
    another case (False: it retires, the grader starts a fresh one). ``output_end()`` gives the
    output log's size once the case's processes are gone: the grader cuts its tail there.
    ``finish(uid, frame, **status)`` gives what to write: the frame and the case's status frame,
    with the token the grader issues for the case once the one before it has ended (None: the
    grader has gone)."""
    uid, steps = framing.read_case_message(message)
    if module is None:
        module, fresh.first = fresh.first, None
    if fresh.used:
        try:
            module = fresh.fresh_module()
        except BaseException:  # noqa: BLE001 - the submission failed to import again: this case fails
            traceback.print_exc()
            module = None
    fresh.used = True
    frame = b""
    exitcode = 0
    tampered = False
    if module is not None:
        try:
            frame, tampered = guard.checked(run_case(module, uid, steps), uid, steps)
        except BaseException:  # noqa: BLE001 - as a case process that raised would: no result
            traceback.print_exc()
            exitcode = CASE_EXCEPTION_EXITCODE
    else:
        exitcode = CASE_EXCEPTION_EXITCODE
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001
        pass
    after_case()  # processes the case left behind are killed before its status goes out
    module = None  # the case's submission: what it holds goes with it (memory.Ceiling.held_after)
    damage = fresh.lasting_damage()
    if not damage and fresh.ceiling is not None and fresh.ceiling.held_after(fresh.drop_modules):
        damage = "memory the next case would start with"
    if exitcode == 0 and (damage or tampered):  # a changed grader class would outlive the case
        exitcode = RETIRE_EXITCODE
    out = finish(uid, frame, exitcode=exitcode, signal=None, output_end=output_end())
    if out is None:
        return False
    write_all(res_fd, out)
    return exitcode == 0
