#!/usr/bin/env bash
# The main job: serve the demo page (www/) with the embedded scripted demo model, and print
# its URL. Builds the package first when pkg/ is not the build of these sources, with only
# the setup the build needs (scripts/ensure-build.sh).
# Arguments go to the server: --port N (default 8787, or $PORT), --host H, --allowed-hosts a,b,
# --worker URL.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-build.sh
exec node www/server.mjs "$@"
