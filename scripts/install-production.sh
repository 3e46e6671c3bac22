#!/bin/sh
# The one production install path (docs/operations.md), run by the Dockerfile's runtime stage and
# by test/production-install.test.ts: a packed release (`npm pack` after `npm run build`, so dist/
# is in it, built) unpacked into a folder and installed with its runtime dependencies only, exactly
# the versions of the project's package-lock.json (npm never packs a lockfile, so it comes beside).
#
#   scripts/install-production.sh <kassir-x.y.z.tgz> <package-lock.json> <folder>
#
# Extra npm flags come from KASSIR_NPM_FLAGS (the test passes --offline: the npm cache has it all).
set -eu
if [ "$#" -ne 3 ]; then
  echo "usage: $0 <kassir-x.y.z.tgz> <package-lock.json> <folder>" >&2
  exit 2
fi
tarball=$1
lock=$2
target=$3
mkdir -p "$target"
tar -xzf "$tarball" -C "$target" --strip-components=1
cp "$lock" "$target/package-lock.json"
cd "$target"
# --omit=dev: no build tool, test runner or web framework in what runs. The package's own prepare
# script sees dist/ without sources and builds nothing (scripts/build-stamp.mjs ensure).
# shellcheck disable=SC2086
npm ci --omit=dev --no-audit --no-fund ${KASSIR_NPM_FLAGS:-}
test -f dist/main.js
echo "kassir: installed in $(pwd) ($(du -sh node_modules | cut -f1) of runtime dependencies)"
