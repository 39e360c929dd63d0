#!/usr/bin/env bash
# Installs the CPU engine's Node.js dependencies for linux-x64 only: node-llama-cpp (exact version
# from package-lock.json) and its prebuilt linux-x64 CPU binaries, without the optional GPU
# (CUDA, Vulkan) and other-platform packages and without running install scripts.
# Idempotent: does nothing when node_modules already matches. Quiet unless something fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

die() { echo "install.sh: $*" >&2; exit 1; }
command -v node >/dev/null || die "node not found (Node.js 20 or newer is needed)"
command -v npm >/dev/null || die "npm not found"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  die "Node.js 20 or newer is needed (found $(node --version))"
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || die "only linux-x64 is supported (found $(uname -s)-$(uname -m))"

# The platform package's version and integrity, read from the lockfile (single source of truth).
read -r bin_version bin_integrity < <(node -e '
  const p = JSON.parse(require("fs").readFileSync("package-lock.json", "utf8")).packages;
  const e = p["node_modules/@node-llama-cpp/linux-x64"];
  if (!e) process.exit(1);
  console.log(e.version + " " + e.integrity);') || die "package-lock.json has no @node-llama-cpp/linux-x64 entry"
core_version=$(node -e 'console.log(JSON.parse(require("fs").readFileSync("package-lock.json", "utf8")).packages["node_modules/node-llama-cpp"].version)')

installed_version() {  # $1 = package dir; prints its version or nothing
  if [ -f "$1/package.json" ]; then
    node -e 'console.log(require(process.argv[1]).version)' "$PWD/$1/package.json"
  fi
}

if [ "$(installed_version node_modules/node-llama-cpp)" != "$core_version" ]; then
  npm ci --omit=optional --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
fi

bin_dir=node_modules/@node-llama-cpp/linux-x64
if [ "$(installed_version "$bin_dir")" != "$bin_version" ]; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  npm pack --silent --pack-destination "$tmp" "@node-llama-cpp/linux-x64@$bin_version" >/dev/null
  tgz=$(ls "$tmp"/*.tgz)
  got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
  [ "$got" = "$bin_integrity" ] || die "integrity mismatch for $tgz: lockfile $bin_integrity, got $got"
  rm -rf "$bin_dir"
  mkdir -p "$bin_dir"
  tar -xzf "$tgz" -C "$bin_dir" --strip-components=1
fi

# Check that the prebuilt CPU backend loads (no build, no download).
node server.mjs --check || die "node-llama-cpp failed to load its prebuilt linux-x64 CPU backend"
