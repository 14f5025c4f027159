"""Kernels behind wrappers (autotuner subclasses, heuristics over autotuners, launch-cache wrappers such
as FlagGems' LibEntry) are found through their `.fn` chain; importing a user's module sees Triton's
driver as a plain import would, never the host compile stand-in."""

from __future__ import annotations

import pytest
import triton
import triton.language as tl
from triton.runtime.autotuner import Autotuner

from tests.support import FIXTURES
from tilelens_lsp.compile.binding import LaunchBindingError, expand_configs, unwrap
from tilelens_lsp.compile.compiler import compiler_for
from tilelens_lsp.model import LaunchSpec, ScalarSpec, TensorSpec
from tilelens_lsp.pipeline import analyze_path


class LaunchCache(triton.KernelInterface):
    """What FlagGems' `@libentry()` puts around a kernel: a KernelInterface holding `.fn`."""

    def __init__(self, fn):
        self.fn = fn
        self.arg_names = fn.arg_names


class CachedAutotuner(Autotuner):
    """A subclass, as fla and FlagGems (LibTuner) define their own."""


def cached_autotune(configs, key):
    def decorator(fn):
        return CachedAutotuner(fn, fn.arg_names, configs, key, None, None)

    return decorator


@triton.jit
def _body(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0, mask=EVEN or tl.arange(0, BLOCK) < n)


CONFIGS = [triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})]
even = triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
cached_kernel = LaunchCache(cached_autotune(CONFIGS, ["n"])(even(_body)))
heuristics_outside = LaunchCache(
    triton.heuristics({"EVEN": lambda args: args["n"] % 64 == 0})(triton.autotune(CONFIGS, key=["n"])(_body))
)


def _launch(kernel: str) -> LaunchSpec:
    return LaunchSpec(kernel, 1, (TensorSpec("fp32", (64,), (1,), 0, 64), ScalarSpec("int", 96)), (), grid=(1,))


def test_a_launch_cache_wrapper_is_transparent():
    assert unwrap(LaunchCache(_body)).jit is _body


def test_an_autotuner_subclass_behind_a_wrapper_expands_every_config():
    configs = expand_configs(unwrap(cached_kernel), _launch("cached_kernel"))
    assert [(c.config["BLOCK"], c.config["EVEN"]) for c in configs] == [(32, True), (64, False)]


def test_heuristics_outside_an_autotuner_apply_to_every_config():
    configs = expand_configs(unwrap(heuristics_outside), _launch("heuristics_outside"))
    assert [(c.config["BLOCK"], c.config["EVEN"]) for c in configs] == [(32, False), (64, False)]


def test_a_cycle_of_fn_attributes_is_not_a_kernel():
    class Loop:
        pass

    a, b = Loop(), Loop()
    a.fn, b.fn = b, a
    with pytest.raises(LaunchBindingError, match="not a @triton.jit kernel"):
        unwrap(a)


def test_the_stand_in_driver_is_gone_after_a_compile():
    from triton.runtime import driver

    compiler = compiler_for("cuda:89")
    saved = driver.__dict__.get("_active")
    chain = unwrap(_body)
    from tilelens_lsp.compile.binding import bind

    binding = expand_configs(
        chain,
        LaunchSpec(
            "_body",
            1,
            _launch("_body").args,
            (("BLOCK", ScalarSpec("int", 16)), ("EVEN", ScalarSpec("bool", True))),
            grid=(1,),
        ),
    )[0]
    compiler.compile_ttir(chain.jit, bind(chain.jit, binding, compiler.backend, set()))
    assert driver.__dict__.get("_active") is saved


def test_a_module_asking_the_driver_at_import_imports_as_it_would_without_us():
    compiler_for("cuda:89")  # a warm worker: the compiler exists before the import
    result = analyze_path(FIXTURES / "asks_driver_at_import.py", FIXTURES)
    assert [d.code for d in result.all_diagnostics()] == []
    assert [launch.status for launch in result.launches] == ["analyzed"]
