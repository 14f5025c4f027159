"""Example launches for kernels that have none, each verified by compiling it exactly as it will be written.

TL100 says a kernel is not checked because nothing declares a launch of it. The fix a kernel author wants
is a launch they can insert and then edit, and it is only worth inserting if it compiles: a suggestion
that fails with "unknown name" or "Unsupported ptr type" teaches nothing. So the candidates come from
launch synthesis (compile/synth.py: which parameters are pointers, of what element type, which are
integers, which constexprs the autotuner supplies), and the chosen one is formatted as directive lines,
parsed back with the file's own directive scanner and compiled once more from that parse.

It imports the file, like an analysis does, so it runs only on request (the editor's quick fix,
`tilelens-lsp suggest`), never on open: a file without launches is otherwise never imported.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilelens_lsp.compile.binding import LaunchBindingError, unwrap
from tilelens_lsp.compile.compiler import compile_launch
from tilelens_lsp.compile.synth import GRID, SIZE, compile_check, index_pointers, pointer_params, synthesize
from tilelens_lsp.launches.scanner import parse_directives
from tilelens_lsp.model import LaunchResult, Suggestion
from tilelens_lsp.pipeline import (
    ImportFailure,
    WarmState,
    analyze_launch,
    declared_launches,
    file_scope,
    import_roots,
    load_module,
    unlaunched,
)
from tilelens_lsp.settings import Settings
from tilelens_lsp.ttir.locs import PathMapper, default_mapper

WIDTH = 100  # wrap a directive's arguments over continuation lines past this many characters
# (row-major strides?, integer scalars) in the order tried: sizes of 128 first; all strides alike next
# (a stride of 1 specializes differently, and names may group strides of different tensors); small
# sizes last, for kernels that loop over the product of several sizes (128**4 elements is past any
# placeholder tensor)
VARIANTS = ((True, 128), (False, 128), (True, 8))
MIN_SIZE = 16  # elements of a placeholder tensor no access reaches
MAX_SCALAR_TRIALS = 12  # analyses spent fitting integer scalars to the grid and tile sizes, per kernel
FINDINGS = frozenset({"TL001", "TL002", "TL003", "TL004", "TL005", "TL006"})
PLACEHOLDER_NOTE = (
    "# Example launch from tilelens: it compiles, but the sizes, values and grid are placeholders; use a real launch's."
)


def undeclared(path: Path, text: str, workspace_root: Path | None, config_file: Path | None = None) -> list[str]:
    """The kernels of `text` that TL100 names (the pipeline's rule)."""
    kernels, launches, errors, toml = declared_launches(path, text, workspace_root, config_file)
    return [k.name for k in unlaunched(kernels, list(launches) + list(toml.launches), list(errors) + list(toml.errors))]


def suggest_launches(
    path: Path | str,
    workspace_root: Path | str | None = None,
    kernels: list[str] | None = None,
    settings: Settings | None = None,
    config_file: Path | None = None,
    state: WarmState | None = None,
) -> list[Suggestion]:
    """A compile-verified example launch for each of `kernels` (default: every kernel TL100 names);
    `state`: the worker's memory (a fresh one when None)."""
    state = state if state is not None else WarmState()
    path = Path(path).resolve()
    root = Path(workspace_root).resolve() if workspace_root else None
    settings = settings or Settings()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [Suggestion(k, error=f"cannot read {path.name}: {exc}") for k in kernels or ()]
    names = list(kernels) if kernels is not None else undeclared(path, text, root, config_file)
    if not names:
        return []
    roots = import_roots(path, root)
    with file_scope(roots):
        try:
            module = load_module(path, roots, state.imports)
        except ImportFailure as failure:
            return [
                Suggestion(k, error=f"{path.name} does not import (line {failure.line}): {failure.message}") for k in names
            ]
        context = _Context(module, settings, default_mapper(root), hashlib.sha256(text.encode()).hexdigest(), state)
        return [_one(context, name) for name in names]


@dataclass(frozen=True)
class _Context:
    """What every kernel of one file is suggested and checked with."""

    module: Any
    settings: Settings
    mapper: PathMapper
    source_hash: str
    state: WarmState


def _one(context: _Context, name: str) -> Suggestion:
    """The first of these that compiles as written and whose analysis reports nothing: the VARIANTS of
    strides and sizes, each with two programs along every axis the kernel reads a program id of, then
    with one program; else the first that compiles (its verdicts may be the kernel's own)."""
    module, target = context.module, context.settings.target
    kernel_obj = getattr(module, name, None)
    if kernel_obj is None:
        return Suggestion(name, error=f"the saved file defines no kernel named '{name}' (save it first?)")
    compiles = compile_check(module, target)
    indices = _index_parameters(kernel_obj)
    compiled: list[tuple[str, ...]] = []
    failed, tried = None, 0
    for layout, ints in VARIANTS:
        found = synthesize(kernel_obj, name, compiles, layout=layout, int_value=ints)
        tried += found.tried
        if found.launch is None or found.fails_alike:
            failed = failed or found.error or "no candidate"
            continue
        written = with_index_ranges(found.launch, indices, ints)
        ttir, error = compile_as_written(module, name, directive_lines(written), target)
        if error:
            failed = failed or f"it does not compile as written: {error}"
            continue
        # programs that differ only on an axis the kernel ignores do the same work: the placeholder would
        # report its own race (TL005); and placeholder values that do not fit together (a head count, a
        # group size, strides of different tensors) can make programs overlap, which one program avoids
        for grid in dict.fromkeys((_grid_for(ttir), "(1,)")):
            launch = written.replace(f"{name}[{GRID}]", f"{name}[{grid}]", 1)
            lines = (PLACEHOLDER_NOTE,) + directive_lines(launch)
            if compile_as_written(module, name, lines, target)[1]:
                continue
            results = _analyse(context, name, lines)
            if _refused_on_data(results):  # an index the source reading missed: range every integer tensor
                ranged = with_index_ranges(launch, set(re.findall(rf"\b(\w+)=[iu]\d+\[{SIZE}\]", launch)), ints)
                again = (PLACEHOLDER_NOTE,) + directive_lines(ranged)
                if ranged != launch and not compile_as_written(module, name, again, target)[1]:
                    launch, lines, results = ranged, again, _analyse(context, name, again)
            if not _findings(results):
                launch, results = _fit_scalars(context, name, launch, results, ints)
                small = _fitted(launch, results)
                if small is not None:
                    fitted = (PLACEHOLDER_NOTE,) + directive_lines(small)
                    if not compile_as_written(module, name, fitted, target)[1] and not _findings(
                        _analyse(context, name, fitted)
                    ):
                        return Suggestion(name, fitted, tried=tried)
                return Suggestion(name, lines, tried=tried)
            compiled.append(lines)
    if compiled:
        return Suggestion(name, compiled[0], tried=tried)
    why = failed or "no candidate"
    return Suggestion(name, error=f"no example launch of {name} compiles ({tried} tried): {why}", tried=tried)


def _index_parameters(kernel_obj) -> set[str]:
    """The pointer parameters whose loaded values reach another access's address (synth's reading of
    the source): a launch must declare their range, or the analysis refuses the access they index."""
    try:
        jit = unwrap(kernel_obj).jit
    except LaunchBindingError:
        return set()
    return index_pointers(jit, pointer_params(jit))


def with_index_ranges(launch: str, indices: set[str], rows: int) -> str:
    """`launch` with `.values(0, rows)` on each integer placeholder tensor in `indices`: every index
    names one of `rows` rows (or elements) of the tensor it indexes, which the placeholder sizes then
    fit (`_fitted`)."""

    def ranged(m: re.Match) -> str:
        if m.group(1) not in indices or not m.group(2).startswith(("i", "u")):
            return m.group(0)
        return f"{m.group(0)}.values(0, {rows})"

    return re.sub(rf"\b(\w+)=(\w+)\[{SIZE}\](?!\.values)", ranged, launch)


def _refused_on_data(results: list[LaunchResult] | None) -> bool:
    """Some config was refused because an address or a bound depends on loaded data."""
    return any(
        d.code == "TL030" and d.kind in ("indirect-address", "data-dependent-bound")
        for r in results or ()
        for d in r.diagnostics
    )


def _touched(results: list[LaunchResult]) -> dict[str, int]:
    """Distinct elements each pointer's exact accesses touch, summed over accesses and configs (an
    inexact one, a gather through declared index ranges, is a bound that moves with every size)."""
    out: dict[str, int] = {}
    for r in results:
        for a in r.accesses:
            if not a.exact:
                continue
            out[a.pointer] = out.get(a.pointer, 0) + (a.touched or sum(hi - lo for lo, hi in a.elements))
    return out


def _fit_scalars(
    context: _Context, name: str, launch: str, results: list[LaunchResult] | None, value: int
) -> tuple[str, list[LaunchResult] | None]:
    """`launch` with each integer scalar that is still the placeholder `value` (strides excepted) lowered
    to the smallest grid extent, tile size or tile size times program count that leaves every pointer's
    touched elements as they were and the analysis clean: a row count the grid does not reach becomes
    the grid's rows, a column count past the tile becomes the tile's width, so sizes, grid and scalars
    tell one story. Each trial is one analysis (at most MAX_SCALAR_TRIALS per kernel); a scalar no
    trial keeps stays as it was."""
    if not results or any(r.status != "analyzed" for r in results):
        return launch, results
    head, args = _split_call(launch)
    grid = [int(x) for x in re.findall(r"\d+", head[head.index("[") :])]
    tiles = [int(v) for a in args if (v := a.partition("=")[2]).isdigit() and re.match(r"[A-Z_0-9]+=", a)]
    programs = 1
    for g in grid:
        programs *= g
    trials = sorted({x for x in grid + tiles + [programs * t for t in tiles] if 1 < x < value})
    before, budget = _touched(results), MAX_SCALAR_TRIALS
    for i, arg in enumerate(args):
        key, _, current = arg.partition("=")
        if current != str(value) or "stride" in key.lower() or not key.islower():
            continue
        for trial in trials:
            if budget <= 0:
                return launch, results
            budget -= 1
            candidate_args = args[:i] + [f"{key}={trial}"] + args[i + 1 :]
            candidate = f"{head}({', '.join(candidate_args)})"
            got = _analyse(context, name, directive_lines(candidate))
            if got and not _findings(got) and all(r.status == "analyzed" for r in got) and _touched(got) == before:
                launch, results, args = candidate, got, candidate_args
                break
    return launch, results


def _grid_for(ttir: str) -> str:
    """Two programs along each axis whose program id the kernel reads (one program when it reads none)."""
    used = {"xyz".index(a) for a in re.findall(r"tt\.get_program_id (x|y|z)\b", ttir)}
    axes = [2 if a in used else 1 for a in range(3)]
    while len(axes) > 1 and axes[-1] == 1:
        axes.pop()
    return f"({', '.join(map(str, axes))},)" if len(axes) == 1 else f"({', '.join(map(str, axes))})"


def directive_lines(launch: str, width: int = WIDTH) -> tuple[str, ...]:
    """`# tilelens:` lines for one launch expression, its arguments wrapped over continuation lines
    (the scanner joins lines while a bracket is open)."""
    prefix = "# tilelens: "
    if len(prefix) + len(launch) <= width:
        return (prefix + launch,)
    head, args = _split_call(launch)
    lines, current = [prefix + head + "("], prefix + "    "
    for i, arg in enumerate(args):
        piece = arg + ("," if i < len(args) - 1 else "")
        if current.strip() != prefix.strip() and len(current) + len(piece) + 1 > width:
            lines.append(current.rstrip())
            current = prefix + "    "
        current += piece + " "
    lines.append(current.rstrip())
    lines.append(prefix + ")")
    return tuple(lines)


def _split_call(launch: str) -> tuple[str, list[str]]:
    """`k[(2, 2, 2)](a=1, b=fp32[8])` -> ('k[(2, 2, 2)]', ['a=1', 'b=fp32[8]']), splitting at top-level commas."""
    call = ast.parse(launch, mode="eval").body
    assert isinstance(call, ast.Call)
    head = ast.get_source_segment(launch, call.func)
    if head is None:  # never for a call parsed from `launch` itself
        raise ValueError(f"no source text for the kernel of {launch!r}")
    parts = [ast.get_source_segment(launch, a) for a in call.args]
    parts += [f"{k.arg}={ast.get_source_segment(launch, k.value)}" for k in call.keywords]
    return head, [p for p in parts if p is not None]


def _analyse(context: _Context, name: str, lines: tuple[str, ...]) -> list[LaunchResult] | None:
    """The analysis of the launch `lines` declare; None when it failed (a launch too big for this
    worker's memory, a client's crash): such a variant is not preferred, and the other kernels of the
    file still get their suggestions."""
    launches, _ = parse_directives("\n".join(lines) + "\n", {name})
    try:
        return analyze_launch(
            launches[0], getattr(context.module, name), context.settings, context.mapper, context.source_hash, context.state
        )
    except Exception:  # noqa: BLE001 - MemoryError included: its arrays are gone once it unwinds
        return None


def _findings(results: list[LaunchResult] | None) -> int:
    """How many out-of-bounds, overflow, view and race verdicts `results` hold (one for a failed
    analysis: nothing vouches for it), or a TL050 a client's failure left."""
    if results is None:
        return 1
    return sum(1 for r in results for d in r.diagnostics if d.code in FINDINGS or d.code == "TL050")


def _fitted(launch: str, results: list[LaunchResult] | None) -> str | None:
    """`launch` with each placeholder tensor as small as its footprint allows (the next power of two at
    or above the last element any config touches; MIN_SIZE for one nothing touches): sizes a reader can
    take in. None when some config was not analysed to the end (no footprint to fit)."""
    if not results or any(r.status != "analyzed" for r in results):  # (None: the analysis failed)
        return None
    reach: dict[str, int] = {}
    for r in results:
        for a in r.accesses:
            if a.elements:
                reach[a.pointer] = max(reach.get(a.pointer, 0), a.elements[-1][1])

    def size(m: re.Match) -> str:
        n = reach.get(m.group(1)) or MIN_SIZE
        return f"{m.group(1)}={m.group(2)}[{1 << (n - 1).bit_length()}]"

    return re.sub(rf"\b(\w+)=(\w+)\[{SIZE}\]", size, launch)


def compile_as_written(module, name: str, lines: tuple[str, ...], target: str) -> tuple[str, str]:
    """(the TTIR, '') when `lines`, read by the file's own directive scanner, give one launch of `name`
    whose first config compiles; else ('', why not)."""
    launches, errors = parse_directives("\n".join(lines) + "\n", {name})
    if errors:
        return "", errors[0].message
    if len(launches) != 1 or launches[0].kernel != name:
        return "", f"the directive reads as {len(launches)} launch(es)"
    try:
        first = next(compile_launch(getattr(module, name), launches[0], target))
    except Exception as exc:  # noqa: BLE001 - any failure means: do not suggest it
        return "", f"{type(exc).__name__}: {exc}"
    if first.error is not None:
        return "", f"{type(first.error).__name__}: {first.error}"
    return str(first.module), ""
