"""`python -m tilelens_lsp` is the same entry point as the `tilelens-lsp` script."""

import os
import sys

# `python -m` puts the working directory first on sys.path; started from a workspace, a file there
# named like a stdlib module (argparse.py) would be imported by the server. Editors start us with
# `-I`; this covers a plain `python -m tilelens_lsp` (the package's own modules resolve through it).
if not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from tilelens_lsp.cli.main import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
