-- tilelens-lsp for Neovim 0.11+: static memory checks for Triton kernels.
--
-- Put editors/nvim on 'runtimepath' (or copy this file to ~/.config/nvim/lsp/tilelens.lua), then
-- call vim.lsp.enable("tilelens"). Override anything with vim.lsp.config("tilelens", { ... }).
-- vim.g.tilelens_cmd (a list, or a string naming the executable) replaces the server command if it
-- is set before the first Python buffer opens, e.g. { "/path/to/venv/bin/python", "-I", "-m", "tilelens_lsp" }.

local cmd = vim.g.tilelens_cmd
if type(cmd) == "string" then
  cmd = { cmd }
end

---@type vim.lsp.Config
return {
  cmd = cmd or { "tilelens-lsp" },
  -- toml: so that saving tilelens.toml / pyproject.toml reaches the server (Neovim watches no files
  -- on Linux), which re-analyses the open kernels and shows the toml's own errors in it
  filetypes = { "python", "toml" },
  root_markers = { "tilelens.toml", "pyproject.toml", ".git" },
  -- Same keys as the VS Code settings: target, workerTimeout, interpreter, clients.
  init_options = { target = "cuda:89" },
  -- Sent as workspace/didChangeConfiguration after start. An empty Lua table would encode as a
  -- JSON list; vim.empty_dict() keeps it an object.
  settings = { tilelens = vim.empty_dict() },
}
