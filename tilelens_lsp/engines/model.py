"""The `LaunchModel` an engine reads, built from the declared launch and one compiled config.

In: the `LaunchSpec` (its tensors, by the name each pointer has in the TTIR: `launch_tensors`, once
per launch) and, per config, the TTIR module read into records, the bound arguments (scalar values,
descriptor shapes) and the grid. Out: the entry function's argument values (`IntV`, `PtrV`, a
descriptor's `DescV`, `Opaque` for what the model does not follow) and the `ArgInfo` of each
declared tensor. It evaluates nothing; an argument layout it does not recognise is refused, never
guessed.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tilelens_lsp.compile.binding import BoundLaunch, descriptor_arguments, element_size, flat_arguments
from tilelens_lsp.engines import views as view_runs
from tilelens_lsp.engines.enumerate.descriptors import DescV
from tilelens_lsp.engines.values import ArgInfo, IntV, LaunchModel, Opaque, PtrV, elem_bytes
from tilelens_lsp.model import ArgSpec, DescriptorSpec, LaunchSpec, TensorSpec, TupleSpec, value_intervals
from tilelens_lsp.refusal import Refusal
from tilelens_lsp.ttir import reader as ttir_reader


def launch_tensors(params: Sequence[str], launch: LaunchSpec) -> dict[str, TensorSpec]:
    """Every tensor the launch declares, by the name its pointer has in the TTIR: positional arguments
    by the kernel's parameter names `params`, keywords by their own, a tuple's items as `NAME.0`,
    a descriptor's tensor by the descriptor's name."""
    out: dict[str, TensorSpec] = {}

    def visit(name: str, spec: ArgSpec) -> None:
        if isinstance(spec, TensorSpec):
            out[name] = spec
        elif isinstance(spec, DescriptorSpec):
            out[name] = spec.tensor
        elif isinstance(spec, TupleSpec):
            for i, item in enumerate(spec.items):
                visit(f"{name}.{i}", item)

    for name, spec in list(zip(params, launch.args)) + list(launch.kwargs):
        visit(name, spec)
    return out


def build_model(
    module: ttir_reader.Module, bound: BoundLaunch, tensors: dict[str, TensorSpec], grid: tuple[int, int, int], budget: int
) -> LaunchModel:
    """The model of one compiled config: `module`'s entry arguments given their values."""
    values, infos = arg_values(module.funcs[module.entry], bound, tensors)
    return LaunchModel(module, values, infos, grid, budget)


def entry_arguments(func: ttir_reader.Func, bound: BoundLaunch) -> list[tuple[str, str, Any, Any]]:
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
            raise Refusal(
                "tensor-descriptor", f"the entry arguments of descriptor {name} are not in a layout the model knows"
            )
        for v in lowered:
            ssa, ty = func.args[i]
            out.append((ssa, name, v, ty))
            i += 1
    if i != len(func.args) or len(out) != len(func.args):
        raise Refusal(
            "tensor-descriptor" if any(sig.startswith("tensordesc") for _, sig, _ in flat) else "reader-misalignment",
            f"the kernel's {len(func.args)} entry arguments do not line up with its {len(flat)} declared ones",
        )
    return out


def arg_values(
    func: ttir_reader.Func, bound: BoundLaunch, tensors: dict[str, TensorSpec]
) -> tuple[dict[str, Any], dict[str, ArgInfo]]:
    """Entry-function arguments: every non-constexpr parameter, in order."""
    values: dict[str, Any] = {}
    infos: dict[str, ArgInfo] = {}
    for ssa, name, value, ty in entry_arguments(func, bound):
        kept = "desc<" in ty.elem  # a !tt.tensordesc (printed tdesc<...> by 3.6) the TTIR keeps
        if ty.is_ptr or kept:
            spec = tensors.get(name)
            if spec is None:
                values[ssa] = Opaque("pointer-provenance", f"pointer argument {name} is not a declared tensor")
                continue
            size = element_size(spec.dtype)
            infos[name] = ArgInfo(
                name,
                size,
                -spec.offset,
                spec.storage - spec.offset,
                value_intervals(spec.values) or None,
                covered_runs(spec),
            )
            if kept:
                values[ssa] = DescV(
                    PtrV(name, np.zeros(1, dtype=np.int64), size),
                    tuple(IntV(np.array([int(n)]), 32) for n in value.shape),
                    tuple(IntV(np.array([int(n)]), 64) for n in value.strides),
                )
                continue
            values[ssa] = PtrV(name, np.zeros(1, dtype=np.int64), elem_bytes(ty.pointee))
        elif ty.is_int:
            v = int(value)
            if ty.bits > 1:
                # the bits the kernel receives, in the graph's signless two's-complement form: an
                # unsigned argument (u32, u64: ints in [2**31, 2**32) or [2**63, 2**64)) wraps
                half = 1 << (ty.bits - 1)
                v = ((v + half) % (1 << ty.bits)) - half
            values[ssa] = IntV(np.array([v], dtype=np.int64) if ty.bits > 1 else np.array([bool(v)]), ty.bits)
        else:
            values[ssa] = Opaque("float", f"the {ty.elem} argument {name}")
    return values, infos


def covered_runs(spec: TensorSpec) -> tuple[np.ndarray, np.ndarray] | None:
    """The runs a view covers, relative to its first element, when they are not its whole storage."""
    runs = view_runs.covered_runs(spec.shape, spec.strides, spec.storage - spec.offset)
    if runs is None:
        return None
    starts, ends = runs
    if spec.offset == 0 and starts.size == 1 and starts[0] == 0 and ends[0] >= spec.storage:
        return None
    return runs
