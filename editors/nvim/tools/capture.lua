-- Drives a real headless Neovim 0.11 against tilelens-lsp and writes what a user would see: the text
-- captures in editors/nvim/README.md come from this script.
--   D=$(mktemp -d); mkdir -p $D/ws $D/outside; touch $D/ws/tilelens.toml
--   cp samples/buggy_kernels.py $D/ws/kernels.py; cp samples/vector_add.py $D/outside/add.py
--   TILELENS_PYTHON=.venv/bin/python TILELENS_REPO=$PWD TILELENS_CAPTURE_DIR=$D nvim --headless --clean -u editors/nvim/tools/capture.lua
--   cat $D/capture.txt
local repo = assert(os.getenv("TILELENS_REPO"), "set TILELENS_REPO")
local dir = assert(os.getenv("TILELENS_CAPTURE_DIR"), "set TILELENS_CAPTURE_DIR")
local out = {}
local function say(s) table.insert(out, s) end
vim.opt.runtimepath:prepend(repo .. "/editors/nvim")
vim.g.tilelens_cmd = { os.getenv("TILELENS_PYTHON") or "python3", "-m", "tilelens_lsp" }
vim.lsp.enable("tilelens")

local function wait_diags(buf, pred)
  return vim.wait(60000, function() return pred(vim.diagnostic.get(buf)) end, 100)
end

local function run()
  vim.cmd.edit(dir .. "/ws/kernels.py")
  local buf = vim.api.nvim_get_current_buf()
  vim.wait(20000, function() return #vim.lsp.get_clients({ bufnr = buf, name = "tilelens" }) > 0 end, 50)
  local client = vim.lsp.get_clients({ bufnr = buf, name = "tilelens" })[1]
  wait_diags(buf, function(d) return #d >= 3 end)
  say("== :lua for _, d in ipairs(vim.diagnostic.get(0)) do print(...) end")
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    say(string.format("%d:%d %s [%s] %s", d.lnum + 1, d.col + 1, vim.diagnostic.severity[d.severity], d.code, d.message))
  end

  vim.lsp.codelens.refresh({ bufnr = buf })
  vim.wait(10000, function() return #vim.lsp.codelens.get(buf) > 0 end, 50)
  say("")
  say("== :lua vim.lsp.codelens.refresh()  (lenses, by line)")
  local lenses = vim.lsp.codelens.get(buf)
  table.sort(lenses, function(a, b) return a.range.start.line < b.range.start.line end)
  for _, l in ipairs(lenses) do
    say(string.format("%d: %s", l.range.start.line + 1, l.command and l.command.title or "?"))
  end

  say("")
  say("== vim.lsp.buf.code_action() on line 27 (the int32 overflow)")
  local diags = vim.tbl_filter(function(d) return d.lnum == 26 end, vim.diagnostic.get(buf))
  local lsp_diags = vim.tbl_map(function(d) return d.user_data.lsp end, diags)
  local params = { textDocument = { uri = vim.uri_from_bufnr(buf) },
                   range = { start = { line = 26, character = 0 }, ["end"] = { line = 26, character = 0 } },
                   context = { diagnostics = lsp_diags } }
  local res = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 10000)
  for _, r in pairs(res or {}) do
    for i, a in ipairs(r.result or {}) do
      say(string.format("%d. %s%s", i, a.title, a.isPreferred and "  (preferred)" or ""))
    end
  end
  -- apply the preferred fix and save
  for _, r in pairs(res or {}) do
    for _, a in ipairs(r.result or {}) do
      if a.isPreferred then
        vim.lsp.util.apply_workspace_edit(a.edit, client.offset_encoding)
      end
    end
  end
  vim.cmd.write()
  wait_diags(buf, function(d)
    for _, x in ipairs(d) do if x.code == "TL003" then return false end end
    return true
  end)
  say("")
  say("== after applying the preferred fix and :w")
  say("27: " .. vim.api.nvim_buf_get_lines(buf, 26, 27, false)[1])
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    say(string.format("%d:%d %s [%s] %s", d.lnum + 1, d.col + 1, vim.diagnostic.severity[d.severity], d.code, d.message))
  end

  -- TL100: a kernel without a launch; the preferred quick fix, resolved and applied by Neovim itself
  local lonely = dir .. "/ws/lonely.py"
  local f = io.open(lonely, "w")
  f:write(table.concat({
    "import triton", "import triton.language as tl", "", "",
    "@triton.jit",
    "def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):",
    "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
    "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)", "" }, "\n"))
  f:close()
  vim.cmd.edit(lonely)
  local lbuf = vim.api.nvim_get_current_buf()
  wait_diags(lbuf, function(d) return #d >= 1 end)
  say("")
  say("== lonely.py, a kernel without a launch")
  for _, d in ipairs(vim.diagnostic.get(lbuf)) do
    say(string.format("%d:%d %s [%s] %s", d.lnum + 1, d.col + 1, vim.diagnostic.severity[d.severity], d.code, d.message))
  end
  say("")
  say("== :lua vim.lsp.buf.code_action({ apply = true, filter = function(a) return a.isPreferred end })  then :w")
  local n = vim.api.nvim_buf_line_count(lbuf)
  vim.api.nvim_win_set_cursor(0, { 6, 0 })
  vim.lsp.buf.code_action({ apply = true, filter = function(a) return a.isPreferred end })
  vim.wait(30000, function() return vim.api.nvim_buf_line_count(lbuf) > n end, 100)
  for i, l in ipairs(vim.api.nvim_buf_get_lines(lbuf, 4, 10, false)) do say(string.format("%d: %s", i + 4, l)) end
  vim.cmd.write()
  wait_diags(lbuf, function(d) return #d == 0 end)
  say(#vim.diagnostic.get(lbuf) .. " diagnostics")
  vim.lsp.codelens.refresh({ bufnr = lbuf })
  vim.wait(5000, function() return #vim.lsp.codelens.get(lbuf) > 0 end, 50)
  for _, l in ipairs(vim.lsp.codelens.get(lbuf)) do
    say(string.format("lens %d: %s", l.range.start.line + 1, l.command and l.command.title or "?"))
  end

  -- A file outside any project root
  vim.cmd.edit(dir .. "/outside/add.py")
  local obuf = vim.api.nvim_get_current_buf()
  vim.wait(20000, function() return #vim.lsp.get_clients({ bufnr = obuf, name = "tilelens" }) > 0 end, 50)
  local oc = vim.lsp.get_clients({ bufnr = obuf, name = "tilelens" })[1]
  say("")
  say("== a file outside any root: " .. vim.fn.expand("%:p") .. " (root_dir: " .. tostring(oc and oc.root_dir) .. ")")
  wait_diags(obuf, function(d) return #d >= 1 end)
  for _, d in ipairs(vim.diagnostic.get(obuf)) do
    say(string.format("%d:%d %s %s", d.lnum + 1, d.col + 1, vim.diagnostic.severity[d.severity], d.message))
  end
  say("")
  say("== :lua vim.lsp.buf.add_workspace_folder(vim.fn.expand('%:p:h'))  then :w")
  vim.lsp.buf.add_workspace_folder(vim.fn.expand("%:p:h"))
  vim.wait(500)
  vim.cmd.write()
  wait_diags(obuf, function(d) return #d == 0 or d[1].source == "tilelens" and d[1].code ~= nil end)
  vim.wait(3000, function() return #vim.diagnostic.get(obuf) == 0 end, 100)
  say(#vim.diagnostic.get(obuf) .. " diagnostics")
  vim.lsp.codelens.refresh({ bufnr = obuf })
  vim.wait(5000, function() return #vim.lsp.codelens.get(obuf) > 0 end, 50)
  for _, l in ipairs(vim.lsp.codelens.get(obuf)) do
    say(string.format("lens %d: %s", l.range.start.line + 1, l.command and l.command.title or "?"))
  end
end

vim.api.nvim_create_autocmd("VimEnter", { once = true, nested = true, callback = function()
  local ok, err = xpcall(run, debug.traceback)
  if not ok then say("ERROR " .. tostring(err)) end
  local f = io.open(dir .. "/capture.txt", "w"); f:write(table.concat(out, "\n") .. "\n"); f:close()
  vim.cmd("qa!")
end })
