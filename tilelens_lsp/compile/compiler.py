"""Compile one launch: every config of a declared launch, bound and compiled to TTIR on the host.

`compile_launch` is the one way the pipeline, the worker's warm-up, the tools, the tests and the bench
turn a kernel object and a `LaunchSpec` into TTIR: unwrap → configs → bind → grid → compile, a failure
kept as a value at the step where it happened, never raised. `HostCompiler` keeps one target's backend
warm across compiles (one per target per process, `compiler_for`). Nothing here analyses the TTIR.
"""

from __future__ import annotations

import contextlib
import os
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from tilelens_lsp.compile.binding import BoundLaunch, ConfigBinding, FakeTensor, bind, expand_configs, grid_of, unwrap
from tilelens_lsp.compile.driver import fix_codegen_locations, fix_hip_binder_without_torch, host_driver, parse_target
from tilelens_lsp.model import Frame, LaunchSpec, ScalarSpec

CONTEXT_USES = 256  # compiles one MLIR context serves before a fresh one (what it interns stays bounded)


@dataclass
class HostCompiler:
    """Keeps the backend and MLIR context for one target across compiles (a warm process).

    A context with its dialects loaded costs about a millisecond to make, a fifth of a small kernel's
    whole compile; modules of many compiles live in one context side by side, as MLIR allows. A
    context interns every type and attribute it ever saw, so it is replaced every CONTEXT_USES compiles;
    a module compiled earlier keeps its own context alive (`CompiledConfig.context`)."""

    target_name: str

    def __post_init__(self) -> None:
        self._context: Any = None
        self._uses = 0
        from triton.compiler.compiler import make_backend  # lazy: Triton start-up cost

        self.target = parse_target(self.target_name)
        fix_codegen_locations()
        fix_hip_binder_without_torch()
        self.backend = make_backend(self.target)

    def compile_ttir(self, jit, bound: BoundLaunch):
        """The TTIR module of a bound launch, passes run up to `ttir` only."""
        # target queries (`tl.target_info`) during this compile answer for this compiler's target;
        # outside a compile Triton's driver is what it would be without us
        with host_driver(self.target), line_info():
            return self._compile_ttir(jit, bound)

    def _compile_ttir(self, jit, bound: BoundLaunch):
        from triton._C.libtriton import ir  # lazy, as above
        from triton.compiler import ASTSource

        src = ASTSource(jit, bound.signature, bound.constexprs, bound.attrs)
        if self._context is None or self._uses >= CONTEXT_USES:
            self._context, self._uses = ir.context(), 0
            ir.load_dialects(self._context)
            self.backend.load_dialects(self._context)
        ctx = self._context
        self._uses += 1
        codegen = self.backend.get_codegen_implementation(bound.options)
        module = src.make_ir(self.target, bound.options, codegen, self.backend.get_module_map(), ctx)
        stages: dict[str, Any] = {}
        self.backend.add_stages(stages, bound.options, src.language)
        metadata: dict[str, Any] = {}
        module = stages["ttir"](module, metadata)
        return module, ctx


@contextlib.contextmanager
def line_info() -> Iterator[None]:
    """Locations on for the duration of one compile. Triton drops every op's `loc` to `unknown` when
    TRITON_DISABLE_LINE_INFO is set (read by its C++ side at each compile), and some packages set it at
    import to shrink their binaries (unsloth_zoo does): every verdict would then land on line 1. The
    variable only ever changes the debug info of the binary, never the ops, so the TTIR is otherwise
    the one the user's launch compiles; it is restored afterwards, as the user's code set it."""
    saved = os.environ.get(LINE_INFO_VARIABLE)
    os.environ[LINE_INFO_VARIABLE] = "0"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(LINE_INFO_VARIABLE, None)
        else:
            os.environ[LINE_INFO_VARIABLE] = saved


LINE_INFO_VARIABLE = "TRITON_DISABLE_LINE_INFO"
_COMPILERS: dict[str, HostCompiler] = {}


def compiler_for(target: str) -> HostCompiler:
    """The process's warm compiler for `target` (`cuda:89`, `hip:gfx942`), made on first use."""
    if target not in _COMPILERS:
        _COMPILERS[target] = HostCompiler(target)
    return _COMPILERS[target]


@dataclass(frozen=True)
class CompiledConfig:
    """One config of a launch, as far as it got.

    `failed_at` names the step that failed: "configs" (the object is no kernel, or its heuristics
    raised: then `jit` is None and this is the launch's only config), "bind", "grid" or "compile";
    `error` is that step's exception, traceback included. A config the caller skipped (see
    `compile_launch`) has neither `module` nor `error`."""

    jit: Any  # the JITFunction
    config: dict[str, Any]  # constexpr values and autotune/heuristics picks, for display
    bound: BoundLaunch | None = None
    grid: tuple[int, int, int] | None = None
    module: Any = None  # the TTIR module (passes run up to `ttir`)
    context: Any = None  # the MLIR context `module` lives in: keep both alive together
    error: Exception | None = None
    failed_at: str = ""


def compile_launch(
    kernel_obj,
    launch: LaunchSpec,
    target: str,
    *,
    skip: Callable[[CompiledConfig], bool] | None = None,
    count: Callable[[int], None] | None = None,
) -> Iterator[CompiledConfig]:
    """Every config of `launch` on `kernel_obj` (autotune configs × heuristics), bound and compiled to TTIR
    for `target`, in config order.

    A generator: each config is bound and compiled when the caller asks for the next one. `skip(c)` is
    asked of each config that bound, before its compile: a caller that already holds that config's
    verdict (the pipeline's result cache) answers True and gets it uncompiled. `count(n)` hears how
    many configs there are before the first one comes.
    """
    try:
        chain = unwrap(kernel_obj)
        bindings = expand_configs(chain, launch)
    except Exception as exc:  # noqa: BLE001 - heuristics are user code
        yield CompiledConfig(None, {}, error=exc, failed_at="configs")
        return
    if count is not None:
        count(len(bindings))
    compiler = compiler_for(target)
    jit = chain.jit
    names = [p.name for p in jit.params]
    forced = {
        n for n, a in list(zip(names, launch.args)) + list(launch.kwargs) if isinstance(a, ScalarSpec) and a.kind == "i64"
    }
    constexprs = {p.name for p in jit.params if p.is_constexpr}
    for binding in bindings:
        config = {k: _plain(v) for k, v in binding.arguments.items() if k in constexprs}
        config.update({k: _plain(v) for k, v in binding.config.items()})
        yield _compiled(compiler, jit, launch, binding, config, forced, skip)


def _compiled(
    compiler: HostCompiler,
    jit: Any,
    launch: LaunchSpec,
    binding: ConfigBinding,
    config: dict[str, Any],
    forced: set[str],
    skip: Callable[[CompiledConfig], bool] | None,
) -> CompiledConfig:
    """One config bound, its grid evaluated and compiled (unless `skip` holds its verdict): the record
    built once, as far as it got."""
    try:
        bound = bind(jit, binding, compiler.backend, forced)
    except Exception as exc:  # noqa: BLE001 - the binder runs user-visible checks
        return CompiledConfig(jit, config, error=exc, failed_at="bind")
    try:
        grid = grid_of(launch, bound.arguments)
    except Exception as exc:  # noqa: BLE001 - the grid expression is the user's
        return CompiledConfig(jit, config, bound, error=exc, failed_at="grid")
    bound_only = CompiledConfig(jit, config, bound, grid)
    if skip is not None and skip(bound_only):
        return bound_only
    try:
        module, context = compiler.compile_ttir(jit, bound)
    except Exception as exc:  # noqa: BLE001 - CompilationError and whatever Triton raises
        return CompiledConfig(jit, config, bound, grid, error=exc, failed_at="compile")
    return CompiledConfig(jit, config, bound, grid, module, context)


def _plain(v: Any) -> Any:
    """A config value as JSON shows it: a fake tensor by its spec, a scalar by its value."""
    if isinstance(v, FakeTensor):
        return repr(v)
    if isinstance(v, ScalarSpec):
        return v.value
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return str(v)


def compile_error_stack(exc: BaseException, mapper) -> tuple[tuple[Frame, ...], str]:
    """Frames (innermost first) of Triton's code generators at a compile error, and the message; `mapper`
    (a `locs.PathMapper`) makes the frames' paths portable."""
    from triton.compiler.code_generator import CodeGenerator  # lazy: Triton start-up cost

    # An error inside an inlined @jit helper is re-raised at the call site `from` the helper's error:
    # follow the chain of causes to reach the helper's generator (and its message).
    chain: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and all(e is not c for c in chain):
        chain.append(e)
        e = e.__cause__
    frames: list[Frame] = []
    seen: set[int] = set()
    for e in chain:  # outermost first; each traceback walks outermost frame first
        for frame, _ in traceback.walk_tb(e.__traceback__):
            gen = frame.f_locals.get("self")
            if isinstance(gen, CodeGenerator) and id(gen) not in seen and gen.cur_node is not None:
                seen.add(id(gen))
                node = gen.cur_node
                frames.append(
                    Frame(
                        mapper.portable(gen.file_name),
                        gen.begin_line + getattr(node, "lineno", 1),
                        gen.begin_col + getattr(node, "col_offset", 0),
                    )
                )
    message = next((m for m in (getattr(c, "error_message", None) for c in reversed(chain)) if m), None)
    if message is None:
        message = str(exc).strip().splitlines()[-1]
    return tuple(reversed(frames)), str(message)
