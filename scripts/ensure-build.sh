#!/usr/bin/env bash
# Makes pkg/ the build of the current sources, for `npm start` and `npm run tarball`: nothing
# when it already is; a copy when these sources were built on this machine before (in another
# clone, say: scripts/build.sh keeps the recent builds under scripts/build-key.sh's key);
# otherwise the build's own setup (scripts/setup.sh demo) and the build.
set -euo pipefail
cd "$(dirname "$0")/.."

key=$(bash scripts/build-key.sh)
cache="${XDG_CACHE_HOME:-$HOME/.cache}/pi-agent-wasm/builds/$key"
if [ -f pkg/pi_agent_wasm_bg.wasm ] && [ "$(cat target/pkg.key 2>/dev/null)" = "$key" ]; then
  echo "[build] pkg/ is the build of these sources"
elif [ -f "$cache/pkg/pi_agent_wasm_bg.wasm" ]; then
  echo "[build] these sources were built on this machine before: copying that build into pkg/"
  rm -rf pkg
  cp -r "$cache/pkg" pkg
  mkdir -p target
  cp "$cache/size-report.json" target/
  echo "$key" >target/pkg.key
else
  bash scripts/setup.sh demo
  echo "[build] building the package (about a minute on two cores; again after each change of the sources)"
  bash scripts/build.sh
fi
