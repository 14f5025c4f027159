"""Kernels that take what a plain tensor or scalar cannot declare: dtype-valued constexprs, tensor
descriptors, tuples of tensors. Each is bound through Triton's own binder, so the TTIR must be what Triton
gives for the same values reached another way (a default, a hand-built launch)."""

from __future__ import annotations

import triton
import triton.language as tl

from tilelens_lsp.compile.compiler import compile_launch
from tilelens_lsp.launches.scanner import parse_directives


def launch_of(text: str, kernel: str):
    launches, errors = parse_directives(f"# tilelens: {text}\n", {kernel})
    assert errors == [] and len(launches) == 1, errors
    return launches[0]


def ttir(kernel_obj, text: str, target: str = "cuda:89") -> str:
    name = text.split("[", 1)[0]
    [config] = list(compile_launch(kernel_obj, launch_of(text, name), target))
    assert config.error is None, config.error
    return str(config.module)


# ---------------------------------------------------------------- dtype-valued constexprs


@triton.jit
def cast_kernel(x_ptr, out_ptr, n, OUT_DTYPE: tl.constexpr = tl.bfloat16, BLOCK: tl.constexpr = 128):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x.to(OUT_DTYPE).to(tl.float32), mask=offs < n)


def test_a_declared_dtype_compiles_as_triton_binds_the_same_dtype_from_a_default():
    by_default = ttir(cast_kernel, "cast_kernel[(1,)](fp32[100], fp32[100], 100)")
    for spelling in ("bf16", "bfloat16", "tl.bfloat16", "triton.language.bfloat16"):
        assert ttir(cast_kernel, f"cast_kernel[(1,)](fp32[100], fp32[100], 100, OUT_DTYPE={spelling})") == by_default
    assert "to tensor<128xbf16>" in by_default


def test_another_dtype_compiles_to_another_cast():
    fp16 = ttir(cast_kernel, "cast_kernel[(1,)](fp32[100], fp32[100], 100, tl.float16)")
    assert "to tensor<128xf16>" in fp16 and "bf16" not in fp16


# ---------------------------------------------------------------- locations whatever the user's import set


LINE_INFO_OFF = """
import os
os.environ["TRITON_DISABLE_LINE_INFO"] = "1"   # what unsloth_zoo's import does, to shrink its binaries
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs), mask=offs < n)


# tilelens: copy_kernel[(2,)](fp32[100], fp32[128], 128, BLOCK=64)
"""


def test_findings_keep_their_line_when_the_module_turns_triton_line_info_off(tmp_path, monkeypatch):
    from tilelens_lsp.pipeline import analyze_path

    monkeypatch.delenv("TRITON_DISABLE_LINE_INFO", raising=False)  # restored after, as the module set it
    path = tmp_path / "kernels.py"
    path.write_text(LINE_INFO_OFF)
    result = analyze_path(path, tmp_path)
    [launch] = result.launches
    [finding] = [d for d in launch.diagnostics if d.code == "TL001"]
    load_line, text = next((i, line) for i, line in enumerate(LINE_INFO_OFF.splitlines(), 1) if "tl.load" in line)
    assert (finding.line, finding.column) == (load_line, text.index("tl.load") + 1)


# ---------------------------------------------------------------- values computed from a comparison of loaded data


PAIRWISE = """
import triton
import triton.language as tl


@triton.jit
def pairwise_count_kernel(ids_ptr, out_ptr, n, NP: tl.constexpr):
    offs = tl.arange(0, NP)
    ids = tl.load(ids_ptr + offs, mask=offs < n, other=-2)
    same = (ids[None, :] == ids[:, None]) & (offs[None, :] < n)   # SGLang's moe_align_small_numel, in small
    cnt = tl.sum(same.to(tl.int32), axis=1)
    spread = tl.sum(cnt[None, :] * (offs[:, None] < n).to(tl.int32), axis=1)
    tl.store(out_ptr + offs, spread, mask=offs < n)


# tilelens: pairwise_count_kernel[(1,)](i32[12].values(-1, 8), i32[12], 12, NP=16)
"""


def test_a_reduction_of_a_comparison_of_loaded_values_is_analysed_not_crashed(tmp_path):
    """A comparison of declared-range values is an unknown mask with a bound of its own shape; a value
    computed from it (here a sum over one axis, then broadcast) must not inherit that bound."""
    from tilelens_lsp.pipeline import analyze_path

    path = tmp_path / "pairwise.py"
    path.write_text(PAIRWISE)
    [launch] = analyze_path(path, tmp_path).launches
    assert launch.status == "analyzed", launch.diagnostics
    assert [d.code for d in launch.diagnostics] == []


# ---------------------------------------------------------------- tensor descriptors and tuples of tensors


def test_descriptor_and_tuple_arguments_read_and_round_trip():
    from tilelens_lsp.model import DescriptorSpec, LaunchSpec, ScalarSpec, TensorSpec, TupleSpec

    launch = launch_of(
        "k[(1,)](descriptor(fp16[256, 64], block=(64, 32)), (fp32[8], fp32[8], 3), "
        'd=descriptor(tensor(bf16, (4, 16), strides=(32, 1), storage=128), (4, 16), "nan"))',
        "k",
    )
    a, t = launch.args
    assert a == DescriptorSpec(TensorSpec("fp16", (256, 64), (64, 1), 0, 256 * 64), (64, 32))
    assert isinstance(t, TupleSpec) and t.items[2] == ScalarSpec("int", 3) and t.items[0] == t.items[1]
    assert launch.kwargs[0][1].padding == "nan" and launch.kwargs[0][1].tensor.strides == (32, 1)
    assert LaunchSpec.from_json(launch.to_json()) == launch


DESCRIPTORS = """
import triton
import triton.language as tl


@triton.jit
def desc_matmul_kernel(a_desc, b_desc, c_desc, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = a_desc.load([pid_m * BM, k * BK])
        b = b_desc.load([k * BK, pid_n * BN])
        acc = tl.dot(a, b, acc)
    c_desc.store([pid_m * BM, pid_n * BN], acc.to(tl.float16))


@triton.jit
def device_desc_kernel(a_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
    # the descriptor's shape is the caller's word: here it claims M rows of a tensor that has fewer
    src = tl.make_tensor_descriptor(a_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    pid = tl.program_id(0)
    dst.store([pid * BM, 0], src.load([pid * BM, 0]))


@triton.jit
def pair_copy_kernel(ptrs, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(ptrs[0] + offs, mask=offs < n)
    tl.store(ptrs[1] + offs, x, mask=offs < n)


# tilelens: M, N, K = 200, 96, 160
# tilelens: desc_matmul_kernel[(cdiv(M, 64), cdiv(N, 32))](
# tilelens:     descriptor(fp16[M, K], block=(64, 32)), descriptor(fp16[K, N], block=(32, 32)),
# tilelens:     descriptor(fp16[M, N], block=(64, 32)), K, BM=64, BN=32, BK=32)
# tilelens: device_desc_kernel[(4,)](fp16[192, 64], fp16[256, 64], 256, 64, BM=64, BN=64)
# tilelens: pair_copy_kernel[(1,)]((fp32[100], fp32[90]), 100, BLOCK=128)
"""


def _results(tmp_path, target: str) -> dict:
    from tilelens_lsp.pipeline import analyze_path
    from tilelens_lsp.settings import Settings

    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "descriptors.py"
    path.write_text(DESCRIPTORS)
    return {r.kernel: r for r in analyze_path(path, tmp_path, Settings(target=target)).launches}


def _verdicts(tmp_path, target: str) -> dict[str, tuple[str, list]]:
    return {k: (r.status, [(d.code, d.message) for d in r.diagnostics]) for k, r in _results(tmp_path, target).items()}


def test_descriptors_are_lowered_to_pointers_on_cuda_89_and_checked(tmp_path):
    found = _verdicts(tmp_path, "cuda:89")
    assert found["desc_matmul_kernel"] == ("analyzed", [])  # ragged M and N: the descriptor's bounds mask them
    status, diags = found["device_desc_kernel"]
    assert status == "analyzed" and {c for c, _ in diags} == {"TL001"}  # rows 192..255 of a 192-row tensor
    assert all("of a_ptr" in m for _, m in diags)
    status, diags = found["pair_copy_kernel"]
    assert status == "analyzed" and [c for c, _ in diags] == ["TL001"] and "of ptrs.1" in diags[0][1]


def test_descriptor_loads_and_stores_on_cuda_90_touch_what_tritons_own_lowering_touches_on_cuda_89(tmp_path):
    """cuda:90 keeps tt.descriptor_load/store, which the engine models; cuda:89's TTIR is Triton's rewrite of
    the same accesses into masked pointer arithmetic: the two footprints and verdicts must be equal."""
    lowered, kept = _results(tmp_path / "89", "cuda:89"), _results(tmp_path / "90", "cuda:90")

    def seen(r):
        return (
            r.status,
            sorted((a.pointer, a.op, a.line, tuple(map(tuple, a.elements))) for a in r.accesses),
            sorted((d.code, d.line, d.message) for d in r.diagnostics),
        )

    for kernel in ("desc_matmul_kernel", "device_desc_kernel"):
        assert seen(kept[kernel]) == seen(lowered[kernel]), kernel
        assert kept[kernel].status == "analyzed" and kept[kernel].accesses


def test_a_descriptor_triton_would_refuse_is_a_directive_error(tmp_path):
    # a row stride of 3 fp16 elements (6 bytes) is not 16-byte aligned: TensorDescriptor asserts
    launch = launch_of(
        "desc_matmul_kernel[(1, 1)](descriptor(tensor(fp16, (4, 3), strides=(3, 1)), block=(4, 4)), "
        "descriptor(fp16[16, 16], block=(16, 16)), descriptor(fp16[16, 16], block=(16, 16)), 16, "
        "BM=16, BN=16, BK=16)",
        "desc_matmul_kernel",
    )
    path = tmp_path / "descriptors.py"
    path.write_text(DESCRIPTORS)
    import importlib.util

    spec = importlib.util.spec_from_file_location("descriptors_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    [config] = list(compile_launch(module.desc_matmul_kernel, launch, "cuda:89"))
    assert config.failed_at == "configs" and "Triton refuses this descriptor" in str(config.error)


# ---------------------------------------------------------------- the worker's memory limit on a GPU host


MAPS_A_LOT = """
import mmap
import triton
import triton.language as tl

# what importing a CUDA build of torch does to a process: gigabytes of mapped, mostly untouched, address
# space (its libraries); here 6 GB reserved and never written
RESERVED = mmap.mmap(-1, 6 << 30, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, prot=0)  # PROT_NONE


@triton.jit
def k(x_ptr, BLOCK: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


# tilelens: k[(1,)](fp32[16], BLOCK=16)
"""


def test_a_module_that_maps_more_address_space_than_the_memory_limit_is_still_analysed(tmp_path):
    """The limit bounds what the worker allocates, not what it maps: under a 4 GB address-space limit a
    GPU host's torch import alone left no room, and every launch of a corpus sweep was lost."""
    from tilelens_lsp.settings import Settings
    from tilelens_lsp.worker.process import Worker

    path = tmp_path / "maps.py"
    path.write_text(MAPS_A_LOT)
    settings = Settings(memory_limit_mb=4096, timeout=120.0)
    worker = Worker(settings, cwd=str(tmp_path))
    try:
        result = worker.analyze(path, tmp_path, settings=settings)
    finally:
        worker.stop()
    assert [d.code for d in result.all_diagnostics()] == []
    assert [launch.status for launch in result.launches] == ["analyzed"]


# ---------------------------------------------------------------- capture writes what the grammar reads


class _Dtype:
    def __init__(self, name: str, size: int) -> None:
        self.name, self.itemsize = name, size


class _Storage:
    def __init__(self, nbytes: int) -> None:
        self._n = nbytes

    def nbytes(self) -> int:
        return self._n


class _Tensor:
    """What the capture hook reads of a torch tensor (a row slice of a larger storage here)."""

    def __init__(self, shape, strides, offset, storage, dtype=_Dtype("float16", 2)) -> None:
        self.shape, self._strides, self._offset, self._storage, self.dtype = shape, strides, offset, storage, dtype

    def data_ptr(self) -> int:
        return 1 << 20

    def stride(self):
        return self._strides

    def storage_offset(self) -> int:
        return self._offset

    def element_size(self) -> int:
        return self.dtype.itemsize

    def untyped_storage(self):
        return _Storage(self._storage * self.dtype.itemsize)


def test_captured_dtypes_descriptors_and_tuples_read_back_as_the_launch_values():
    from triton.tools.tensor_descriptor import TensorDescriptor

    from tilelens_lsp.capture import hook, runner
    from tilelens_lsp.model import DescriptorSpec, ScalarSpec, TensorSpec, TupleSpec

    rows = _Tensor((64, 128), (128, 1), 128 * 16, 128 * 128)  # x[16:80] of a 128 x 128 tensor
    desc = TensorDescriptor(rows, [64, 128], [128, 1], [32, 64])
    pair = (_Tensor((8,), (1,), 0, 8), _Tensor((8,), (1,), 0, 8))
    written = [runner.spec_text(hook._arg(v)) for v in (tl.bfloat16, desc, pair)]  # noqa: SLF001 - white-box test of the capture hook's record of an argument
    launch = launch_of(f"k[(1,)]({', '.join(written)})", "k")
    view = TensorSpec("fp16", (64, 128), (128, 1), 128 * 16, 128 * 128)
    assert launch.args == (
        ScalarSpec("dtype", "bf16"),
        DescriptorSpec(view, (32, 64)),
        TupleSpec((TensorSpec("fp16", (8,), (1,), 0, 8),) * 2),
    )
