"""One declared launch of an imported module, analysed: every config compiled (unless its verdict is
cached), read, evaluated by an engine and run through the enabled clients.

Every failure is confined to the config (or client) it belongs to and becomes a diagnostic: a bad
binding a TL020, a compile error a TL010, a refusal a TL030, a bug of ours a TL050. The file around
the launch (its import, its directives, where its results are placed) is `file.py`'s.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, TypedDict

from tilelens_lsp.clients import CLIENTS, LaunchAnalysis
from tilelens_lsp.compile.binding import FakeTensor, LaunchBindingError
from tilelens_lsp.compile.compiler import CompiledConfig, compile_error_stack, compile_launch
from tilelens_lsp.engines import accounting, select
from tilelens_lsp.engines.model import build_model, launch_tensors
from tilelens_lsp.engines.values import LaunchModel
from tilelens_lsp.model import Diagnostic, Frame, LaunchResult, LaunchSpec, TensorSpec
from tilelens_lsp.pipeline.keys import ResultKey, dependencies, scalar_values, without_addresses
from tilelens_lsp.pipeline.warm import WarmState
from tilelens_lsp.refusal import Refusal, fix_for
from tilelens_lsp.settings import Settings
from tilelens_lsp.ttir import reader as ttir_reader
from tilelens_lsp.ttir.locs import LocTable, PathMapper, portable_stack


def triton_version() -> str:
    import triton

    return triton.__version__


def analyze_launch(
    launch: LaunchSpec, kernel_obj: Any, settings: Settings, mapper: PathMapper, source_hash: str, state: WarmState
) -> list[LaunchResult]:
    """Every config of one declared launch, deduplicated by the specialization it compiles to; a
    verdict `state` holds is reused, a new one kept there."""
    results = [r for _, r in analyze_configs(launch, kernel_obj, settings, mapper, source_hash, state)]
    state.cache.flush()
    return results


def analyze_configs(
    launch: LaunchSpec,
    kernel_obj: Any,
    settings: Settings,
    mapper: PathMapper,
    source_hash: str,
    state: WarmState,
    claim: Callable[[int], bool] | None = None,
    count: Callable[[int], None] | None = None,
    answered: Callable[[int, LaunchResult], None] | None = None,
) -> list[tuple[int, LaunchResult]]:
    """`analyze_launch`'s results, each with the index of the config it answers.

    Several workers may share one launch's configs: each binds every config and keys it (cheap, and
    the same in every worker, so all agree which configs repeat an earlier one's specialization), and
    answers a config that repeats none only when `claim(index)` grants it. Workers that claim from one
    shared set answer every config exactly once between them. `count(n)` hears how many configs the
    launch has, before the first is claimed (how many workers could still help). `answered(i, r)`
    hears each config this call answers, as it is answered, when the launch has more than one (the
    worker streams it: its timeout is per config, and a later config that hangs costs the configs
    answered before it nothing)."""
    results: list[tuple[int, LaunchResult]] = []
    seen: set[str] = set()
    known: dict[int, tuple[str, LaunchResult | None]] = {}  # id(bound launch) -> (result key, cached result)
    keyless: dict[int, Exception] = {}  # id(bound launch) -> why Triton could not key the kernel
    shared: dict[str, Any] = {}  # what every config of the launch shares: its tensors, the kernel's dependencies
    mine: dict[int, bool] = {}  # config index -> claimed by this call
    at = [0]  # the index of the config compile_launch is producing (it asks `verdict_known` first)

    def owned(index: int) -> bool:
        if index not in mine:
            mine[index] = claim is None or claim(index)
        return mine[index]

    def verdict_known(c: CompiledConfig) -> bool:
        """Asked before each compile: a config whose result key was seen or is cached is not compiled
        (nor one that another worker claimed)."""
        if not shared:
            shared["tensors"] = launch_tensors([p.name for p in c.jit.params], launch)
            shared["depends"] = dependencies(c.jit)
        try:
            key = result_key(c, shared["tensors"], shared["depends"], settings, mapper, source_hash).digest()
        except Exception as exc:  # noqa: BLE001 - Triton's cache key walks the user's globals
            # a real launch computes this key before it compiles and fails the same way (the kernel
            # references a function Triton cannot call): this config's compile error, never compiled
            keyless[id(c.bound)] = RuntimeError(without_addresses(str(exc)))  # the same text every run
            known[id(c.bound)] = (f"keyless config {at[0]}", None)
            return True
        first = key not in seen
        cached = state.cache.get(key) if first and owned(at[0]) else None
        known[id(c.bound)] = (key, cached)
        return not first or cached is not None or not owned(at[0])

    configs = [0]

    def counted(n: int) -> None:
        configs[0] = n
        if count is not None:
            count(n)

    def heard(index: int, result: LaunchResult) -> None:
        if answered is not None and configs[0] > 1:  # a launch of one config is answered by its launch
            answered(index, result)

    for c in compile_launch(kernel_obj, launch, settings.target, skip=verdict_known, count=counted):
        index = at[0]
        at[0] += 1
        if c.failed_at in ("configs", "bind", "grid"):
            if owned(index):
                results.append((index, _binding_error(launch, c)))
                heard(*results[-1])
            continue
        key, cached = known[id(c.bound)]
        if key in seen:
            continue
        seen.add(key)
        if not owned(index):
            continue
        failed = keyless.get(id(c.bound))
        if failed is not None:
            keyed_out = replace(c, error=failed, failed_at="compile")
            result = compile_and_analyze(launch, keyed_out, shared["tensors"], settings, mapper, state)
        elif cached is not None:
            state.stats.cache_hits += 1
            result = _relabel(cached, launch, c.config)
        else:
            result = compile_and_analyze(launch, c, shared["tensors"], settings, mapper, state)
            state.cache.put(key, result)
        results.append((index, result))
        heard(index, result)
    return results


def result_key(
    c: CompiledConfig, tensors: dict[str, TensorSpec], depends: str, settings: Settings, mapper: PathMapper, source_hash: str
) -> ResultKey:
    """Everything the verdict of the bound config `c` depends on."""
    jit, bound, grid = c.jit, c.bound, c.grid
    assert bound is not None and grid is not None, "skip is asked only of a config that bound"
    return ResultKey(
        source_hash=source_hash,
        kernel_key=str(jit.cache_key),
        depends=depends,
        specialization=bound.key,
        grid=grid,
        target=settings.target,
        triton=triton_version(),
        # the mapper and the kernel's file decide the portable paths a result holds
        mapper=str(mapper),
        kernel_file=getattr(getattr(jit.fn, "__code__", None), "co_filename", ""),
        clients=tuple(settings.clients),
        budget=settings.enumeration_budget,
        engine_mode=select.engine_mode(),
        tensors=tuple(sorted(tensors.items())),
        # the specialization key compiles alike, but the verdict depends on every scalar's value too
        scalars=scalar_values(bound.arguments, FakeTensor),
    )


def _binding_error(launch: LaunchSpec, c: CompiledConfig) -> LaunchResult:
    if isinstance(c.error, LaunchBindingError):
        return directive_error(launch, str(c.error), c.config)
    what = "evaluating the launch's configs" if c.failed_at == "configs" else "binding the launch"
    return directive_error(launch, f"{what} failed: {type(c.error).__name__}: {c.error}", c.config)


def _relabel(result: LaunchResult, launch: LaunchSpec, config: dict) -> LaunchResult:
    return replace(result, kernel=launch.kernel, line=launch.line, config=config)


def directive_error(launch: LaunchSpec, message: str, config: dict | None = None) -> LaunchResult:
    """A TL020 for `launch`: its directive (or toml table) does not describe a launch of the kernel."""
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
    moved = tuple(
        replace(d, message=f"{where}: {d.message}", stack=(origin,), line=origin.line, column=1)
        if d.code == "TL020" and not d.stack
        else d
        for d in result.diagnostics
    )
    return replace(result, diagnostics=moved)


class _ResultBase(TypedDict, total=False):
    """The LaunchResult fields every verdict of one compiled config shares."""

    kernel: str
    line: int
    config: dict[str, Any]
    grid: tuple[int, ...]
    engine: str


def compile_and_analyze(
    launch: LaunchSpec,
    c: CompiledConfig,
    tensors: dict[str, TensorSpec],
    settings: Settings,
    mapper: PathMapper,
    state: WarmState,
) -> LaunchResult:
    """The verdicts of one compiled config (`c.module`, or the compile error as TL010); `tensors` are the
    launch's, by the name each pointer has in the TTIR (`launch_tensors`)."""
    state.stats.compiles += 1
    bound, grid, mlir_module = c.bound, c.grid, c.module
    # analyze_launch hands over only configs that bound and have a grid
    assert bound is not None and grid is not None
    base: _ResultBase = {"kernel": launch.kernel, "line": launch.line, "config": c.config, "grid": grid}
    if c.failed_at == "compile":  # CompilationError and whatever Triton raises
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

    try:
        module = ttir_reader.parse_module(text)
        ttir_reader.check_alignment(module, mlir_module)
        model = build_model(module, bound, tensors, grid, settings.enumeration_budget)
        answer = select.analyze(model)
        _check_ranges_hold(answer.graph, model)
        if answer.engine == "affine":
            state.stats.summarized += 1
        else:
            state.stats.enumerated += 1
        base["engine"] = answer.engine
    except Refusal as refusal:
        return LaunchResult(status="refused", diagnostics=(refusal_diag(refusal, stack_of, launch, tensors),), **base)
    except Exception as exc:  # noqa: BLE001 - a bug of ours costs this launch, never the file
        diag = Diagnostic(
            "TL050", f"the analysis failed on this launch: {type(exc).__name__}: {exc}", launch.line, 1, kind="graph"
        )
        return LaunchResult(status="refused", diagnostics=(diag,), **base)
    result = _verdicts(answer.graph, answer.notes, module, model, tensors, stack_of, grid, launch, settings, base)
    if answer.replaced is not None:
        # the grid engine stands in for an enumeration that stopped at its budget; where that enumeration
        # showed something concretely before it stopped (an out-of-bounds, an overflow, a race) that the
        # grid engine's answer does not have, its verdict stands, refusal and all, as it did before,
        # with the definite findings of the grid engine's programs beside it (the enumeration stopped
        # before it reached them)
        stopped = _verdicts(answer.replaced, (), module, model, tensors, stack_of, grid, launch, settings, base)
        shown = {(d.code, d.line) for d in stopped.diagnostics if d.code in _DEFINITE}
        if shown - {(d.code, d.line) for d in result.diagnostics}:
            more = [d for d in result.diagnostics if d.code in _DEFINITE and (d.code, d.line) not in shown]
            return replace(stopped, engine="enumerate", diagnostics=tuple(_dedupe([*stopped.diagnostics, *more])))
    return result


_DEFINITE = frozenset({"TL001", "TL003", "TL004", "TL005"})


def _verdicts(
    graph: select.Engine,
    engine_notes: tuple[str, ...],
    module: ttir_reader.Module,
    model: LaunchModel,
    tensors: dict[str, TensorSpec],
    stack_of: Callable[[str, tuple[str, ...]], tuple[Frame, ...]],
    grid: tuple[int, int, int],
    launch: LaunchSpec,
    settings: Settings,
    base: _ResultBase,
) -> LaunchResult:
    """The launch's result from one engine's answer: its refusals, its unvisited ops and the clients'
    verdicts."""
    locked = any(op.name == "tt.atomic_cas" for f in module.funcs.values() for op in accounting.region_ops(f.body))
    analysis = LaunchAnalysis(
        list(graph.sites.values()), graph.width_obligations(), model.args, tensors, stack_of, grid, locked
    )
    diagnostics: list[Diagnostic] = []
    if graph.truncated is not None:
        # what was found before the budget ran out is definite; the footprint would be partial
        diagnostics.append(refusal_diag(graph.truncated, stack_of, launch, tensors))
    elif grid[0] * grid[1] * grid[2]:  # a grid of no program runs nothing: nothing to account for
        # the invariant behind "clean": every reachable memory op has a site or a proof it never runs
        for op in accounting.unvisited(module, graph.sites, graph.unreachable)[:3]:
            diagnostics.append(
                refusal_diag(
                    Refusal(
                        "unvisited", f"{op.name} was never examined by the analysis and is not provably unreachable", op.loc
                    ),
                    stack_of,
                    launch,
                    tensors,
                )
            )
    for site in analysis.sites:
        if site.refusal is not None:
            diagnostics.append(refusal_diag(site.refusal, stack_of, launch, tensors))
    accesses, found, notes = run_clients(analysis, settings, launch, partial=graph.truncated is not None)
    diagnostics.extend(found)
    # a refusal, or a client that crashed (TL050), leaves something unexamined: never "analyzed"
    status = "refused" if any(d.code in ("TL030", "TL050") for d in diagnostics) else "analyzed"
    ranges = {
        name: [list(v) if isinstance(v, tuple) else v for v in spec.values] for name, spec in tensors.items() if spec.values
    }
    return LaunchResult(
        status=status,
        accesses=tuple(accesses),
        diagnostics=tuple(_dedupe(diagnostics)),
        value_ranges=ranges,
        notes=engine_notes + tuple(notes),
        **base,
    )


def run_clients(
    analysis: LaunchAnalysis, settings: Settings, launch: LaunchSpec, partial: bool
) -> tuple[list, list[Diagnostic], list[str]]:
    """(accesses, diagnostics, notes) of the enabled clients on one launch; a client that fails is a
    TL050 naming it, and costs no other client's verdict. `partial`: the engine stopped at its budget,
    so there is no footprint to report."""
    accesses: list = []
    diagnostics: list[Diagnostic] = []
    notes: list[str] = []
    for name in settings.clients:
        if name == "footprint" and partial:
            continue  # a partial enumeration is no footprint
        client = CLIENTS[name]()
        try:
            out = client.run(analysis)
        except Exception as exc:  # noqa: BLE001 - one client's bug costs no other verdict
            diagnostics.append(
                Diagnostic(
                    "TL050",
                    f"the {name} client failed on this launch: {type(exc).__name__}: {exc}",
                    launch.line,
                    1,
                    kind=name,
                )
            )
            continue
        accesses.extend(out.accesses)
        diagnostics.extend(out.diagnostics)
        notes.extend(out.notes)
    return accesses, diagnostics, notes


def _dedupe(diags: list[Diagnostic]) -> list[Diagnostic]:
    seen: set[tuple] = set()
    out = []
    for d in diags:
        key = (d.code, d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def refusal_diag(refusal: Refusal, stack_of, launch: LaunchSpec, tensors: dict[str, TensorSpec] | None = None) -> Diagnostic:
    """The TL030 of `refusal`, with its fix (refusal.fix_for) from the launch's `tensors`."""
    stack = stack_of(refusal.loc, ()) if refusal.loc else ()
    line, col = (stack[0].line, stack[0].column) if stack else (launch.line, 1)
    unranged = [
        (name, t.dtype, t.shape)
        for name, t in (tensors or {}).items()
        if t.values is None and t.dtype.startswith(("i", "u")) and t.dtype != "i1"
    ]
    fix = fix_for(refusal.kind, refusal.message, unranged)
    return Diagnostic(
        "TL030",
        f"not analyzed: {refusal.kind}: {refusal.message}" + (f". {fix}" if fix else ""),
        line,
        col,
        stack=stack,
        kind=refusal.kind,
    )


def _check_ranges_hold(graph: select.Engine, model: LaunchModel) -> None:
    """A declared value range holds for the data the launch is given, not for what the kernel itself
    writes there: a tensor with `.values(...)` that the kernel stores to (or updates atomically) and
    also loads from may be read back outside its range, so the launch is refused rather than analysed
    with a range that no longer holds."""
    written = {s.arg for s in graph.sites.values() if s.op != "load"}
    read = {s.arg for s in graph.sites.values() if s.op == "load"}
    for name in sorted(written & read):
        info = model.args.get(name)
        if info is not None and info.values is not None:
            raise Refusal(
                "ranged-tensor-written",
                f"the kernel writes to {name} and loads from it, so its declared value range "
                f"(`.values(...)`) need not hold for what it loads back: not analysed with that range "
                f"(declare the values a separate, read-only tensor holds, or leave {name} unranged)",
            )
