"""Launches: the first stage. In: a kernel file's text and its `tilelens.toml` tables. Out: `LaunchSpec`
records (kernel, grid, fully evaluated argument specs) and `DirectiveError`s, plus the file's kernels.

Nothing here imports the user's code or Triton: directives are read with `ast` and evaluated by a
whitelist (`evaluator`), never executed. `specs` (vocabulary, tensor specs) → `evaluator` (one
expression) → `statements` (one directive) → `scanner` (a file's comments) and `toml` (launch tables);
`kernels` finds the `@jit` functions a launch may name.
"""
