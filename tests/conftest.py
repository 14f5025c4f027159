"""Session-wide test setup: results are cached in a temporary folder, never in the user's cache."""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("TILELENS_CACHE_DIR", tempfile.mkdtemp(prefix="tilelens-test-cache-"))
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
