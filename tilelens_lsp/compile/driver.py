"""The host-only stand-in for Triton's driver, and the release fixes the host compile needs.

While one launch compiles, `HostDriver` is Triton's active driver: it answers target queries for the
configured target and raises `DeviceAccessError` on anything that would need a GPU. With `compiler`, the
only module that reaches into Triton's compiler internals; their imports stay inside the functions,
as everywhere on the compile path, so importing the package never pays Triton's start-up cost.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import warnings

from tilelens_lsp.compile.binding import FakeTensor


class DeviceAccessError(RuntimeError):
    """Raised by the host driver stand-in for any query that would need a GPU."""


def parse_target(target: str):
    from triton.backends.compiler import GPUTarget  # lazy: Triton start-up cost

    backend, _, arch = target.partition(":")
    if backend == "cuda":
        return GPUTarget("cuda", int(arch), 32)
    if backend == "hip":
        return GPUTarget("hip", arch, 64)
    raise ValueError(f"unknown target backend {backend!r} (expected cuda:NN or hip:gfxNNN)")


class _HostUtils:
    def __getattr__(self, name: str):
        raise DeviceAccessError(f"device query '{name}' is not available on the host compile path")


class HostDriver:
    """Answers `get_current_target()` for the configured target; every other query raises."""

    def __init__(self, target) -> None:
        self._target = target
        self.utils = _HostUtils()

    def get_current_target(self):
        return self._target

    def __getattr__(self, name: str):
        raise DeviceAccessError(f"driver call '{name}' is not available on the host compile path")


def install_host_driver(target) -> None:
    from triton.runtime import driver  # lazy: Triton start-up cost

    driver.set_active(HostDriver(target))


@contextlib.contextmanager
def host_driver(target):
    """The stand-in is Triton's active driver only for the duration of one compile: import-time code
    of the user's modules (which asks `driver.active` to choose a device, and torch.cuda what it is)
    must see exactly what a plain import on this host sees."""
    from triton.runtime import driver  # lazy: Triton start-up cost

    saved = driver.__dict__.get("_active")  # never the `active` property: it would create a driver
    install_host_driver(target)
    try:
        yield
    finally:
        # Triton's own slot: `reset_active()` would create a default driver, not restore "none yet"
        driver._active = saved  # noqa: SLF001 - restoring Triton's state as it was


def fix_codegen_locations() -> None:
    """Triton 3.6 and 3.7's code generator gives an op the loc of the last sub-expression it visited
    (a `tl.store(p,\n v)` lands on `v`'s line and column) and prints 0-based columns; from 3.8 on it
    restores the caller's loc after each visit and prints `begin_col + col_offset` (1-based). Make the
    older ones behave like 3.8, so verdicts land on the same line and column under every tested release.
    A no-op on releases whose generator has `begin_col`."""
    from triton.compiler import code_generator as cg  # lazy: Triton start-up cost

    gen = cg.CodeGenerator
    if getattr(gen, "_tilelens_locations", False) or "begin_col" in inspect.signature(gen.__init__).parameters:
        return

    def visit(self, node):
        if node is None:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", PendingDeprecationWarning)
            last_node = self.cur_node
            last_loc = self.builder.get_loc()
            self.cur_node = node
            if hasattr(node, "lineno") and hasattr(node, "col_offset"):
                here = self.builder.create_loc(
                    self.file_name, self.begin_line + node.lineno, self.begin_col + node.col_offset
                )
                if self.name_loc_as_prefix is not None:
                    here = self.builder.create_name_loc(self.name_loc_as_prefix, here)
                self.builder.set_loc(here)
            try:
                ret = ast.NodeVisitor.visit(self, node)
            except cg.CompilationError:
                raise
            except Exception as e:  # noqa: BLE001 - as Triton's own visit does
                if cg.knobs.compilation.front_end_debugging:
                    raise
                raise cg.CompilationError(self.jit_fn.src, self.cur_node, repr(e)) from None
            if last_loc:
                self.cur_node = last_node
                self.builder.set_loc(last_loc)
            return ret

    gen.begin_col = 1
    gen.visit = visit
    gen._tilelens_locations = True  # noqa: SLF001 - our marker on Triton's class (patched once)


def fix_hip_binder_without_torch() -> None:
    """Triton 3.6/3.7's AMD binder imports torch for every tensor argument (`HIPBackend.is_within_2gb`);
    from 3.8 on it answers False when torch is missing. Answer as 3.8 does for our fake tensors."""
    try:
        from triton.backends.amd.compiler import HIPBackend  # lazy: Triton start-up cost
    except ImportError:
        return
    if hasattr(HIPBackend, "_torch_available") or getattr(HIPBackend, "_tilelens_no_torch", False):
        return
    original = HIPBackend.is_within_2gb

    def is_within_2gb(arg):
        return False if isinstance(arg, FakeTensor) else original(arg)

    HIPBackend.is_within_2gb = staticmethod(is_within_2gb)
    HIPBackend._tilelens_no_torch = True  # noqa: SLF001 - our marker on Triton's class (patched once)
