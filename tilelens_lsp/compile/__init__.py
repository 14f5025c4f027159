"""Compile: the second stage. In: a kernel object (from the user's imported module) and a `LaunchSpec`.
Out: per autotune config, the bound launch, its grid and the TTIR module, or the error of the step
that failed (`compiler.compile_launch`, the one entry).

The only package that imports Triton's compiler (`compiler`, `driver`), always lazily, inside a
worker. `binding` (fake tensors, configs, the JIT's binder) → `driver` (the host-only stand-in for
Triton's driver) → `compiler`; `synth` finds a launch for a kernel that has none by compiling
candidates.
"""
