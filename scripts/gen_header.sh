#!/usr/bin/env bash
# Regenerates include/atome.h with the pinned cbindgen (installs it if missing).
# Usage: scripts/gen_header.sh [output]   (default include/atome.h)
set -euo pipefail
cd "$(dirname "$0")/.."
CBINDGEN_VERSION=0.29.4
if ! cbindgen --version 2>/dev/null | grep -q "$CBINDGEN_VERSION"; then
  cargo install cbindgen --version "$CBINDGEN_VERSION" --locked >&2
fi
cbindgen --config cbindgen.toml --crate atome --output "${1:-include/atome.h}" --quiet .
