"""The analysis pipeline for one file, run inside a worker: launches → compile → graph → clients.

It imports the user's module (never as `__main__`), compiles every declared launch and autotune
config to TTIR on the host, evaluates it and runs the enabled clients. Every failure is confined to
the launch (or client) it belongs to and becomes a diagnostic; nothing here knows about LSP.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import hashlib
import importlib
import importlib.util
import linecache
import os
import re
import sys
import traceback
import types
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence, TypedDict

from tilelens_lsp.cache import CODE_HASH, ResultCache
from tilelens_lsp.clients import CLIENTS, LaunchAnalysis
from tilelens_lsp.engines import accounting, select, views as view_runs
from tilelens_lsp.engines.affine import AffineGraph
from tilelens_lsp.engines.enumerate.descriptors import DescV
from tilelens_lsp.engines.values import ArgInfo, IntV, LaunchModel, Opaque, PtrV, elem_bytes
from tilelens_lsp.compile.binding import (FakeTensor, LaunchBindingError, descriptor_arguments, element_size,
                                          fake_tensors, flat_arguments)
from tilelens_lsp.compile.compiler import (CompiledConfig, HostCompiler, compile_error_stack, compile_launch,
                                           compiler_for)
from tilelens_lsp.launches.kernels import KernelDef, find_kernels
from tilelens_lsp.launches.params import check_keywords
from tilelens_lsp.launches.scanner import directive_blocks, parse_directives
from tilelens_lsp.launches.toml import TomlError, launches_for_file
from tilelens_lsp.ttir.locs import LocTable, PathMapper, default_mapper, portable_stack
from tilelens_lsp.model import Diagnostic, FileResult, Frame, LaunchResult, LaunchSpec, TensorSpec, value_intervals
from tilelens_lsp.refusal import Refusal, fix_for
from tilelens_lsp.settings import Settings
from tilelens_lsp.ttir import reader as ttir_reader
from tilelens_lsp.paths import stdlib_end


@dataclass
class ImportFailure(Exception):
    line: int
    message: str


@dataclass
class Stats:
    compiles: int = 0
    cache_hits: int = 0
    summarized: int = 0      # launch configs the affine summary answered
    enumerated: int = 0      # ... and those the enumeration answered


@dataclass
class Engine:
    """What a warm worker keeps: a result cache and counters (the host compilers: `compiler_for`)."""

    cache: ResultCache = field(default_factory=ResultCache)
    stats: Stats = field(default_factory=Stats)

    def compiler(self, target: str) -> HostCompiler:
        return compiler_for(target)


_ENGINE = Engine()


def clear_cache() -> None:
    """Forget the results kept in memory (tests that must see every launch evaluated afresh)."""
    _ENGINE.cache = ResultCache()


def triton_version() -> str:
    import triton
    return triton.__version__


# ---------------------------------------------------------------- import


def _package_name(path: Path, roots: list[Path]) -> str | None:
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


_USER_MODULES: set[str] = set()   # modules of the user's own code that earlier imports brought in


def _is_user_module(module, roots: Sequence[Path] = ()) -> bool:
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
            continue     # an installed package's own root (a `module =` launch): site-packages is no workspace
        if real.startswith(base + os.sep):
            return not any(part in _INSTALLED for part in Path(real[len(base) + 1:]).parts)
    if any(part in _INSTALLED for part in Path(real).parts):
        return False
    prefixes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return not any(real == p or real.startswith(p + os.sep) for p in prefixes)


_INSTALLED = ("site-packages", "dist-packages")


def _forget_user_modules() -> None:
    """Drop the user's modules an earlier analysis imported (helpers, sibling modules, parent packages),
    so this import sees their current source and the modules next to *this* file, not a same-named
    module of another folder."""
    for name in _USER_MODULES:
        sys.modules.pop(name, None)
    _USER_MODULES.clear()
    importlib.invalidate_caches()


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


@contextlib.contextmanager
def file_scope(roots: list[Path]):
    """Import roots for one file; afterwards `sys.path`, `os.environ`, the working directory and
    `sys.modules` (every module of the user's own tree that came in) are as they were, so nothing
    one file's import does reaches the next file's verdict."""
    saved_path = list(sys.path)
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    before = set(sys.modules)
    at = stdlib_end(sys.path)
    sys.path[at:at] = [str(r) for r in roots if str(r) not in sys.path]
    try:
        yield
    finally:
        sys.path[:] = saved_path
        for name in set(sys.modules) - before:
            if name.partition(".")[0] not in ("tilelens_lsp", "triton") and _is_user_module(sys.modules.get(name),
                                                                                            roots):
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


def import_module(path: Path, workspace_root: Path | None):
    """Import the user's file fresh (its source may have changed) under a name other than __main__.

    Its import roots go first among the user's folders on sys.path. The worker calls it inside
    `file_scope`, which takes them off again; a tool that calls it directly keeps them."""
    roots = import_roots(path, workspace_root)
    names = [str(r) for r in roots]
    sys.path[:] = [p for p in sys.path if p not in names]
    at = stdlib_end(sys.path)
    sys.path[at:at] = names
    linecache.checkcache()
    _forget_user_modules()
    before = set(sys.modules)
    try:
        return _import_fresh(path, roots)
    finally:
        _USER_MODULES.update(n for n in set(sys.modules) - before
                             if n.partition(".")[0] not in ("tilelens_lsp", "triton")
                             and _is_user_module(sys.modules.get(n), roots))


def _import_fresh(path: Path, roots: list[Path]):
    dotted = _package_name(path, roots)
    try:
        if dotted:
            for name in [n for n in sys.modules if n == dotted]:
                del sys.modules[name]
            importlib.invalidate_caches()
            return importlib.import_module(dotted)
        name = "tilelens_user_" + hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:12]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    except BaseException as exc:  # noqa: BLE001 - user code may raise anything, even SystemExit
        if isinstance(exc, (KeyboardInterrupt, MemoryError)):
            raise  # runaway memory is the worker's fault to report (TL050, fresh worker), not an import error
        raise ImportFailure(_user_line(exc, path), _import_message(exc)) from None


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


def _import_message(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError):
        return (f"importing this module failed: no module named '{exc.name}' in the worker's Python "
                f"({sys.executable}); install it there or set the interpreter setting")
    return f"importing this module failed: {type(exc).__name__}: {exc}"


# ---------------------------------------------------------------- one launch


def _views(launch_args: dict[str, Any]) -> dict[str, TensorSpec]:
    return {n: v.spec for n, v in fake_tensors(launch_args).items()}


def _entry_arguments(func: ttir_reader.Func, bound) -> list[tuple[str, str, Any, Any]]:
    """(ssa, name, value, type) of each entry-function argument: every non-constexpr parameter in order,
    a tuple's items one by one, a descriptor as the arguments Triton lowers it to (its base and its
    shape and strides: `descriptor_arguments`). A layout we do not recognise is refused, never guessed."""
    flat = flat_arguments(bound)
    out: list[tuple[str, str, Any, Any]] = []
    i = 0
    for name, sig, value in flat:
        if not sig.startswith("tensordesc"):
            if i >= len(func.args):
                break
            ssa, ty = func.args[i]
            out.append((ssa, name, value, ty))
            i += 1
            continue
        lowered = descriptor_arguments(name, value, func.args[i:])
        if lowered is None:
            raise Refusal("tensor-descriptor", f"the entry arguments of descriptor {name} are not in a layout the "
                          "model knows")
        for v in lowered:
            ssa, ty = func.args[i]
            out.append((ssa, name, v, ty))
            i += 1
    if i != len(func.args) or len(out) != len(func.args):
        raise Refusal("tensor-descriptor" if any(sig.startswith("tensordesc") for _, sig, _ in flat) else
                      "reader-misalignment", f"the kernel's {len(func.args)} entry arguments do not line up with "
                      f"its {len(flat)} declared ones")
    return out


def _arg_values(func: ttir_reader.Func, bound, views: dict[str, TensorSpec]) -> tuple[dict, dict[str, ArgInfo]]:
    """Entry-function arguments: every non-constexpr parameter, in order."""
    import numpy as np

    values: dict[str, Any] = {}
    infos: dict[str, ArgInfo] = {}
    for ssa, name, value, ty in _entry_arguments(func, bound):
        kept = "desc<" in ty.elem         # a !tt.tensordesc (printed tdesc<...> by 3.6) the TTIR keeps
        if ty.is_ptr or kept:
            spec = views.get(name)
            if spec is None:
                values[ssa] = Opaque("pointer-provenance", f"pointer argument {name} is not a declared tensor")
                continue
            size = element_size(spec.dtype)
            infos[name] = ArgInfo(name, size, -spec.offset, spec.storage - spec.offset, value_intervals(spec.values) or None,
                                  _view_runs(spec))
            if kept:
                values[ssa] = DescV(PtrV(name, np.zeros(1, dtype=np.int64), size),
                                    tuple(IntV(np.array([int(n)]), 32) for n in value.shape),
                                    tuple(IntV(np.array([int(n)]), 64) for n in value.strides))
                continue
            values[ssa] = PtrV(name, np.zeros(1, dtype=np.int64), elem_bytes(ty.pointee))
        elif ty.is_int:
            v = int(value) if not isinstance(value, bool) else int(value)
            if ty.bits > 1:
                # the bits the kernel receives, in the graph's signless two's-complement form: an
                # unsigned argument (u32, u64: ints in [2**31, 2**32) or [2**63, 2**64)) wraps
                half = 1 << (ty.bits - 1)
                v = ((v + half) % (1 << ty.bits)) - half
            values[ssa] = IntV(np.array([v], dtype=np.int64) if ty.bits > 1 else np.array([bool(v)]), ty.bits)
        else:
            values[ssa] = Opaque("float", f"the {ty.elem} argument {name}")
    return values, infos


def _view_runs(spec: TensorSpec):
    """The runs a view covers, relative to its first element, when they are not its whole storage."""
    runs = view_runs.covered_runs(spec.shape, spec.strides, spec.storage - spec.offset)
    if runs is None:
        return None
    starts, ends = runs
    if spec.offset == 0 and starts.size == 1 and starts[0] == 0 and ends[0] >= spec.storage:
        return None
    return runs


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_PLAIN = (int, float, complex, str, bytes, bool, tuple, list, dict, frozenset, set, type(None))


def dependency_values(jit) -> str:
    """What the kernel's TTIR depends on beyond its source text, for the result cache's key.

    Triton's own `cache_key` hashes the source of the kernel and of every `@triton.jit` helper it
    calls (in any module) and the `tl.constexpr` globals they read. Other globals it only records
    (`used_global_vals`, checked at launch), and a module attribute such as `helpers.BLOCK` it does
    not track at all. This adds the current value of every global name and attribute chain that the
    kernel or any of its helpers reads, found by walking their syntax trees as Triton's
    `DependenciesFinder` does."""
    seen: set[int] = set()
    values: list[str] = []

    def visit(fn) -> None:
        if id(fn) in seen:
            return
        seen.add(id(fn))
        try:
            src = getattr(fn, "src", None)
            reads = _global_reads(src) if isinstance(src, str) else _reads_of(fn.parse())
            scope = fn.get_capture_scope() if hasattr(fn, "get_capture_scope") else fn.__globals__
        except Exception:  # noqa: BLE001 - a helper we cannot read: its identity at least
            values.append(f"{getattr(fn, '__qualname__', '?')}: unreadable")
            return
        for name, chain in reads:
            if name not in scope:
                continue
            value = scope[name]
            for attr in chain:
                try:
                    value = getattr(value, attr)
                except Exception:  # noqa: BLE001 - user objects may raise anything
                    value = "<missing>"
                    break
            record(fn, ".".join([name, *chain]), value)

    def record(fn, label: str, value: Any) -> None:
        if isinstance(value, types.ModuleType):
            return
        if hasattr(value, "parse") and hasattr(value, "cache_key") and hasattr(value, "__globals__"):
            visit(value)   # a @triton.jit helper: its own reads count too
            return
        if not isinstance(value, _PLAIN) and type(value).__name__ not in ("constexpr", "dtype") and callable(value):
            return   # functions, classes, Triton builtins: their identity is in Triton's cache_key
        text = _ADDRESS.sub("", repr(value))
        values.append(f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', '')}:{label}={text}")

    visit(jit)
    return hashlib.sha256("\n".join(sorted(set(values))).encode()).hexdigest()


@functools.lru_cache(maxsize=512)
def _global_reads(src: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The non-local names a kernel's source reads, each with the attribute chain read from it: found
    once per source text (a save re-imports the module, but the kernel's source rarely changes)."""
    import textwrap
    return _reads_of(ast.parse(textwrap.dedent(src)))


def _reads_of(tree: ast.AST) -> tuple[tuple[str, tuple[str, ...]], ...]:
    local = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    local |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    out = []
    for node in ast.walk(tree):
        chain: list[str] = []
        inner = node
        while isinstance(inner, ast.Attribute):
            chain.insert(0, inner.attr)
            inner = inner.value
        if isinstance(inner, ast.Name) and not isinstance(inner.ctx, ast.Store) and inner.id not in local:
            out.append((inner.id, tuple(chain)))
    return tuple(out)


def analyze_launch(launch: LaunchSpec, kernel_obj, settings: Settings, mapper: PathMapper,
                   source_hash: str) -> list[LaunchResult]:
    """Every config of one declared launch, deduplicated by the specialization it compiles to."""
    results: list[LaunchResult] = []
    seen: set[str] = set()
    known: dict[int, tuple[str, LaunchResult | None]] = {}   # id(config) -> (result key, cached result)
    depends: list[str] = []

    def verdict_known(c: CompiledConfig) -> bool:
        """Asked before each compile: a config whose result key was seen or is cached is not compiled."""
        if not depends:
            depends.append(_dependencies(c.jit))
        key = _result_key(c, depends[0], settings, mapper, source_hash)
        cached = None if key in seen else _ENGINE.cache.get(key)
        known[id(c)] = (key, cached)
        return key in seen or cached is not None

    for c in compile_launch(kernel_obj, launch, settings.target, skip=verdict_known):
        if c.failed_at in ("configs", "bind", "grid"):
            results.append(_binding_error(launch, c))
            continue
        key, cached = known[id(c)]
        if key in seen:
            continue
        seen.add(key)
        if cached is not None:
            _ENGINE.stats.cache_hits += 1
            results.append(_relabel(cached, launch, c.config))
            continue
        result = _compile_and_analyze(launch, c, settings, mapper)
        _ENGINE.cache.put(key, result)
        results.append(result)
    return results


def _binding_error(launch: LaunchSpec, c: CompiledConfig) -> LaunchResult:
    if isinstance(c.error, LaunchBindingError):
        return _directive_error(launch, str(c.error), c.config)
    what = "evaluating the launch's configs" if c.failed_at == "configs" else "binding the launch"
    return _directive_error(launch, f"{what} failed: {type(c.error).__name__}: {c.error}", c.config)


def _dependencies(jit) -> str:
    try:
        return dependency_values(jit)
    except Exception as exc:  # noqa: BLE001 - no key we can trust: never reuse a cached verdict
        return f"uncacheable {os.urandom(8).hex()} {exc}"


def _result_key(c: CompiledConfig, depends: str, settings: Settings, mapper: PathMapper, source_hash: str) -> str:
    jit, bound, grid = c.jit, c.bound, c.grid
    assert bound is not None, "skip is asked only of a config that bound"
    # the mapper and the kernel's file decide the portable paths a result holds
    key = hashlib.sha256(f"{CODE_HASH}|{source_hash}|{jit.cache_key}|{depends}|{bound.key}|{grid}|"
                         f"{settings.target}|{triton_version()}|"
                         f"{mapper}|{getattr(getattr(jit.fn, '__code__', None), 'co_filename', '')}|"
                         f"{settings.clients}|{settings.enumeration_budget}|{select.engine_mode()}|"
                         f"{sorted(_views(bound.arguments).items())}".encode()).hexdigest()
    # the specialization key compiles alike, but the verdict depends on every scalar's value too
    return hashlib.sha256(f"{key}|{_scalar_values(bound.arguments)}".encode()).hexdigest()


def _scalar_values(arguments: dict[str, Any]) -> str:
    return repr(sorted((name, repr(v)) for name, v in arguments.items() if not isinstance(v, FakeTensor)))


def _relabel(result: LaunchResult, launch: LaunchSpec, config: dict) -> LaunchResult:
    return replace(result, kernel=launch.kernel, line=launch.line, config=config)


def _directive_error(launch: LaunchSpec, message: str, config: dict | None = None) -> LaunchResult:
    # a toml launch's line is a line of the toml: `with_origin` gives the diagnostic the toml's frame
    diag = Diagnostic("TL020", f"bad launch of {launch.kernel}: {message}", launch.line, 1)
    return LaunchResult(launch.kernel, launch.line, config or {}, "directive-error", diagnostics=(diag,))


def with_origin(result: LaunchResult, launch: LaunchSpec, origin: Frame) -> LaunchResult:
    """`result` naming where its launch is declared; a toml launch's TL020 placed in the toml (its
    line is the toml's), its message naming the toml line for clients that show it in the kernel file."""
    result = replace(result, origin=origin)
    if launch.origin == "comment":
        return result
    where = f"{origin.path}:{origin.line}"
    moved = tuple(replace(d, message=f"{where}: {d.message}", stack=(origin,), line=origin.line, column=1)
                  if d.code == "TL020" and not d.stack else d for d in result.diagnostics)
    return replace(result, diagnostics=moved)


class _ResultBase(TypedDict, total=False):
    """The LaunchResult fields every verdict of one compiled config shares."""
    kernel: str
    line: int
    config: dict[str, Any]
    grid: tuple[int, ...]
    engine: str


def _compile_and_analyze(launch: LaunchSpec, c: CompiledConfig, settings: Settings,
                         mapper: PathMapper) -> LaunchResult:
    """The verdicts of one compiled config (`c.module`, or the compile error as TL010)."""
    _ENGINE.stats.compiles += 1
    bound, grid, mlir_module = c.bound, c.grid, c.module
    # analyze_launch hands over only configs that bound and have a grid
    assert bound is not None and grid is not None
    base: _ResultBase = {"kernel": launch.kernel, "line": launch.line, "config": c.config, "grid": grid}
    if c.failed_at == "compile":   # CompilationError and whatever Triton raises
        assert c.error is not None, "a failed step records its exception"
        stack, message = compile_error_stack(c.error, mapper)
        line, col = (stack[0].line, stack[0].column) if stack else (launch.line, 1)
        diag = Diagnostic("TL010", f"Triton compile error: {message}", line, col, stack=stack)
        return LaunchResult(status="compile-error", diagnostics=(diag,), **base)
    text = mlir_module.str()
    table = LocTable(text)

    def stack_of(loc: str, call_stack: tuple[str, ...]) -> tuple[Frame, ...]:
        raw = table.resolve(loc) if loc else ()
        for site in reversed(call_stack):
            raw = raw + table.resolve(site)
        return portable_stack(raw, mapper)

    tensors = _views(bound.arguments)
    try:
        module = ttir_reader.parse_module(text)
        ttir_reader.check_alignment(module, mlir_module)
        views = _views(bound.arguments)
        values, infos = _arg_values(module.funcs[module.entry], bound, views)
        graph = select.analyze(LaunchModel(module, values, infos, grid, settings.enumeration_budget))
        _check_ranges_hold(graph, infos)
        if isinstance(graph, AffineGraph):
            _ENGINE.stats.summarized += 1
        else:
            _ENGINE.stats.enumerated += 1
        base["engine"] = select.engine_name(graph)
    except Refusal as refusal:
        return LaunchResult(status="refused", diagnostics=(_refusal_diag(refusal, stack_of, launch, tensors),), **base)
    except Exception as exc:  # noqa: BLE001 - a bug of ours costs this launch, never the file
        diag = Diagnostic("TL050", f"the analysis failed on this launch: {type(exc).__name__}: {exc}",
                          launch.line, 1, kind="graph")
        return LaunchResult(status="refused", diagnostics=(diag,), **base)
    locked = any(op.name == "tt.atomic_cas" for f in module.funcs.values() for op in accounting.region_ops(f.body))
    analysis = LaunchAnalysis(list(graph.sites.values()), graph.width_obligations(), infos, views, stack_of,
                              grid, locked)
    accesses: list = []
    diagnostics: list[Diagnostic] = []
    notes: list[str] = list(getattr(graph, "notes", ()))
    if graph.truncated is not None:
        # what was found before the budget ran out is definite; the footprint would be partial
        diagnostics.append(_refusal_diag(graph.truncated, stack_of, launch, tensors))
    elif grid[0] * grid[1] * grid[2]:     # a grid of no program runs nothing: nothing to account for
        # the invariant behind "clean": every reachable memory op has a site or a proof it never runs
        for op in accounting.unvisited(module, graph.sites, graph.unreachable)[:3]:
            diagnostics.append(_refusal_diag(Refusal(
                "unvisited", f"{op.name} was never examined by the analysis and is not provably unreachable",
                op.loc), stack_of, launch, tensors))
    for site in analysis.sites:
        if site.refusal is not None:
            diagnostics.append(_refusal_diag(site.refusal, stack_of, launch, tensors))
    for name in settings.clients:
        if name == "footprint" and graph.truncated is not None:
            continue  # a partial enumeration is no footprint
        client = CLIENTS[name]()
        try:
            out = client.run(analysis)
        except Exception as exc:  # noqa: BLE001 - one client's bug costs no other verdict
            diagnostics.append(Diagnostic("TL050", f"the {name} client failed on this launch: "
                                          f"{type(exc).__name__}: {exc}", launch.line, 1, kind=name))
            continue
        accesses.extend(out.accesses)
        diagnostics.extend(out.diagnostics)
        notes.extend(out.notes)
    # a refusal, or a client that crashed (TL050), leaves something unexamined: never "analyzed"
    status = "refused" if any(d.code in ("TL030", "TL050") for d in diagnostics) else "analyzed"
    ranges = {name: [list(v) if isinstance(v, tuple) else v for v in spec.values]
              for name, spec in views.items() if spec.values}
    return LaunchResult(status=status, accesses=tuple(accesses), diagnostics=tuple(_dedupe(diagnostics)),
                        value_ranges=ranges, notes=tuple(notes), **base)


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple] = set()
    out = []
    for d in diags:
        key = (d.code, d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _refusal_diag(refusal: Refusal, stack_of, launch: LaunchSpec,
                  tensors: dict[str, TensorSpec] | None = None) -> Diagnostic:
    """The TL030 of `refusal`, with its fix (refusal.fix_for) from the launch's `tensors`."""
    stack = stack_of(refusal.loc, ()) if refusal.loc else ()
    line, col = (stack[0].line, stack[0].column) if stack else (launch.line, 1)
    unranged = [(name, t.dtype, t.shape) for name, t in (tensors or {}).items()
                if t.values is None and t.dtype.startswith(("i", "u")) and t.dtype != "i1"]
    fix = fix_for(refusal.kind, refusal.message, unranged)
    return Diagnostic("TL030", f"not analyzed: {refusal.kind}: {refusal.message}" + (f". {fix}" if fix else ""),
                      line, col, stack=stack, kind=refusal.kind)


# ---------------------------------------------------------------- one file


def _check_ranges_hold(graph: Any, infos: dict[str, ArgInfo]) -> None:
    """A declared value range holds for the data the launch is given, not for what the kernel itself
    writes there: a tensor with `.values(...)` that the kernel stores to (or updates atomically) and
    also loads from may be read back outside its range, so the launch is refused rather than analysed
    with a range that no longer holds."""
    written = {s.arg for s in graph.sites.values() if s.op != "load"}
    read = {s.arg for s in graph.sites.values() if s.op == "load"}
    for name in sorted(written & read):
        info = infos.get(name)
        if info is not None and info.values is not None:
            raise Refusal("ranged-tensor-written",
                          f"the kernel writes to {name} and loads from it, so its declared value range "
                          f"(`.values(...)`) need not hold for what it loads back: not analysed with that range "
                          f"(declare the values a separate, read-only tensor holds, or leave {name} unranged)")


def declared_launches(path: Path, text: str, workspace_root: Path | None, config_file: Path | None = None):
    """(the file's kernels, its directive launches, its directive errors, its toml launches)."""
    kernels, directive_launches, errors = _directives(text)
    known = {k.name for k in kernels}
    launches, misnamed = check_keywords(list(kernels), list(directive_launches))
    toml = launches_for_file(path, workspace_root, config_file, known or None)
    if toml.launches and toml.config_path is not None:    # a toml launch's keywords too, at its toml line
        toml.launches, bad = check_keywords(list(kernels), toml.launches)
        toml.errors.extend(TomlError(toml.config_path, e.line, f"`launch`: {e.message}", e.column, e.kernel)
                           for e in bad)
    return list(kernels), list(launches), list(errors) + misnamed, toml


@functools.lru_cache(maxsize=4)
def _directives(text: str) -> tuple[tuple[KernelDef, ...], tuple[LaunchSpec, ...], tuple]:
    """The file's kernels, directive launches and directive errors: parsed once per text (a save
    analysed in parts, or planned and then analysed, reads the same text several times), and
    evaluated once per set of directives (a save that changed code, not directives, reuses them)."""
    kernels = find_kernels(text)
    known = frozenset(k.name for k in kernels)
    launches, errors = _evaluated(tuple(directive_blocks(text)), known)
    return tuple(kernels), launches, errors


_EVALUATED: dict[tuple, tuple[tuple[LaunchSpec, ...], tuple]] = {}


def _evaluated(blocks: tuple, known: frozenset[str]) -> tuple[tuple[LaunchSpec, ...], tuple]:
    """The launches and errors of these directive blocks (their lines, columns and text: all that
    `parse_directives` reads of a file) for these kernel names; the last few sets kept."""
    key = (blocks, known)
    if key not in _EVALUATED:
        text = _blocks_text(blocks)
        launches, errors = parse_directives(text, set(known) or None)
        if len(_EVALUATED) >= 8:
            _EVALUATED.pop(next(iter(_EVALUATED)))
        _EVALUATED[key] = (tuple(launches), tuple(errors))
    return _EVALUATED[key]


def _blocks_text(blocks: tuple) -> str:
    """A file of only these directive lines, each at its own line and column."""
    lines: dict[int, str] = {}
    for block in blocks:
        for line, col, text in block:
            lines[line] = " " * max(0, col - 10) + "#tilelens:" + text
    return "\n".join(lines.get(i, "") for i in range(1, max(lines, default=0) + 1)) + "\n"


def unlaunched(kernels: list[KernelDef], launches: list[LaunchSpec], errors: list) -> list[KernelDef]:
    """The kernels TL100 names: no launch (nor a broken directive) names them, and they are no helper."""
    launched = {launch.kernel for launch in launches} | {e.kernel for e in errors if e.kernel}
    return [k for k in kernels if k.name not in launched and not k.is_helper]


def analyze_path(path: Path | str, workspace_root: Path | str | None = None, settings: Settings | None = None,
                 config_file: Path | None = None, extra_launches: list[LaunchSpec] | None = None,
                 select: list[int] | None = None, file_level: bool = True,
                 on_event: Callable[[str, dict[str, Any]], None] | None = None) -> FileResult:
    """Analyse every declared launch of one file (or, with `select`, the launches of those indices, in
    that order; `file_level=False` leaves out the file's own diagnostics, which another part reports).

    `on_event` hears ("ready", {"launches": [[index, kernel, line], ...], "diagnostics": [...]}) once
    the module is imported, then ("launch", {"index": i, "results": [...]}) after each launch: the
    worker streams them so that its parent times each launch, not the file."""
    path = Path(path).resolve()
    root = Path(workspace_root).resolve() if workspace_root else None
    settings = settings or Settings()
    mapper = default_mapper(root)
    portable = mapper.portable(str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return FileResult(portable, (), (Diagnostic("TL010", f"cannot read this file: {exc}", 1, 1),))
    settings, launches, file_diags, toml_file = _file_launches(path, text, root, settings, config_file, mapper,
                                                    extra_launches)
    if not file_level:
        file_diags = []
    chosen = list(range(len(launches))) if select is None else [i for i in select if 0 <= i < len(launches)]
    if not chosen:
        return _located(FileResult(portable, (), tuple(file_diags)), root, mapper)
    with file_scope(import_roots(path, root)):
        try:
            module = import_module(path, root)
        except ImportFailure as failure:
            file_diags.append(Diagnostic("TL010", failure.message, failure.line, 1))
            return _located(FileResult(portable, (), tuple(file_diags)), root, mapper)
        if on_event is not None:
            on_event("ready", {"path": portable,
                               "launches": [[i, launches[i].kernel, launches[i].line] for i in chosen],
                               "diagnostics": [d.to_json() for d in file_diags]})
        source_hash = hashlib.sha256(text.encode()).hexdigest()
        results: list[LaunchResult] = []
        for i in chosen:
            launch = launches[i]
            kernel_obj = getattr(module, launch.kernel, None)
            if kernel_obj is None:
                found = [_directive_error(launch, f"the module defines no kernel named '{launch.kernel}'")]
            else:
                found = analyze_launch(launch, kernel_obj, settings, mapper, source_hash)
            found = [with_origin(r, launch, launch_origin(launch, portable, mapper, toml_file)) for r in found]
            results.extend(found)
            if on_event is not None:
                on_event("launch", {"index": i, "results": [r.to_json() for r in found]})
    return _located(FileResult(portable, tuple(results), tuple(file_diags)), root, mapper)


def launch_origin(launch: LaunchSpec, portable: str, mapper: PathMapper, toml_file: Path | None) -> Frame:
    """Where `launch` is declared: its directive's line in the file, or its table's line in the toml
    (`launch.origin` names the kind of toml, `toml_file` is the file)."""
    if launch.origin == "comment" or toml_file is None:
        return Frame(portable, launch.line, 1)
    return Frame(toml_path(mapper, toml_file), launch.line, 1)


def _file_launches(path: Path, text: str, root: Path | None, settings: Settings, config_file: Path | None,
                   mapper: PathMapper, extra: list[LaunchSpec] | None = None,
                   ) -> tuple[Settings, list[LaunchSpec], list[Diagnostic], Path | None]:
    """(the settings with the toml's target, the file's launches in order, its file-level diagnostics,
    the toml file its toml launches come from)."""
    file_diags: list[Diagnostic] = []
    kernels, launches, errors, toml = declared_launches(path, text, root, config_file)
    if toml.target and not settings.target_pinned and settings.target == Settings().target:
        settings = replace(settings, target=toml.target)
    launches = list(launches) + list(toml.launches) + list(extra or [])
    for err in errors:
        file_diags.append(Diagnostic("TL020", err.message, err.line, err.column, end_line=err.end_line or None))
    for err in toml.errors:
        # the table lives in a toml file: its line is the toml's (the stack's one frame), the message
        # names it for a client that shows it in the kernel file
        where = f"{toml_path(mapper, err.path)}:{err.line}:{err.column}"
        file_diags.append(Diagnostic("TL020", f"{where}: {err.message}", err.line, err.column,
                                     stack=(Frame(toml_path(mapper, err.path), err.line, err.column),)))
    for k in unlaunched(kernels, launches, list(errors) + list(toml.errors)):
        file_diags.append(Diagnostic(
            "TL100", f"{k.name} has no declared launch, so it is not checked: the quick fix \"Declare an "
            f"example launch\" (or `tilelens-lsp suggest {mapper.portable(str(path))}`) writes one that compiles, and "
            "`tilelens-lsp capture -- COMMAND` records the launches a real run makes",
            k.line, k.column))
    return settings, launches, file_diags, toml.config_path


def plan_path(path: Path | str, workspace_root: Path | str | None = None, settings: Settings | None = None,
              config_file: Path | None = None) -> dict[str, Any]:
    """What `analyze_path` would analyse, without importing anything: the file's portable path and, per
    launch, its index, kernel, line, origin and a cost estimate (its autotune configs, read from the
    source). A parent splits a file's launches between workers, and shards, by these."""
    path = Path(path).resolve()
    root = Path(workspace_root).resolve() if workspace_root else None
    mapper = default_mapper(root)
    portable = mapper.portable(str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {"path": portable, "launches": []}
    _, launches, _, _ = _file_launches(path, text, root, settings or Settings(), config_file, mapper)
    weights = config_counts(text)
    return {"path": portable, "launches": [
        {"index": i, "kernel": launch.kernel, "line": launch.line,
         "origin": launch.origin if launch.origin == "comment" else mapper.portable(launch.origin),
         "weight": weights.get(launch.kernel, 1)} for i, launch in enumerate(launches)]}


def config_counts(text: str) -> dict[str, int]:
    """Per function of the file, how many autotune configs its decorators list (a literal list is
    counted; configs computed at run time count as 8): the cost estimate `plan_path` gives."""
    from tilelens_lsp.launches.kernels import parse_file
    tree = parse_file(text)
    out: dict[str, int] = {}
    if tree is None:
        return out
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for dec in fn.decorator_list:
            if not isinstance(dec, ast.Call) or getattr(dec.func, "attr", getattr(dec.func, "id", "")) != "autotune":
                continue
            configs = next((k.value for k in dec.keywords if k.arg == "configs"), dec.args[0] if dec.args else None)
            out[fn.name] = len(configs.elts) if isinstance(configs, (ast.List, ast.Tuple)) else 8
    return out


def toml_path(mapper: PathMapper, path: Path) -> str:
    """A toml config's portable path, or its absolute path where the portable one would be a bare
    name no root resolves (a `--config /tmp/x.toml` outside the workspace): a path a user can open."""
    portable = mapper.portable(str(path))
    found = mapper.absolute(portable)
    return portable if found and os.path.realpath(found) == os.path.realpath(path) else str(Path(path).resolve())


def _located(result: FileResult, root: Path | None, mapper: PathMapper) -> FileResult:
    return replace(result, absolute_paths=absolute_paths(result, root, mapper))


def absolute_paths(result: FileResult, root: Path | None, mapper: PathMapper) -> dict[str, str]:
    """The absolute file behind each portable path of `result` that is not the workspace's (an
    installed module's importable path, Triton's `triton/...`), found where the mapper found it."""
    named = {result.path} | {f.path for d in result.all_diagnostics() for f in d.stack}
    named |= {launch.origin.path for launch in result.launches if launch.origin is not None}
    out: dict[str, str] = {}
    for portable in sorted(p for p in named if p):
        if root is not None and (root / portable).is_file():
            continue
        found = mapper.absolute(portable)
        if found:
            out[portable] = found
    return out

