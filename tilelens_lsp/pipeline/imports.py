"""The user's module, imported for one file's analysis: its import roots, the scope that undoes what
the import did to the process, and the import itself (never as `__main__`).

`Imports` is what a warm worker remembers between files: which of the user's modules an earlier
import brought in, so the next import forgets them and sees current sources, and (with `reuse`)
the helpers of the last file that may be kept for its next analysis (`reuse.py`). It does not
decide what to analyse, and it never keeps a module of the user's that could have changed.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.machinery
import importlib.util
import linecache
import os
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Sequence

from tilelens_lsp.paths import resolved_prefixes, stdlib_end
from tilelens_lsp.pipeline.reuse import Kept, RecordingFinder, SourceLoader, Watch, keepable

_INSTALLED = ("site-packages", "dist-packages")
_OURS = ("tilelens_lsp", "triton")  # top-level packages never treated as the user's


@dataclass
class ImportFailure(Exception):
    line: int
    message: str
    files: tuple[str, ...] = ()  # the user's files the failed import went through (a fix to one is a reason to retry)


@dataclass
class Imports:
    """The user's modules the last import brought in (forgotten before the next import, unless kept).

    With `reuse`, the helpers of a file's last import are kept for its next analysis when nothing
    they were made from changed (`reuse.py` says exactly when): only the kernel's own module is
    executed again. `executed` names the user modules the last import ran (for tests and tools)."""

    loaded: set[str] = field(default_factory=set)
    read: tuple[str, ...] = ()  # the other files the last import read (a config, a table), as it opened them
    reuse: bool = False
    kept: Kept | None = None
    executed: list[str] = field(default_factory=list)
    _watch: Watch | None = field(default=None, repr=False)
    _hooked: bool = field(default=False, repr=False)

    def forget(self) -> None:
        """Drop the user's modules an earlier analysis imported (helpers, sibling modules, parent
        packages), so this import sees their current source and the modules next to *this* file, not
        a same-named module of another folder."""
        for name in self.loaded:
            sys.modules.pop(name, None)
        self.loaded.clear()
        importlib.invalidate_caches()

    def sources(self, besides: Path, failed: ImportFailure | None = None) -> tuple[str, ...]:
        """The files of the user's modules the last import brought in or kept (and those a `failed`
        import went through), `besides` left out, resolved: what that file's verdict was made from
        beyond its own text. Asked inside `file_scope`, while the modules are in `sys.modules`."""
        files = {getattr(sys.modules.get(name), "__file__", None) for name in self.loaded} | set(self.read)
        found = {os.path.realpath(f) for f in files if f} | set(failed.files if failed is not None else ())
        return tuple(sorted(found - {os.path.realpath(besides)}))

    def restore(self, path: Path, roots: list[Path]) -> Kept | None:
        """Forget the last import's modules, except the helpers kept for this same file when they are
        still valid: those go back into `sys.modules` (and are returned)."""
        kept, self.kept = self.kept, None
        self.forget()
        if kept is None or not kept.still_valid(str(path), tuple(str(r) for r in roots)):
            return None
        sys.modules.update(kept.modules)
        return kept

    @contextlib.contextmanager
    def watching(self, roots: list[Path]) -> Iterator[Watch | None]:
        """While the import runs: the user's modules load from their source (never a cached `.pyc`),
        and, with `reuse`, what the import reads and how each user module looks once it has run."""
        watch = None
        if self.reuse:
            if not self._hooked:
                sys.addaudithook(self._audit)  # hooks cannot be removed: this one is idle outside `watching`
                self._hooked = True
            watch = Watch(tuple(str(r) for r in roots))
        finder = RecordingFinder(watch, lambda origin: _is_user_file(origin, roots))
        at = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), len(sys.meta_path))
        sys.meta_path.insert(at, finder)
        self._watch = watch
        try:
            yield watch
        finally:
            self._watch = None
            with contextlib.suppress(ValueError):
                sys.meta_path.remove(finder)

    def _audit(self, event: str, args: tuple) -> None:
        watch = self._watch
        if watch is not None:
            watch.saw(event, args)

    def remember(
        self, path: Path, module: types.ModuleType, watch: Watch | None, carried: Kept | None, env_unchanged: bool
    ) -> None:
        """Keep this import's helpers for the file's next analysis, where they may be kept."""
        self.executed = sorted(watch.prints) if watch is not None else []
        if watch is None:
            return
        helpers = sorted(n for n in self.loaded if n != module.__name__)
        self.kept = keepable(str(path), helpers, module.__name__, watch, carried, env_unchanged)


def _is_user_file(origin: str, roots: Sequence[Path]) -> bool:
    return is_user_module(types.SimpleNamespace(__file__=origin), roots)


def import_roots(path: Path, workspace_root: Path | None) -> list[Path]:
    """Where the user's project resolves `path`'s imports: the folder above its top package (its own
    folder for a loose file, as `python file.py` has it), then the workspace root and its `src/`."""
    top = path.parent
    while (top / "__init__.py").exists() and top.parent != top:
        top = top.parent
    roots: list[Path] = []
    for r in [top] + ([workspace_root, workspace_root / "src"] if workspace_root else []):
        if r.is_dir() and r not in roots:
            roots.append(r)
    return roots


def is_user_module(module: object, roots: Sequence[Path] = ()) -> bool:
    """A module loaded from the user's files, not from an installed distribution or the stdlib.

    A file under one of the user's import roots is the user's unless a `site-packages` folder lies
    between: the workspace may itself sit inside the interpreter's prefix (`python -m venv .` in the
    project, a container's `/usr/src/app` under `/usr`), where the prefix rule alone would call every
    workspace module installed and never forget it between files."""
    file = getattr(module, "__file__", None)
    if not file:
        return False
    real = os.path.realpath(file)
    for root in roots:
        base = os.path.realpath(root)
        if any(part in _INSTALLED for part in Path(base).parts):
            continue  # an installed package's own root (a `module =` launch): site-packages is no workspace
        if real.startswith(base + os.sep):
            return not any(part in _INSTALLED for part in Path(real[len(base) + 1 :]).parts)
    if any(part in _INSTALLED for part in Path(real).parts):
        return False
    prefixes = resolved_prefixes((sys.prefix, sys.base_prefix, sys.exec_prefix))
    return not any(real == p or real.startswith(p + os.sep) for p in prefixes)


# sys.path and the roots as `file_scope` left them (None outside one): `load_module` inside it then
# finds its roots already where it would put them, and does not resolve every entry again
_placed: tuple[tuple[str, ...], tuple[str, ...]] | None = None


def _user_names(names: set[str], roots: Sequence[Path]) -> set[str]:
    return {n for n in names if n.partition(".")[0] not in _OURS and is_user_module(sys.modules.get(n), roots)}


@contextlib.contextmanager
def file_scope(roots: list[Path]) -> Iterator[None]:
    """Import roots for one file; afterwards `sys.path`, `os.environ`, the working directory and
    `sys.modules` (every module of the user's own tree that came in) are as they were, so nothing
    one file's import does reaches the next file's verdict."""
    global _placed
    saved_path = list(sys.path)
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    before = set(sys.modules)
    at = stdlib_end(sys.path)
    names = [str(r) for r in roots]
    added = [n for n in names if n not in sys.path]
    sys.path[at:at] = added
    # every root went in at the stdlib's end: `load_module` would put them exactly there again
    _placed = (tuple(sys.path), tuple(names)) if len(added) == len(names) else None
    try:
        yield
    finally:
        _placed = None
        sys.path[:] = saved_path
        for name in _user_names(set(sys.modules) - before, roots):
            sys.modules.pop(name, None)
        for name in [n for n in os.environ if n not in saved_env]:
            del os.environ[name]
        for name, value in saved_env.items():
            if os.environ.get(name) != value:
                os.environ[name] = value
        try:
            os.chdir(saved_cwd)
        except OSError:
            pass
        importlib.invalidate_caches()


def load_module(path: Path, roots: list[Path], imports: Imports) -> types.ModuleType:
    """Import the user's file fresh (its source may have changed) under a name other than __main__,
    `roots` (from `import_roots`) first among the user's folders on sys.path; its helpers too, unless
    `imports` keeps them from this file's last analysis.

    The worker calls it inside `file_scope`, which takes the roots off again; a tool that calls it
    directly keeps them."""
    names = [str(r) for r in roots]
    if _placed != (tuple(sys.path), tuple(names)):  # else `file_scope` just placed them, as here
        sys.path[:] = [p for p in sys.path if p not in names]
        at = stdlib_end(sys.path)
        sys.path[at:at] = names
    _forget_sources(roots)
    carried = imports.restore(path, roots)
    before = set(sys.modules)
    outside = (dict(os.environ), os.getcwd(), list(sys.path))
    watch = None
    try:
        with imports.watching(roots) as watch:
            module = _import_fresh(path, roots)
    finally:
        imports.loaded.update(_user_names(set(sys.modules) - before, roots))
        if carried is not None:
            imports.loaded.update(carried.modules)
        imports.read = _data_files(watch, carried)
    imports.remember(path, module, watch, carried, outside == (dict(os.environ), os.getcwd(), list(sys.path)))
    return module


DATA_FILES_FOLLOWED = 256  # past this many files read, an import's data is not followed (a dataset, not a config)


def _data_files(watch: Watch | None, carried: Kept | None) -> tuple[str, ...]:
    """The files of the user's project (under the import roots, not installed) that an import opened
    to read, itself or through helpers kept from before: a JSON of configs, a table of block sizes.
    The verdict was made from them too, so a change to one re-runs it; a missing one counts (written
    later, it may change what the import does). Folders listed are left out (an editor's swap files
    move them), and so is what a library reads elsewhere (its caches in the home folder)."""
    stamps = dict(carried.stamps) if carried is not None else {}
    roots: tuple[str, ...] = ()
    if watch is not None:
        stamps.update(watch.stamps)
        roots = tuple(os.path.abspath(r) + os.sep for r in watch.roots)
    elif carried is not None:
        roots = tuple(os.path.abspath(r) + os.sep for r in carried.roots)
    installed = tuple(f"{os.sep}{part}{os.sep}" for part in _INSTALLED)
    files = sorted(
        p for p, s in stamps.items() if s[0] != "dir" and p.startswith(roots) and not any(i in p for i in installed)
    )
    return tuple(files) if len(files) <= DATA_FILES_FOLLOWED else ()


def _forget_sources(roots: Sequence[Path]) -> None:
    """Let `inspect` (and so `@triton.jit`, which compiles a kernel from the source it reads) see the
    user's files as they are now. `linecache.checkcache` trusts a file whose size and mtime did not
    change: a same-size edit restored with its old mtime (`cp -p`, `rsync -t`, an archive) or saved
    twice within a coarse clock (HFS+, FAT, some network mounts: one or two seconds) kept the lines
    from before it, and Triton compiled the old kernel. So every file of the user's (under the
    import roots, or anywhere but an installed folder: a `PYTHONPATH` folder of theirs) is read
    again; installed code is checked by size and mtime."""
    under_roots = tuple(str(r) + os.sep for r in roots)
    for name in [n for n in linecache.cache if n.startswith(under_roots) or not _installed_source(n)]:
        linecache.cache.pop(name, None)
    linecache.checkcache()


def _installed_source(name: str) -> bool:
    """Whether a line-cache entry is installed code (or no file at all, `<string>`): by its name
    alone, as `is_user_module` tells without a root, so that a few hundred entries cost no `stat`."""
    if not os.path.isabs(name):
        return True
    if any(f"{os.sep}{part}{os.sep}" in name for part in _INSTALLED):
        return True
    prefixes = (sys.prefix, sys.base_prefix, sys.exec_prefix)
    return any(name.startswith(p + os.sep) for p in (*prefixes, *resolved_prefixes(prefixes)))


def import_module(path: Path, workspace_root: Path | None, imports: Imports | None = None) -> types.ModuleType:
    """`load_module` for a tool: the roots computed here, and a fresh `Imports` unless one is given."""
    return load_module(path, import_roots(path, workspace_root), imports if imports is not None else Imports())


def package_name(path: Path, roots: Sequence[Path]) -> str | None:
    """The dotted module name of `path` when it lies in a package under one of `roots`."""
    parts = [path.stem]
    parent = path.parent
    while (parent / "__init__.py").exists():
        parts.insert(0, parent.name)
        parent = parent.parent
    if len(parts) == 1:
        return None
    for root in roots:
        if parent.resolve() == root.resolve():
            return ".".join(parts)
    return None


def _import_fresh(path: Path, roots: list[Path]) -> types.ModuleType:
    dotted = package_name(path, roots)
    try:
        if dotted:
            sys.modules.pop(dotted, None)
            importlib.invalidate_caches()
            return importlib.import_module(dotted)
        name = loose_name(path)
        spec = importlib.util.spec_from_file_location(name, path, loader=SourceLoader(name, str(path)))
        assert spec is not None and spec.loader is not None, "a .py path always has a spec"
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, even SystemExit
        if isinstance(exc, (KeyboardInterrupt, MemoryError)):
            raise  # runaway memory is the worker's fault to report (TL050, fresh worker), not an import error
        raise ImportFailure(_user_line(exc, path), _import_message(exc), _user_files(exc, roots)) from None


def loose_name(path: Path) -> str:
    """The module name a file outside any package is imported under (never `__main__`)."""
    return "tilelens_user_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]


def _user_line(exc: BaseException, path: Path) -> int:
    if isinstance(exc, SyntaxError) and exc.filename and Path(exc.filename).resolve() == path.resolve():
        return exc.lineno or 1
    line = 1
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        try:
            if Path(frame.f_code.co_filename).resolve() == path.resolve():
                line = lineno
        except OSError:
            continue
    return line


def _user_files(exc: BaseException, roots: Sequence[Path]) -> tuple[str, ...]:
    """The user's files an import error went through (a helper that raised, the file of a syntax
    error), resolved."""
    files = {frame.f_code.co_filename for frame, _ in traceback.walk_tb(exc.__traceback__)}
    if isinstance(exc, SyntaxError) and exc.filename:
        files.add(exc.filename)
    return tuple(sorted({os.path.realpath(f) for f in files if os.path.isabs(f) and _is_user_file(f, roots)}))


def _import_message(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError):
        return (
            f"importing this module failed: no module named '{exc.name}' in the worker's Python "
            f"({sys.executable}); install it there or set the interpreter setting"
        )
    return f"importing this module failed: {type(exc).__name__}: {exc}"
