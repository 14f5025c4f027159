"""`python -m tilelens_lsp.worker`: the worker's main loop (the parent starts it with `-c`, see process.py)."""

from tilelens_lsp.worker.main import main

if __name__ == "__main__":
    raise SystemExit(main())
