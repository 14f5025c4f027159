"""`python -m tilelens_lsp` is the same entry point as the `tilelens-lsp` script."""

from tilelens_lsp.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
