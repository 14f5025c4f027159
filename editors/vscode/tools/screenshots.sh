#!/usr/bin/env bash
# Capture the README screenshots (images/screenshots/*.png) from a real code-server session that
# runs the packaged TileLens extension against the real tilelens-lsp server.
#
# Not part of CI, and not run by ci.sh: run it by hand after a change that shows in the editor.
# Written for a fresh Debian 12 machine, as root, with access to the Debian, npm and PyPI registries
# only (no GitHub or nodejs.org downloads are needed). It installs:
#   - apt: chromium, build-essential, pkg-config, libkrb5-dev, libsecret-1-dev (code-server's native
#     modules), ripgrep (stands in for @vscode/ripgrep, whose install script downloads from GitHub),
#     python3-venv, curl, optipng, fonts-dejavu-core;
#   - npm: code-server@$CODE_SERVER_VERSION into $WORK/cs (its postinstall is replayed by hand:
#     see install_code_server below);
#   - PyPI: playwright into the throwaway venv $WORK/pw-venv (driving the apt chromium: no
#     `playwright install`).
# Needs Node 20 (code-server 4.100 requires it) with its headers in $NODEDIR/include/node (the
# nodesource and Debian packages install them in /usr), and a Python with tilelens-lsp and Triton
# installed ($TILELENS_PYTHON, default: the repository's .venv).
#
# code-server listens on 127.0.0.1:$PORT only, with --auth none; it and chromium are stopped on
# exit. The workspace it opens is a copy of samples/ in $WORK/samples: the repository is not touched
# except for the PNGs written to editors/vscode/images/screenshots/.
#
#   bash editors/vscode/tools/screenshots.sh            # WORK=/tmp/tilelens-shots PORT=18080
set -euo pipefail

HERE="$(cd "$(dirname "$0")" && pwd)"
EXT_DIR="$(dirname "$HERE")"                 # editors/vscode
REPO="$(cd "$EXT_DIR/../.." && pwd)"
WORK="${WORK:-/tmp/tilelens-shots}"
PORT="${PORT:-18080}"
CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.100.3}"   # the newest code-server on npm for Node 20
TILELENS_PYTHON="${TILELENS_PYTHON:-$REPO/.venv/bin/python}"
NODEDIR="${NODEDIR:-$(dirname "$(dirname "$(command -v node)")")}"
OUT="$EXT_DIR/images/screenshots"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

log() { printf '\n== %s\n' "$*"; }

node -e 'if (+process.versions.node.split(".")[0] !== 20) { console.error(`Node ${process.version}: code-server ${process.argv[1]} needs Node 20`); process.exit(1); }' "$CODE_SERVER_VERSION"
[ -f "$NODEDIR/include/node/node.h" ] || { echo "no Node headers in $NODEDIR/include/node (set NODEDIR)" >&2; exit 1; }
"$TILELENS_PYTHON" -I -c 'import tilelens_lsp, triton' || { echo "$TILELENS_PYTHON cannot import tilelens_lsp and triton (set TILELENS_PYTHON)" >&2; exit 1; }

log "apt packages"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends chromium build-essential python3 python3-venv curl \
  pkg-config libkrb5-dev libsecret-1-dev ripgrep optipng fonts-dejavu-core >/dev/null

log "extension package"
VSIX="$(ls "$EXT_DIR"/tilelens-*.vsix 2>/dev/null | head -n1 || true)"
if [ -z "$VSIX" ]; then
  bash "$EXT_DIR/ci.sh"
  VSIX="$(ls "$EXT_DIR"/tilelens-*.vsix | head -n1)"
fi
echo "$VSIX"

install_code_server() {
  # `npm install code-server` runs postinstall.sh, which (as root, under npm 11) stops at its
  # --unsafe-perm check, and whose nested install runs @vscode/ripgrep's download from GitHub.
  # So: install with scripts off, then do what postinstall.sh does, building only the native
  # modules Linux uses and taking rg from Debian.
  local cs="$WORK/cs" vs
  export npm_config_nodedir="$NODEDIR"
  mkdir -p "$cs"
  npm install --prefix "$cs" --no-audit --no-fund --ignore-scripts "code-server@$CODE_SERVER_VERSION"
  (cd "$cs" && npm rebuild --foreground-scripts argon2)
  vs="$cs/node_modules/code-server/lib/vscode"
  (cd "$vs" && npm install --omit=dev --no-audit --no-fund --ignore-scripts)
  # node-pty's own install script ends with `npx node-gyp configure -f compile_commands_json`,
  # which fails without a global node-gyp after pty.node is built: build it with node-gyp directly.
  (cd "$vs" && npm rebuild --foreground-scripts kerberos @parcel/watcher @vscode/deviceid @vscode/spdlog native-watchdog)
  (cd "$vs/node_modules/node-pty" && node "$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js" rebuild)
  mkdir -p "$vs/node_modules/@vscode/ripgrep/bin"
  ln -sf "$(command -v rg)" "$vs/node_modules/@vscode/ripgrep/bin/rg"
  ln -sfn node_modules "$vs/node_modules.asar"
  (cd "$vs/bin/remote-cli" && ln -sf code-linux.sh code-server)
  (cd "$vs/bin/helpers" && ln -sf browser-linux.sh browser.sh)
  (cd "$vs/extensions" && npm install --omit=dev --no-audit --no-fund)
}

CS="$WORK/cs/node_modules/.bin/code-server"
log "code-server $CODE_SERVER_VERSION"
if ! "$CS" --config "$WORK/config.yaml" --version 2>/dev/null | grep -q "^$CODE_SERVER_VERSION "; then
  rm -rf "$WORK/cs"
  install_code_server
fi
CS_VERSION="code-server $("$CS" --config "$WORK/config.yaml" --version | grep -m1 '^[0-9]')"
echo "$CS_VERSION"

log "extension, settings and workspace"
rm -rf "$WORK/ext" "$WORK/user" "$WORK/samples" "$WORK/png"
mkdir -p "$WORK/user/User"
"$CS" --config "$WORK/config.yaml" --extensions-dir "$WORK/ext" --user-data-dir "$WORK/user" \
  --install-extension "$VSIX"
cat > "$WORK/user/User/settings.json" <<EOF
{
  "tilelens.interpreter": "$TILELENS_PYTHON",
  "workbench.colorTheme": "Default Dark Modern",
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "workbench.secondarySideBar.defaultVisibility": "hidden",
  "telemetry.telemetryLevel": "off",
  "security.workspace.trust.enabled": false,
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.ignoreRecommendations": true,
  "chat.commandCenter.enabled": false,
  "editor.fontSize": 15,
  "editor.minimap.enabled": false,
  "editor.hover.above": false
}
EOF
cp -r "$REPO/samples" "$WORK/samples"

log "playwright (PyPI) in $WORK/pw-venv"
[ -x "$WORK/pw-venv/bin/python" ] || python3 -m venv "$WORK/pw-venv"
"$WORK/pw-venv/bin/pip" install -q playwright pillow

log "code-server on 127.0.0.1:$PORT"
# Its own process group (setsid): the exit trap stops code-server with every extension host and
# language server under it (code-server keeps an extension host per browser session for a while).
setsid "$CS" --config "$WORK/config.yaml" --auth none --bind-addr "127.0.0.1:$PORT" \
  --disable-telemetry --disable-update-check --disable-workspace-trust \
  --disable-getting-started-override --extensions-dir "$WORK/ext" --user-data-dir "$WORK/user" \
  "$WORK/samples" >"$WORK/code-server.log" 2>&1 &
CS_PID=$!
trap 'kill -- -"$CS_PID" 2>/dev/null || true; wait "$CS_PID" 2>/dev/null || true' EXIT
for _ in $(seq 60); do
  curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" && break
  sleep 1
done

log "screenshots"
mkdir -p "$OUT"
"$WORK/pw-venv/bin/python" "$HERE/screenshots.py" "http://127.0.0.1:$PORT" "$WORK/samples" "$WORK/png" "$CHROMIUM"
for png in "$WORK"/png/*.png; do
  optipng -quiet -o2 "$png"
  "$WORK/pw-venv/bin/python" - "$png" <<'EOF'
import os, sys
from PIL import Image
path = sys.argv[1]
if os.path.getsize(path) > 400_000:  # lossy only when needed: a 256-colour palette
    Image.open(path).convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
EOF
  cp "$png" "$OUT/"
done
ls -l "$OUT"
echo "captured with $CS_VERSION"
