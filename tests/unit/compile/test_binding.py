"""Host compile: the JIT's own binder, autotune/heuristics configs, grids, and no driver or device."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import triton
import triton.language as tl

from tests.support import FIXTURES, REPO, SAMPLES
from tilelens_lsp.compile.binding import (
    FakeTensor,
    LaunchBindingError,
    bind,
    element_size,
    expand_configs,
    grid_of,
    triton_dtype,
    unwrap,
)
from tilelens_lsp.compile.compiler import compiler_for
from tilelens_lsp.compile.driver import DeviceAccessError, HostDriver, parse_target
from tilelens_lsp.launches.specs import DTYPES
from tilelens_lsp.model import LaunchSpec, ScalarSpec, TensorSpec
from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.settings import Settings


def vec(dtype: str = "fp32", n: int = 64) -> TensorSpec:
    return TensorSpec(dtype, (n,), (1,), 0, n)


def launch(kernel: str, *args, grid=(1,), grid_expr=None, **kwargs) -> LaunchSpec:
    wrap = lambda v: v if isinstance(v, (TensorSpec, ScalarSpec)) else ScalarSpec("int", v)  # noqa: E731
    return LaunchSpec(
        kernel,
        1,
        tuple(wrap(a) for a in args),
        tuple((k, wrap(v)) for k, v in kwargs.items()),
        grid=None if grid_expr else grid,
        grid_expr=grid_expr,
    )


@triton.jit
def offset_kernel(x_ptr, a, b, BLOCK: tl.constexpr):
    tl.store(x_ptr + a + b + tl.arange(0, BLOCK), 1.0)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}, num_warps=2), triton.Config({"BLOCK": 64}, num_warps=4)], key=["n"])
@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def tuned_kernel(x_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0, mask=EVEN or tl.arange(0, BLOCK) < n)


@pytest.fixture(scope="module")
def backend():
    return compiler_for("cuda:89").backend


def bound_of(kernel, spec: LaunchSpec, backend, forced=frozenset()):
    chain = unwrap(kernel)
    return bind(chain.jit, expand_configs(chain, spec)[0], backend, set(forced))


# ---------------------------------------------------------------- the driver stand-in


def test_host_driver_answers_the_configured_target():
    target = parse_target("cuda:90")
    assert HostDriver(target).get_current_target() == target


def test_host_driver_refuses_device_queries():
    with pytest.raises(DeviceAccessError):
        HostDriver(parse_target("cuda:89")).get_current_device()


def test_host_driver_refuses_device_properties():
    with pytest.raises(DeviceAccessError):
        HostDriver(parse_target("cuda:89")).utils.get_device_properties(0)


def test_host_driver_refuses_streams_and_launchers():
    driver = HostDriver(parse_target("cuda:89"))
    for query in ("get_current_stream", "launcher_cls", "get_benchmarker", "get_device_interface"):
        with pytest.raises(DeviceAccessError):
            getattr(driver, query)


NO_DRIVER = textwrap.dedent("""
    import json, sys
    touched = []

    def trap(what):
        def boom(*args, **kwargs):
            touched.append(what)
            raise RuntimeError("driver touched: " + what)
        return boom

    # every way to a real driver raises: the driver config, each backend's driver and utils
    import triton.runtime
    config = sys.modules["triton.runtime.driver"]
    config._create_driver = trap("_create_driver")
    config.DriverConfig.default = property(trap("driver.default"))
    config.DriverConfig.active = property(trap("driver.active"))
    from triton.backends import backends
    for name, backend in backends.items():
        backend.driver.is_active = staticmethod(trap(name + ".is_active"))
        backend.driver.__init__ = trap(name + ".__init__")
    import triton.backends.nvidia.driver as nvidia
    import triton.backends.amd.driver as amd
    nvidia.CudaUtils.__new__ = trap("CudaUtils")
    amd.HIPUtils.__new__ = trap("HIPUtils")

    # and the stand-in itself raises on any attribute: the compile path must not even ask it
    class RaisingDriver:
        def __getattribute__(self, name):
            touched.append("stand-in." + name)
            raise RuntimeError("stand-in touched: " + name)

    import tilelens_lsp.compile.driver as stand_in
    stand_in.HostDriver = lambda target: RaisingDriver()
    from tilelens_lsp.pipeline import analyze_path
    statuses = []
    for path in sys.argv[2:]:
        result = analyze_path(path, sys.argv[1])
        statuses += [launch.status for launch in result.launches]
        statuses += [d.code for d in result.all_diagnostics() if d.code in ("TL010", "TL050")]
    print(json.dumps({"touched": touched, "statuses": statuses}))
""")


@pytest.fixture(scope="module")
def without_driver():
    files = [str(p) for p in sorted(SAMPLES.glob("*.py"))] + [str(FIXTURES / "tuned.py")]
    env = {"TILELENS_CACHE_DIR": "off", "TRITON_DEFAULT_FP_FUSION": "1", "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-c", NO_DRIVER, str(REPO), *files], capture_output=True, text=True, env=env, cwd=REPO, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_analyzing_every_sample_touches_no_driver(without_driver):
    assert without_driver["touched"] == []


def test_analyzing_every_sample_without_a_driver_compiles_every_launch(without_driver):
    assert set(without_driver["statuses"]) <= {"analyzed", "refused"} and without_driver["statuses"]


# ---------------------------------------------------------------- targets


def test_cuda_target_reads_its_compute_capability():
    assert (parse_target("cuda:90").backend, parse_target("cuda:90").arch) == ("cuda", 90)


def test_hip_target_reads_its_gfx_name():
    assert (parse_target("hip:gfx942").backend, parse_target("hip:gfx942").arch) == ("hip", "gfx942")


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError):
        parse_target("metal:3")


@pytest.fixture
def no_result_cache(monkeypatch):
    monkeypatch.setenv("TILELENS_CACHE_DIR", "off")
    # and analyze_path without a WarmState keeps no result in memory between calls


def _written(target: str) -> list[str]:
    result = analyze_path(FIXTURES / "target_query.py", FIXTURES, Settings(target=target))
    return [a.pointer for launch in result.launches for a in launch.accesses]


def test_target_queries_in_a_kernel_answer_for_the_configured_target(no_result_cache):
    assert (_written("cuda:89"), _written("cuda:90")) == (["old_ptr"], ["new_ptr"])


def test_target_queries_answer_for_the_current_target_after_switching_back(no_result_cache):
    _written("cuda:90")
    assert _written("cuda:89") == ["old_ptr"]


# ---------------------------------------------------------------- fake arguments


@pytest.mark.parametrize("name", DTYPES)
def test_every_directive_dtype_names_a_triton_dtype(name):
    assert isinstance(triton_dtype(name), tl.dtype)


@pytest.mark.parametrize(
    "name, size",
    [("i1", 1), ("u8", 1), ("fp8e4nv", 1), ("fp16", 2), ("bf16", 2), ("i32", 4), ("fp32", 4), ("u64", 8), ("fp64", 8)],
)
def test_element_sizes(name, size):
    assert element_size(name) == size


def test_fake_tensor_address_includes_the_view_offset():
    t = FakeTensor(TensorSpec("fp16", (4,), (1,), 3, 16), 0)
    assert t.data_ptr() - t.base == 6


def test_fake_tensors_are_16_byte_aligned_like_real_allocations():
    assert all(FakeTensor(vec(), i).data_ptr() % 16 == 0 for i in range(4))


# ---------------------------------------------------------------- binding


def test_small_int_binds_as_i32(backend):
    assert bound_of(offset_kernel, launch("offset_kernel", vec(), 5, 7, BLOCK=16), backend).signature["a"] == "i32"


def test_int_past_i32_binds_as_i64(backend):
    bound = bound_of(offset_kernel, launch("offset_kernel", vec(), 2**33, 7, BLOCK=16), backend)
    assert bound.signature["a"] == "i64"


def test_i64_scalar_forces_a_64_bit_argument(backend):
    spec = launch("offset_kernel", vec(), ScalarSpec("i64", 5), 7, BLOCK=16)
    assert bound_of(offset_kernel, spec, backend, {"a"}).signature["a"] == "i64"


def test_i64_one_stays_a_runtime_argument_instead_of_a_constexpr(backend):
    spec = launch("offset_kernel", vec(), ScalarSpec("i64", 1), 7, BLOCK=16)
    assert bound_of(offset_kernel, spec, backend, {"a"}).signature["a"] == "i64"


def test_i64_argument_is_64_bit_in_the_ttir(backend):
    chain = unwrap(offset_kernel)
    spec = launch("offset_kernel", vec(), ScalarSpec("i64", 5), 7, BLOCK=16)
    bound = bind(chain.jit, expand_configs(chain, spec)[0], backend, {"a"})
    module, _ctx = compiler_for("cuda:89").compile_ttir(chain.jit, bound)
    assert "%a: i64" in module.str() and "%b: i32" in module.str()


def test_aligned_tensor_gets_the_divisibility_a_real_launch_gets(backend):
    bound = bound_of(offset_kernel, launch("offset_kernel", vec(), 5, 16, BLOCK=16), backend)
    assert ["tt.divisibility", 16] in bound.attrs[(0,)] and ["tt.divisibility", 16] in bound.attrs[(2,)]


def test_too_many_positional_arguments_is_a_binding_error():
    with pytest.raises(LaunchBindingError, match="takes 4 arguments"):
        expand_configs(unwrap(offset_kernel), launch("offset_kernel", vec(), 1, 2, 3, 4))


def test_unknown_keyword_is_a_binding_error_listing_the_parameters():
    with pytest.raises(LaunchBindingError, match="no parameter 'c'.*x_ptr, a, b, BLOCK"):
        expand_configs(unwrap(offset_kernel), launch("offset_kernel", vec(), 1, 2, c=3, BLOCK=16))


def test_argument_given_twice_is_a_binding_error():
    with pytest.raises(LaunchBindingError, match="both positionally and by keyword"):
        expand_configs(unwrap(offset_kernel), launch("offset_kernel", vec(), 1, a=2, b=3, BLOCK=16))


def test_missing_argument_is_a_binding_error_naming_it(backend):
    with pytest.raises(LaunchBindingError, match="BLOCK"):
        bound_of(offset_kernel, launch("offset_kernel", vec(), 1, 2), backend)


def test_not_a_jit_function_is_a_binding_error():
    with pytest.raises(LaunchBindingError, match="not a @triton.jit kernel"):
        unwrap(len)


# ---------------------------------------------------------------- configs


def test_every_autotune_config_is_expanded():
    configs = expand_configs(unwrap(tuned_kernel), launch("tuned_kernel", vec(), 64))
    assert [c.config["BLOCK"] for c in configs] == [32, 64]


def test_autotune_launch_options_travel_with_their_config():
    configs = expand_configs(unwrap(tuned_kernel), launch("tuned_kernel", vec(), 64))
    assert [c.options.get("num_warps") for c in configs] == [2, 4]


def test_heuristics_see_the_declared_arguments_and_the_config():
    configs = expand_configs(unwrap(tuned_kernel), launch("tuned_kernel", vec(), 96))
    assert [(c.config["BLOCK"], c.config["EVEN"]) for c in configs] == [(32, True), (64, False)]


# ---------------------------------------------------------------- grids


def test_int_grid_is_padded_to_three_dimensions():
    assert grid_of(launch("k", grid=(7,)), {}) == (7, 1, 1)


def test_lambda_grid_reads_meta_from_the_bound_arguments():
    spec = launch("k", grid_expr='(cdiv(1000, meta["BLOCK"]), 2)')
    assert grid_of(spec, {"BLOCK": 128}) == (8, 2, 1)


def test_four_dimensional_grid_is_a_binding_error():
    with pytest.raises(LaunchBindingError):
        grid_of(launch("k", grid=(1, 1, 1, 1)), {})


def test_negative_grid_is_a_binding_error():
    with pytest.raises(LaunchBindingError):
        grid_of(launch("k", grid=(-1,)), {})
