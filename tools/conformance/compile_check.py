"""Corpus hygiene: host-compile every declared launch x config of the corpus to TTIR (no GPU).

    .venv/bin/python tools/conformance/compile_check.py [FILE ...]

A kernel that the interpreter runs but Triton cannot compile would only test the product's
compile-error path, so each corpus kernel is checked here through the JIT's own binder.
Independent of the product; must run without TRITON_INTERPRET.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))  # run as a script: the repository root, for tests.support and tilelens_lsp
KERNELS = REPO / "tests" / "conformance" / "kernels"


def compile_launch(kernel, launch, config, target=None):
    import numpy as np
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend
    from triton.runtime.jit import create_function_from_signature

    from tests.support import oracle
    from tilelens_lsp.model import TensorSpec

    fn, _, heuristics = oracle.unwrap(kernel)
    target = target or GPUTarget("cuda", 89, 32)
    backend = make_backend(target)
    rng = np.random.default_rng(0)
    names = list(fn.arg_names)
    bound = {}
    for name, spec in list(zip(names, launch.args)) + list(launch.kwargs):
        bound[name] = oracle.FakeTensor(name, spec, rng) if isinstance(spec, TensorSpec) else oracle.scalar_value(spec)
    meta = dict(bound)
    meta.update(config)
    for layer in heuristics:
        for key, h in layer.items():
            meta[key] = h(dict(meta))
    kwargs = {k: v for k, v in meta.items() if k in names}
    binder = create_function_from_signature(fn.signature, fn.params, backend)
    bound_args, specialization, options = binder(**kwargs)
    options, signature, constexprs, attrs = fn._pack_args(backend, {}, bound_args, specialization, options)  # noqa: SLF001 - Triton's binder: the arguments as Triton packs them
    src = ASTSource(fn, signature, constexprs, attrs)
    ctx = ir.context()
    ir.load_dialects(ctx)
    backend.load_dialects(ctx)
    module = src.make_ir(target, options, backend.get_codegen_implementation(options), backend.get_module_map(), ctx)
    stages = {}
    backend.add_stages(stages, options, src.language)
    module = stages["ttir"](module, {})
    return module.str()


def main(argv) -> int:
    from tests.support import oracle

    if os.environ.get("TRITON_INTERPRET") == "1":
        print("run without TRITON_INTERPRET", file=sys.stderr)
        return 2
    files = [Path(a).resolve() for a in argv] or sorted(KERNELS.glob("*.py"))
    bad = 0
    for path in files:
        launches, errors = oracle.parse_launches(path.read_text())
        module = oracle.load_module(path)
        n = 0
        for e in errors:
            print(f"FAIL {path.name}:{e.line}: directive: {e.message}")
            bad += 1
        for launch in launches:
            kernel = getattr(module, launch.kernel)
            for config in oracle.kernel_configs(kernel):
                try:
                    compile_launch(kernel, launch, config)
                    n += 1
                except Exception as exc:  # noqa: BLE001 - any failure to compile a corpus launch is printed and counted
                    bad += 1
                    print(f"FAIL {path.name}:{launch.line} {config}: {type(exc).__name__}: {exc}")
                    if "-v" in os.environ.get("COMPILE_CHECK", ""):
                        traceback.print_exc()
        print(f"ok   {path.name}: {n} compiled")
    print(f"compile check: {len(files)} files, {bad} failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
