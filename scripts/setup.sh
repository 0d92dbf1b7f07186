#!/usr/bin/env bash
# Installs what the test suite needs when it is missing (Debian packages,
# Rust targets and components, cargo tools, Python packages). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
need_apt=()
for pair in arm-none-eabi-gcc:gcc-arm-none-eabi qemu-system-arm:qemu-system-arm valgrind:valgrind \
            clang:clang cmake:cmake python3:python3; do
  command -v "${pair%%:*}" >/dev/null 2>&1 || need_apt+=("${pair#*:}")
done
[ -f /usr/lib/arm-none-eabi/newlib/libc.a ] || [ -d /usr/lib/arm-none-eabi/lib ] || need_apt+=(libnewlib-arm-none-eabi)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: apt-get install ${need_apt[*]}"
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" libnewlib-arm-none-eabi >/dev/null
fi
# clang's sanitizer runtimes (scripts/sanitize.sh): Debian's clang does not
# pull them in. Best effort: sanitize.sh falls back to gcc without them.
if command -v clang >/dev/null 2>&1; then
  probe=$(mktemp -d)
  echo 'int main(void) { return 0; }' > "$probe/p.c"
  if ! clang -fsanitize=address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
    major=$(clang -dumpversion | cut -d. -f1)
    echo "setup: apt-get install libclang-rt-$major-dev"
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "libclang-rt-$major-dev" >/dev/null) || true
  fi
  rm -rf "$probe"
fi
targets="thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf riscv32imc-unknown-none-elf riscv32imac-unknown-none-elf"
installed=$(rustup target list --installed)
for t in $targets; do
  grep -qx "$t" <<< "$installed" || rustup target add "$t" >/dev/null 2>&1
done
# The oldest Rust the library claims to build with (Cargo.toml rust-version),
# for the suite's `cargo +<rust-version> check` stage.
msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
rustup toolchain list | grep -q "^$msrv-" || rustup toolchain install "$msrv" --profile minimal >/dev/null 2>&1
if ! rustup toolchain list | grep -q '^nightly'; then rustup toolchain install nightly --profile minimal >/dev/null 2>&1; fi
rustup +nightly component list --installed 2>/dev/null | grep -q '^miri' || rustup +nightly component add miri rust-src >/dev/null 2>&1
rustup component list --installed | grep -q '^llvm-tools' || rustup component add llvm-tools >/dev/null 2>&1 || true
cbindgen --version 2>/dev/null | grep -q 0.29.4 || cargo install cbindgen --version 0.29.4 --locked -q
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked -q
python3 -c "import numpy, pytest" 2>/dev/null || python3 -m pip install -q numpy pytest
echo "setup: ok"
