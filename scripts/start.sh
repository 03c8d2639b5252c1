#!/usr/bin/env bash
# The main job: set up what is missing, build the package when its sources changed, then
# serve the demo page (www/) with the embedded scripted demo model. Prints the URL.
# Arguments go to the server: --port N (default 8787, or $PORT), --host H, --allowed-hosts a,b.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
wasm=pkg/pi_agent_wasm_bg.wasm
if [ ! -f "$wasm" ] || [ -n "$(find src Cargo.toml Cargo.lock -newer "$wasm" -print -quit)" ]; then
  bash scripts/build.sh
fi
exec node www/server.mjs "$@"
