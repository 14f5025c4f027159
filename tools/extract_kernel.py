"""Extract named @triton.jit functions from a module inside a wheel into a standalone file, outside the repo.

For packages whose kernel module cannot be imported without the package's compiled extension or its
serving stack (vLLM's fused_moe.py imports `vllm._custom_ops` and its platform layer), the kernels
themselves need only Triton: this writes them, verbatim and with their decorators, after
`import triton` / `import triton.language as tl`, so a launch of them can be declared and checked.

    python tools/extract_kernel.py WHEEL MEMBER OUT.py NAME [NAME ...]
    python tools/extract_kernel.py vllm-0.33.0-*.whl vllm/model_executor/layers/fused_moe/fused_moe.py \\
        /work/venvs/vllm-kernels/vllm_fused_moe.py write_zeros_to_output fused_moe_kernel

Never point OUT into the repository: the kernels are the package's code, not ours.
"""

from __future__ import annotations

import ast
import sys
import zipfile
from pathlib import Path


def extract(wheel: Path, member: str, names: list[str]) -> str:
    source = zipfile.ZipFile(wheel).read(member).decode("utf-8")
    tree = ast.parse(source)
    lines = source.splitlines()
    found = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names}
    missing = [n for n in names if n not in found]
    if missing:
        raise SystemExit(f"extract_kernel: {member} has no top-level function {', '.join(missing)}")
    parts = [
        f'"""Kernels extracted verbatim from {wheel.name}:{member} by tools/extract_kernel.py."""',
        "import triton",
        "import triton.language as tl",
        "",
    ]
    for name in names:
        node = found[name]
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        parts += ["", *lines[first - 1 : node.end_lineno], ""]
    return "\n".join(parts) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    wheel, member, out, *names = argv
    target = Path(out).resolve()
    if Path(__file__).resolve().parents[1] in target.parents:
        raise SystemExit("extract_kernel: OUT lies inside the repository; write it outside (e.g. /work/venvs/)")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(extract(Path(wheel), member, names))
    print(f"extract_kernel: {', '.join(names)} -> {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
