"""An analysis' reply leaves the worker as soon as the file's result is known, before the process is
restored from the module's import; each request still gets exactly one reply, and a worker that could
not restore itself after replying serves no other file."""

from __future__ import annotations

import contextlib
import io
import json
import os
import textwrap
from pathlib import Path

from tilelens_lsp.pipeline import analyze_path
from tilelens_lsp.pipeline import file as pipeline_file
from tilelens_lsp.worker import main

KERNEL = textwrap.dedent("""\
    import os
    import triton
    import triton.language as tl

    os.environ["TILELENS_TEST_SCOPE_MARK"] = "imported"


    @triton.jit
    def k(x_ptr, BLOCK: tl.constexpr):
        tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)
    # tilelens: k[(1,)](fp32[16], BLOCK=16)
""")


def _file(tmp_path: Path) -> Path:
    path = tmp_path / "scoped.py"
    path.write_text(KERNEL)
    return path


def test_on_done_hears_the_returned_result_while_the_modules_scope_is_in_place(tmp_path):
    path = _file(tmp_path)
    heard = []
    result = analyze_path(path, tmp_path, on_done=lambda r: heard.append((r, os.environ.get("TILELENS_TEST_SCOPE_MARK"))))
    assert heard == [(result, "imported")]  # the import's environment, not yet undone
    assert "TILELENS_TEST_SCOPE_MARK" not in os.environ  # undone once the call returns
    assert [launch.status for launch in result.launches] == ["analyzed"]


def _serve(requests: list[dict]) -> tuple[int, list[dict]]:
    out = io.StringIO()
    code = main.serve(out, io.StringIO("".join(json.dumps(r) + "\n" for r in requests)), {"ready": True})
    return code, [json.loads(line) for line in out.getvalue().splitlines()[1:]]  # after the hello


def _analyze(path: Path, rid: int) -> dict:
    params = {"path": str(path), "workspace_root": str(path.parent), "stream": True}
    return {"id": rid, "method": "analyze", "params": params}


def test_each_analysis_gets_one_reply_and_the_same_as_before(tmp_path):
    path = _file(tmp_path)
    code, lines = _serve([_analyze(path, 1), _analyze(path, 2), {"id": 3, "method": "ping"}])
    assert code == 0
    replies = [line for line in lines if "event" not in line]
    assert [r["id"] for r in replies] == [1, 2, 3]
    for reply in replies[:2]:
        assert reply["result"]["path"] == "scoped.py" and "error" not in reply
    events = [(line["id"], line["event"]) for line in lines if "event" in line]
    assert events == [(1, "ready"), (1, "launch"), (2, "ready"), (2, "launch")]


def test_a_worker_that_cannot_restore_itself_after_replying_serves_no_other_file(tmp_path, monkeypatch, capsys):
    path = _file(tmp_path)

    @contextlib.contextmanager
    def unrestorable(roots):
        yield
        raise RuntimeError("could not put sys.path back")

    monkeypatch.setattr(pipeline_file, "file_scope", unrestorable)
    code, lines = _serve([_analyze(path, 1), {"id": 2, "method": "ping"}])
    replies = [line for line in lines if "event" not in line]
    assert [r["id"] for r in replies] == [1] and "error" not in replies[0]  # the file's own answer stands
    assert code == 1  # and the ping after it found no worker: the parent starts a fresh one
    assert "could not put sys.path back" in capsys.readouterr().err
