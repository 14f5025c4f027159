#!/usr/bin/env bash
# Build, unit-test and package the VS Code extension from a fresh clone: needs Node 20+ and npm
# (reaching the npm registry, or a warm npm cache). Leaves tilelens-<version>.vsix in this folder.
set -euo pipefail
cd "$(dirname "$0")"

node -e 'if (+process.versions.node.split(".")[0] < 20) { console.error(`Node ${process.version}: 20 or newer is needed`); process.exit(1); }'

rm -rf out dist ./*.vsix
npm ci --no-audit --no-fund
npm run build
npm test
npm run package
ls -l ./*.vsix
