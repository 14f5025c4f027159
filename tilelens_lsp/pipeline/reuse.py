"""When the user's helper modules may be kept from one analysis of a file to the next, unexecuted.

A save re-imports the kernel's module; its helpers (sibling modules, parent packages) need not run
again when nothing they depend on changed. Keeping one that did change would give a stale verdict,
so a set of helpers is kept only when all of this holds, and is otherwise imported afresh:

- every helper's source, and every file or folder the import read (a config it loads, a folder it
  lists), is byte for byte as it was when read (stamped before it was read);
- each name still resolves to the same file (no new module shadows it);
- no helper was changed after its own execution (its top-level values, and one level into plain
  objects, as they were when it finished running: a kernel module that sets `helpers.BLOCK = 64`
  makes the set unkeepable);
- no helper imports the kernel's own module (it would hold the old module's values);
- the import left the environment, the working folder and `sys.path` as it found them.

`Watch` records, while an import runs, what the helpers read and how each looked when it finished
(a loader that snapshots, an audit hook that sees `open` and folder listings). It does not decide
what is analysed, and it never keeps the kernel's own module.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.machinery
import os
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

Stamp = tuple[Any, ...]
Print = tuple[tuple[Any, ...], ...]

_SYSTEM = ("/proc/", "/sys/", "/dev/")  # read for facts of the machine, which a worker's life does not change
_PLAIN_VALUES = (int, float, complex, str, bytes, bool, type(None))
_CONTAINERS = (tuple, list, dict, set, frozenset)


def stamp(path: str) -> Stamp:
    """What `path` holds now: a file's bytes (hashed), a folder's names, or that it is missing."""
    try:
        if os.path.isdir(path):
            return ("dir", tuple(sorted(os.listdir(path))))
        with open(path, "rb") as f:
            return ("file", hashlib.sha1(f.read()).hexdigest())
    except OSError as exc:
        return ("missing", type(exc).__name__)


def _value_print(value: Any, depth: int = 0) -> Any:
    if isinstance(value, _PLAIN_VALUES):
        return repr(value)
    if isinstance(value, (types.ModuleType, type)) or callable(value):
        return ("id", id(value))  # rebinding shows in the id; their insides are code, kept by its source
    if isinstance(value, _CONTAINERS):
        try:
            return ("repr", id(value), hashlib.sha1(repr(value).encode("utf-8", "replace")).hexdigest())
        except Exception:  # noqa: BLE001 - a user repr may raise: a print that never matches
            return ("unprintable", os.urandom(8))
    attrs = getattr(value, "__dict__", None)
    if depth == 0 and isinstance(attrs, dict):
        try:
            return ("object", id(value), tuple(sorted((k, _value_print(v, 1)) for k, v in list(attrs.items()))))
        except Exception:  # noqa: BLE001 - user attributes may raise anything
            return ("unprintable", os.urandom(8))
    return ("id", id(value))


def namespace_print(module: types.ModuleType) -> Print:
    """A module's top-level values as a comparable print (submodules left out: the import system sets
    a package's attribute for each submodule it loads)."""
    out = []
    for name, value in list(vars(module).items()):
        if name in ("__builtins__", "__loader__", "__spec__", "__cached__") or isinstance(value, types.ModuleType):
            continue
        out.append((name, _value_print(value)))
    return tuple(sorted(out, key=lambda item: item[0]))


def imports_module(source: str, package: str, target: str) -> bool:
    """Whether `source` (of a module in `package`) may import `target`: by name, relatively, by a
    `from PARENT import *` or the name itself, or through a dynamic import (`importlib.import_module`,
    `__import__`), which is assumed to."""
    parent, _, stem = target.rpartition(".")
    if not any(word in source for word in (stem, "import *", "import_module", "__import__")):
        return False  # no import statement can name it (the common case: no parse)
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True

    def names(full: str, members: Sequence[str]) -> bool:
        if full == target or full.startswith(target + "."):
            return True
        return bool(parent) and full == parent and any(m in (stem, "*") for m in members)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(names(a.name, ()) for a in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: max(0, len(package.split(".")) - node.level + 1)] if package else []
                base = ".".join(anchor + ([base] if base else []))
            if names(base, [a.name for a in node.names]):
                return True
        elif isinstance(node, ast.Name) and node.id == "__import__":
            return True
        elif isinstance(node, ast.Attribute) and node.attr in ("import_module", "__import__"):
            return True
    return False


@dataclass
class Watch:
    """What one import read and how each helper looked when its execution ended."""

    roots: tuple[str, ...]
    stamps: dict[str, Stamp] = field(default_factory=dict)  # path -> what it held when first read
    prints: dict[str, Print] = field(default_factory=dict)  # module -> its namespace after its execution
    sources: dict[str, str] = field(default_factory=dict)  # module -> its source file
    busy: bool = False

    def saw(self, event: str, args: tuple) -> None:
        """An audit event during the import: a file opened for reading, a folder listed."""
        if self.busy:
            return
        if event == "open":
            path, mode, flags = (tuple(args) + (None, None, None))[:3]
            if isinstance(mode, str) and any(c in mode for c in "wax+"):
                return  # written, not read (a log, a cache file)
            if mode is None and isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR):
                return
        elif event in ("os.listdir", "os.scandir"):
            path = args[0] if args else "."
        else:
            return
        if isinstance(path, int) or path is None:
            return
        try:
            text = os.path.abspath(os.fsdecode(path))
        except (TypeError, ValueError):
            return
        if text in self.stamps or text.startswith(_SYSTEM) or "__pycache__" in text or text.endswith(".pyc"):
            return
        if any(text == p or text.startswith(p + os.sep) for p in _prefixes()):
            return
        self.busy = True  # stamping opens the file: not an event of the import's
        try:
            self.stamps[text] = stamp(text)
        finally:
            self.busy = False

    def executed(self, name: str, origin: str, module: types.ModuleType) -> None:
        self.prints[name] = namespace_print(module)
        self.sources[name] = origin


def _prefixes() -> tuple[str, ...]:
    return tuple({os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)})


class SourceLoader(importlib.machinery.SourceFileLoader):
    """A user module's loader that compiles the file's source on every import, never a cached `.pyc`:
    Python runs a `.pyc` whose recorded source mtime (whole seconds) and size match the file, so an
    edit that keeps the size, saved within the second the user's own run cached it, would otherwise
    run the code from before the edit (its constants, its autotune configs) under the new verdict."""

    def get_code(self, fullname: str) -> types.CodeType:
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


class _RecordingLoader(SourceLoader):
    """A user module's loader that stamps its source before running it and prints it afterwards."""

    watch: Watch

    def exec_module(self, module: types.ModuleType) -> None:
        self.watch.busy = True
        try:
            self.watch.stamps.setdefault(os.path.abspath(self.path), stamp(self.path))
        finally:
            self.watch.busy = False
        super().exec_module(module)
        self.watch.executed(module.__name__, os.path.abspath(self.path), module)


class RecordingFinder:
    """Placed just before Python's path finder while an import runs: a module found on the path whose
    file is the user's gets a `SourceLoader` (a `_RecordingLoader` where a `watch` records what the
    import reads); any other is left to the finders after this one."""

    def __init__(self, watch: Watch | None, is_user_file: Callable[[str], bool]) -> None:
        self.watch = watch
        self.is_user_file = is_user_file

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or type(spec.loader) is not importlib.machinery.SourceFileLoader or not spec.origin:
            return None
        if not self.is_user_file(spec.origin):
            return None
        if self.watch is None:
            spec.loader = SourceLoader(fullname, spec.origin)
            return spec
        loader = _RecordingLoader(fullname, spec.origin)
        loader.watch = self.watch
        spec.loader = loader
        return spec


@dataclass(frozen=True)
class Kept:
    """The helpers one analysis of a file imported, and what they were made from."""

    path: str
    roots: tuple[str, ...]
    modules: dict[str, types.ModuleType]
    stamps: dict[str, Stamp]
    prints: dict[str, Print]
    sources: dict[str, str]

    def still_valid(self, path: str, roots: tuple[str, ...]) -> bool:
        """The same file and roots, nothing read has changed, and every name resolves as before."""
        if path != self.path or roots != self.roots:
            return False
        if any(stamp(p) != s for p, s in self.stamps.items()):
            return False
        for name, origin in self.sources.items():
            parent, _, _ = name.rpartition(".")
            search = getattr(self.modules.get(parent), "__path__", None) if parent else None
            if parent and search is None:
                return False
            try:
                spec = importlib.machinery.PathFinder.find_spec(name, search)
            except (ImportError, ValueError):
                return False
            if spec is None or not spec.origin or os.path.abspath(spec.origin) != origin:
                return False
        return True


def keepable(
    path: str, names: Sequence[str], kernel: str, watch: Watch, carried: Kept | None, env_unchanged: bool
) -> Kept | None:
    """The helpers `names` of the kernel module `kernel` (the file `path`) as a `Kept` when every rule
    of this module holds for them, else None."""
    if not env_unchanged or not names:
        return None
    prints = dict(carried.prints) if carried else {}
    prints.update(watch.prints)
    sources = dict(carried.sources) if carried else {}
    sources.update(watch.sources)
    stamps = dict(carried.stamps) if carried else {}
    for read, value in watch.stamps.items():
        stamps.setdefault(read, value)
    stamps.pop(path, None)  # the kernel's own file: it is imported afresh every time
    prints.pop(kernel, None)
    sources.pop(kernel, None)
    modules = {}
    for name in names:
        module = sys.modules.get(name)
        if module is None or name not in prints or name not in sources:
            return None  # not run through the recording loader: nothing to compare it with
        if sources[name] == os.path.abspath(path):
            return None  # the kernel's file imported under another name: it changes every time
        if namespace_print(module) != prints[name]:
            return None  # changed after its own execution (by the kernel's module, say)
        if carried is not None and name in carried.modules:
            modules[name] = module  # kept last time: its source, unchanged since, was checked then
            continue
        try:
            source = Path(sources[name]).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        if imports_module(source, module.__package__ or "", kernel):
            return None
        modules[name] = module
    sources = {name: sources[name] for name in modules}
    return Kept(path, watch.roots, modules, stamps, {name: prints[name] for name in modules}, sources)
