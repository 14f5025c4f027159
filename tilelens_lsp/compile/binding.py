"""Binding a declared launch the way a real launch binds: fake tensors, autotune configs, the JIT's binder.

`unwrap` finds the JITFunction behind a kernel object, `expand_configs` gives every autotune config ×
heuristics with the declared arguments, `bind` runs the JIT's own binder and `_pack_args` (so
divisibility, 32/64-bit ints and constexprs are what a real launch compiles), `grid_of` evaluates the
grid. No compiling and no driver here; Triton's runtime modules are imported lazily (start-up cost).
"""

from __future__ import annotations

import copy
import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Iterator

from tilelens_lsp.dtypes import element_bytes
from tilelens_lsp.launches.evaluator import eval_grid
from tilelens_lsp.model import DescriptorSpec, LaunchSpec, ScalarSpec, TensorSpec, TupleSpec

ADDRESS_GAP = 1 << 40  # fake allocations are far apart, so no address is ambiguous


class LaunchBindingError(ValueError):
    """The declared arguments do not fit the kernel's signature (TL020 on the directive)."""


# ---------------------------------------------------------------- fake arguments


def triton_dtype(name: str):
    import triton.language as tl  # lazy: Triton start-up cost

    aliases = {
        "fp8e4nv": "float8e4nv",
        "fp8e5": "float8e5",
        "fp8e4b15": "float8e4b15",
        "fp8e4b8": "float8e4b8",
        "fp8e5b16": "float8e5b16",
        "fp16": "float16",
        "bf16": "bfloat16",
        "fp32": "float32",
        "fp64": "float64",
        "i1": "int1",
        "u1": "int1",
    }
    attr = aliases.get(name)
    if attr is None:
        attr = name.replace("i", "int", 1) if name.startswith("i") else name.replace("u", "uint", 1)
    return getattr(tl, attr)


def element_size(dtype_name: str) -> int:
    """Bytes per element of a directive dtype (the table in dtypes.py); Triton's width for any other name."""
    size = element_bytes(dtype_name)
    return size if size is not None else max(1, triton_dtype(dtype_name).primitive_bitwidth // 8)


class FakeTensor:
    """What the binder and kernels' host code look at: dtype, data_ptr(), shape, stride()."""

    def __init__(self, spec: TensorSpec, index: int) -> None:
        self.spec = spec
        self.dtype = triton_dtype(spec.dtype)
        self.itemsize = element_size(spec.dtype)
        self.base = ADDRESS_GAP * (index + 1)
        self.shape = tuple(spec.shape)

    def data_ptr(self) -> int:
        return self.base + self.spec.offset * self.itemsize

    def stride(self, dim: int | None = None):
        return self.spec.strides if dim is None else self.spec.strides[dim]

    def numel(self) -> int:
        return self.spec.numel

    def element_size(self) -> int:
        return self.itemsize

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return len(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"{self.spec.dtype}{list(self.shape)}"


def fake_value(arg, index: int, more: Iterator[int] | None = None):
    """The value a real caller would pass: a fake tensor at allocation `index`; a TensorDescriptor over one;
    a tuple of such values (their tensors at the allocations `more` gives, past every top-level one)."""
    if isinstance(arg, TensorSpec):
        return FakeTensor(arg, index)
    if isinstance(arg, DescriptorSpec):
        return fake_descriptor(arg, FakeTensor(arg.tensor, index))
    if isinstance(arg, TupleSpec):
        more = more if more is not None else itertools.count(1 << 16)
        return tuple(fake_value(a, next(more), more) for a in arg.items)
    assert isinstance(arg, ScalarSpec)
    if arg.kind == "dtype":  # a dtype-valued constexpr: the `tl.dtype` object a real caller passes
        return triton_dtype(arg.value)
    return arg.value


def fake_descriptor(spec: DescriptorSpec, base: FakeTensor):
    """Triton's own host-side TensorDescriptor (its checks included: a contiguous last dimension, 16-byte
    aligned strides, a legal block shape), so the binder specializes it as a real one."""
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor  # lazy: Triton start-up cost
    except ImportError:
        raise LaunchBindingError("this Triton has no host-side TensorDescriptor (triton.tools.tensor_descriptor)") from None
    try:
        return TensorDescriptor(base, list(spec.tensor.shape), list(spec.tensor.strides), list(spec.block), spec.padding)
    except (AssertionError, ValueError, TypeError) as exc:
        raise LaunchBindingError(
            f"Triton refuses this descriptor over {base!r} with block {list(spec.block)}: {exc or type(exc).__name__}"
        ) from None


# ---------------------------------------------------------------- kernels and configs


@dataclass
class KernelChain:
    """A JITFunction with the autotune configs and heuristics wrapped around it (outermost first)."""

    jit: Any
    layers: list[Any] = field(default_factory=list)


_MAX_WRAPPERS = 16  # a `.fn` chain longer than this is a cycle or not a kernel


def unwrap(obj) -> KernelChain:
    """Follow the `.fn` chain to the JITFunction: autotuners and heuristics (their subclasses too, such
    as FlagGems' LibTuner or fla's CachedAutotuner) are layers whose configs are expanded; any other
    wrapper with a `.fn` (FlagGems' `LibEntry`, launch caches, custom KernelInterfaces) is transparent."""
    from triton.runtime.autotuner import Autotuner, Heuristics  # lazy: Triton start-up cost
    from triton.runtime.jit import JITFunction

    layers: list[Any] = []  # Triton's Autotuner and Heuristics objects (Triton ships no types)
    start = obj
    for _ in range(_MAX_WRAPPERS):
        if isinstance(obj, JITFunction):
            return KernelChain(obj, layers)
        if isinstance(obj, (Autotuner, Heuristics)):
            layers.append(obj)
        try:
            inner = getattr(obj, "fn", None)
        except Exception:  # noqa: BLE001 - a user object's property may raise anything
            inner = None
        if inner is None or inner is obj:
            break
        obj = inner
    raise LaunchBindingError(f"'{getattr(start, '__name__', start)}' is not a @triton.jit kernel")


@dataclass(frozen=True)
class ConfigBinding:
    """One fully determined launch: every argument by name, the options, the config for display."""

    arguments: dict[str, Any]
    options: dict[str, Any]
    config: dict[str, Any]


_OPTION_KEYS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def expand_configs(chain: KernelChain, launch: LaunchSpec) -> list[ConfigBinding]:
    """Every autotune config × heuristics, with the declared arguments bound by name."""
    from triton.runtime.autotuner import Autotuner  # lazy: Triton start-up cost

    jit = chain.jit
    names = [p.name for p in jit.params]
    more = itertools.count(len(launch.args) + len(launch.kwargs))  # a tuple's tensors: past every argument
    values = [fake_value(a, i, more) for i, a in enumerate(launch.args)]
    if len(values) > len(names):
        raise LaunchBindingError(
            f"{jit.__name__} takes {len(names)} arguments but the launch passes {len(values)} positionally"
        )
    base: dict[str, Any] = dict(zip(names, values))
    for i, (key, spec) in enumerate(launch.kwargs):
        if key not in names and key not in _OPTION_KEYS:
            raise LaunchBindingError(f"{jit.__name__} has no parameter '{key}' (parameters: {', '.join(names)})")
        if key in base and key in names[: len(values)]:
            raise LaunchBindingError(f"argument '{key}' given both positionally and by keyword")
        base[key] = fake_value(spec, len(values) + i, more)

    def expand(
        layer_index: int, args: dict[str, Any], config: dict[str, Any], options: dict[str, Any]
    ) -> list[ConfigBinding]:
        if layer_index == len(chain.layers):
            return [ConfigBinding(args, options, config)]
        layer = chain.layers[layer_index]
        out: list[ConfigBinding] = []
        if isinstance(layer, Autotuner):
            for cfg in layer.configs:
                a = _pre_hooked(cfg, {**args, **cfg.kwargs})
                c = {**config, **cfg.kwargs}
                o = dict(options)
                for key in _OPTION_KEYS:
                    value = getattr(cfg, key, None)
                    if value is not None:
                        o[key] = value
                out.extend(expand(layer_index + 1, a, c, o))
        else:
            a = dict(args)
            c = dict(config)
            for name, heur in layer.values.items():
                a[name] = heur(dict(a))
                c[name] = a[name]
            out.extend(expand(layer_index + 1, a, c, options))
        return out

    options = {
        k: base.pop(k).value if isinstance(base[k], ScalarSpec) else base.pop(k)
        for k in list(base)
        if k in _OPTION_KEYS and k not in names
    }
    return expand(0, base, {}, options)


def _pre_hooked(cfg, args: dict[str, Any]) -> dict[str, Any]:
    """A config's arguments after its `pre_hook`, for launches that pass descriptors: the autotuner runs the
    hook before each config's launch, and kernels taking TensorDescriptors set their block shapes there
    (Liger's `_host_descriptor_pre_hook_fwd`), so the TTIR depends on it. Each config gets its own copies
    of the descriptors. Other launches' hooks (zeroing an output for split-K) touch no value the compile
    reads and are not run: a fake tensor has no data to zero."""
    hook = getattr(cfg, "pre_hook", None)
    if hook is None or not any(_is_descriptor(v) for v in args.values()):
        return args
    nargs = {k: copy.copy(v) if _is_descriptor(v) else v for k, v in args.items()}
    hook(nargs)
    return {k: nargs.get(k, v) for k, v in args.items()}


def _is_descriptor(value: Any) -> bool:
    return isinstance(getattr(value, "base", None), FakeTensor) and hasattr(value, "block_shape")


# ---------------------------------------------------------------- binding


@dataclass
class BoundLaunch:
    signature: dict[str, str]
    constexprs: dict[Any, Any]
    attrs: dict[Any, Any]
    options: Any
    arguments: dict[str, Any]  # every parameter by name (fake tensors, scalars)
    key: str  # specialization key: identical keys compile identically


def bind(jit, binding: ConfigBinding, backend, forced_i64: set[str]) -> BoundLaunch:
    """Bind through the JIT's own binder, as `JITFunction.run` does."""
    from triton.runtime.jit import create_function_from_signature  # lazy: Triton start-up cost

    names = [p.name for p in jit.params]
    kwargs = dict(binding.options)
    kwargs.setdefault("debug", False)
    binder = create_function_from_signature(jit.signature, jit.params, backend)
    call_args = {n: binding.arguments[n] for n in names if n in binding.arguments}
    try:
        bound_args, specialization, options = binder(**call_args, **kwargs)
    except TypeError as exc:
        raise LaunchBindingError(_binding_message(jit, exc)) from None
    for i, name in enumerate(names):
        if name in forced_i64 and specialization[i][0] in ("i32", "u32", "constexpr"):
            specialization[i] = ("i64", specialization[i][1] if specialization[i][0] != "constexpr" else "")
    # Triton's own packing of a bound launch into signature, constexprs and attributes: no public API
    # does it without a device, so its private method is used
    options, signature, constexprs, attrs = jit._pack_args(  # noqa: SLF001 - Triton's, no public equivalent
        backend, kwargs, bound_args, specialization, options
    )
    # launch options that only shape later stages (warps, stages, CTAs) do not change the TTIR
    ttir_options = {k: v for k, v in sorted(vars(options).items()) if k not in _OPTION_KEYS}
    key = repr(
        (
            sorted(signature.items()),
            sorted((str(k), repr(v)) for k, v in constexprs.items()),
            sorted((str(k), repr(v)) for k, v in attrs.items()),
            repr(ttir_options),
        )
    )
    return BoundLaunch(signature, constexprs, attrs, options, dict(bound_args), key)


def flat_arguments(bound: BoundLaunch) -> list[tuple[str, str, Any]]:
    """(name, signature type, value) of every entry argument before Triton's lowering, in order: a tuple
    argument's items as `NAME.0`, `NAME.1` (how the TTIR names them), constexprs left out. A descriptor
    (`tensordesc<...>`) is one entry here; the TTIR gives it several arguments (`descriptor_arguments`)."""
    out: list[tuple[str, str, Any]] = []

    def visit(name: str, ty: Any, value: Any) -> None:
        if ty == "constexpr":
            return
        if isinstance(ty, tuple):
            items = value if isinstance(value, tuple) else (None,) * len(ty)
            for i, (t, v) in enumerate(zip(ty, items)):
                visit(f"{name}.{i}", t, v)
            return
        out.append((name, str(ty), value))

    for name, ty in bound.signature.items():
        visit(name, ty, bound.arguments.get(name))
    return out


def fake_tensors(arguments: dict[str, Any]) -> dict[str, FakeTensor]:
    """Every fake tensor by the name its pointer has in the TTIR: a tuple's items as `NAME.0`, a
    descriptor's base tensor as the descriptor's own name."""
    out: dict[str, FakeTensor] = {}

    def visit(name: str, value: Any) -> None:
        if isinstance(value, FakeTensor):
            out[name] = value
        elif isinstance(value, tuple):
            for i, v in enumerate(value):
                visit(f"{name}.{i}", v)
        elif isinstance(getattr(value, "base", None), FakeTensor) and hasattr(value, "block_shape"):
            out[name] = value.base

    for name, value in arguments.items():
        visit(name, value)
    return out


_OWNED = re.compile(r"^(?:_\d+|\.(?:shape|stride)\.\d+(?:_\d+)?|\.(?:padding|roundF32ToTF32)(?:_\d+)?)$")


def descriptor_arguments(name: str, desc: Any, args: list[tuple[str, Any]]) -> list[Any] | None:
    """The values of the entry arguments a descriptor argument `name` was lowered to, given the entry
    arguments from its own on (`(ssa, type)`), or None when they are not in a layout we know.

    Triton passes a descriptor as its base (a pointer where its TTIR rewrites descriptors to pointer
    arithmetic; the descriptor itself where a `!tt.tensordesc` keeps it), then groups of its shape and its
    strides, with flags (padding, TF32 rounding) between two such groups on the rewriting targets. 3.9
    names them (`%d.shape.0`, `%d.padding`); 3.6 numbers them (`%d_0`): both are read by position and
    type, and checked against the layout."""
    if not args or args[0][0].lstrip("%") != name:
        return None
    owned = [args[0]]
    for ssa, ty in args[1:]:
        text = ssa.lstrip("%")
        if not (text.startswith(name) and _OWNED.match(text[len(name) :])):
            break
        owned.append((ssa, ty))
    rank = len(desc.shape)
    groups: list[str] = []  # the shape and stride arguments' SSA names
    flags: list[str] = []  # the padding and TF32-rounding flags' SSA names
    values: list[Any] = [desc.base if owned[0][1].is_ptr else desc]
    for ssa, ty in owned[1:]:
        if not ty.is_int:
            return None
        if ty.bits == 1:
            flags.append(ssa)
            values.append(
                int(getattr(desc, "padding", "zero") == "nan")
                if len(flags) == 1
                else int(bool(getattr(desc, "round_f32_to_tf32", False)))
            )
            continue
        index = len(groups) % (2 * rank)
        groups.append(ssa)
        values.append(int(desc.shape[index] if index < rank else desc.strides[index - rank]))
    if len(groups) not in (2 * rank, 4 * rank) or len(flags) > 2 or (flags and len(groups) != 4 * rank):
        return None
    return values


def _binding_message(jit, exc: TypeError) -> str:
    text = str(exc)
    signature = f"{jit.__name__}({', '.join(p.name for p in jit.params)})"
    if "missing" in text and "argument" in text:
        # the binder's own wording ("missing a required argument: 'N'"), without its function name
        return f"{text.split('() ', 1)[-1]} (signature: {signature})"
    return f"{text} (signature: {signature})"


def grid_of(launch: LaunchSpec, arguments: dict[str, Any]) -> tuple[int, int, int]:
    """The launch grid as three ints; a lambda grid reads `meta[...]` from every bound argument."""
    if launch.grid is not None:
        grid = tuple(launch.grid)
    else:
        meta = {k: (v.value if isinstance(v, ScalarSpec) else v) for k, v in arguments.items()}
        grid = tuple(eval_grid(launch.grid_expr or "", dict(launch.grid_env), meta))
    if not 1 <= len(grid) <= 3:
        raise LaunchBindingError(f"a grid has 1 to 3 dimensions, got {len(grid)}")
    gx, gy, gz = tuple(int(g) for g in grid) + (1,) * (3 - len(grid))
    if min(gx, gy, gz) < 0:
        raise LaunchBindingError(f"grid dimensions must be >= 0, got {(gx, gy, gz)}")
    return gx, gy, gz
