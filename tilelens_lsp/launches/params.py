"""Keyword arguments of a declared launch checked against the kernel's parameters, from the text alone.

A keyword the kernel does not take (`n_col=` for `n_cols`) is a bad directive on its own line, with
the closest parameter name as "did you mean" (the editor's quick fix applies it), instead of a
binding error later. Kernels whose parameters the text does not show are left to the binder.
"""

from __future__ import annotations

import difflib

from tilelens_lsp.launches.kernels import KernelDef
from tilelens_lsp.model import DirectiveError, LaunchSpec


def unknown_keywords(launch: LaunchSpec, kernel: KernelDef) -> list[str]:
    return [name for name, _ in launch.kwargs if name not in kernel.params]


def check_keywords(kernels: list[KernelDef], launches: list[LaunchSpec]) -> tuple[list[LaunchSpec], list[DirectiveError]]:
    """The launches whose keywords all name parameters, and a TL020 for each of the others."""
    by_name = {k.name: k for k in kernels}
    kept: list[LaunchSpec] = []
    errors: list[DirectiveError] = []
    for launch in launches:
        kernel = by_name.get(launch.kernel)
        unknown = unknown_keywords(launch, kernel) if kernel is not None and kernel.params else []
        if kernel is None or not unknown:
            kept.append(launch)
            continue
        name = unknown[0]
        close = difflib.get_close_matches(name, kernel.params, n=1, cutoff=0.6)
        guess = f": did you mean '{close[0]}'?" if close else f" (its parameters: {', '.join(kernel.params)})"
        errors.append(
            DirectiveError(
                launch.line,
                1,
                f"unknown parameter '{name}' of {launch.kernel}{guess}",
                end_line=launch.line + launch.source.count("\n"),
                kernel=launch.kernel,
            )
        )
    return kept, errors
