#!/usr/bin/env bash
# Packs the package as the registry would ship it, for installing from a checkout before it
# is published: builds when pkg/ is not the build of these sources (scripts/ensure-build.sh),
# then `npm pack`. Prints the tarball's path; `npm install <that path>` in an app installs it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-build.sh
file=$(npm pack --ignore-scripts --silent)
echo "$(pwd)/$file"
