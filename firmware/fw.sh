# Shared shell helpers for scripts/cross.sh, scripts/qemu_parity.sh,
# scripts/cortex_bench.sh and scripts/cmake_test.sh. Source it; do not run it.
#
# Environment it honours:
#   ATOME_SHARED   folder holding models/ and golden/ (default: ../shared next
#                  to the checkout, else shared/ inside it)
#   FW_BUILD       scratch folder for firmware builds (default target/fw-build)

FW_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FW_DIR="$FW_ROOT/firmware"
FW_BUILD="${FW_BUILD:-$FW_ROOT/target/fw-build}"

if [ -z "${ATOME_SHARED:-}" ]; then
    for c in "$FW_ROOT/../shared" "$FW_ROOT/shared"; do
        if [ -f "$c/golden/golden_visible.json" ]; then ATOME_SHARED="$(cd "$c" && pwd)"; break; fi
    done
fi
FW_MODELS="${ATOME_SHARED:-}/models"
FW_GOLDEN="${ATOME_SHARED:-}/golden/golden_visible.json"

FW_ALL_TARGETS="thumbv6m-none-eabi thumbv7m-none-eabi thumbv7em-none-eabi thumbv7em-none-eabihf thumbv8m.main-none-eabihf riscv32imc-unknown-none-elf riscv32imac-unknown-none-elf"

fw_log() { printf '%s\n' "$*" >&2; }
fw_die() { printf 'error: %s\n' "$*" >&2; exit 1; }
fw_now() { date +%s; }

# ---------------------------------------------------------------- tools --

# fw_ensure_tools [apt] [rust] [llvm] [cmake]
# Installs what is missing: Debian packages as root with apt-get, Rust
# targets and llvm-tools with rustup.
fw_ensure_tools() {
    local want_apt=0 want_rust=0 want_llvm=0 want_cmake=0 a
    for a in "$@"; do
        case "$a" in apt) want_apt=1 ;; rust) want_rust=1 ;; llvm) want_llvm=1 ;; cmake) want_cmake=1 ;; esac
    done
    local pkgs=""
    if [ $want_apt = 1 ]; then
        command -v arm-none-eabi-gcc >/dev/null 2>&1 || pkgs="$pkgs gcc-arm-none-eabi"
        # newlib: the C headers and libc the CMake/newlib link test uses
        if ! command -v arm-none-eabi-gcc >/dev/null 2>&1 || \
           [ ! -f "$(arm-none-eabi-gcc -mcpu=cortex-m3 -mthumb -print-file-name=libc_nano.a 2>/dev/null)" ]; then
            pkgs="$pkgs libnewlib-arm-none-eabi"
        fi
        command -v qemu-system-arm >/dev/null 2>&1 || pkgs="$pkgs qemu-system-arm"
        command -v qemu-system-riscv32 >/dev/null 2>&1 || pkgs="$pkgs qemu-system-misc"
        command -v clang >/dev/null 2>&1 || pkgs="$pkgs clang"
        command -v python3 >/dev/null 2>&1 || pkgs="$pkgs python3"
        command -v gcc >/dev/null 2>&1 || pkgs="$pkgs gcc"
    fi
    if [ $want_cmake = 1 ]; then
        command -v cmake >/dev/null 2>&1 || pkgs="$pkgs cmake"
        command -v make >/dev/null 2>&1 || pkgs="$pkgs make"
    fi
    if [ -n "$pkgs" ]; then
        fw_log "installing:$pkgs"
        if [ "$(id -u)" != 0 ]; then fw_die "need root to apt-get install$pkgs"; fi
        export DEBIAN_FRONTEND=noninteractive
        apt-get -o DPkg::Lock::Timeout=900 update -qq >/dev/null || fw_die "apt-get update failed"
        # shellcheck disable=SC2086
        apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends $pkgs >/dev/null \
            || fw_die "apt-get install$pkgs failed"
    fi
    if [ $want_rust = 1 ]; then
        local inst missing="" t
        inst="$(rustup target list --installed 2>/dev/null)"
        for t in $FW_ALL_TARGETS; do
            grep -qx "$t" <<< "$inst" || missing="$missing $t"
        done
        if [ -n "$missing" ]; then
            fw_log "rustup target add$missing"
            # shellcheck disable=SC2086
            rustup target add $missing >/dev/null || fw_die "rustup target add$missing failed"
        fi
    fi
    if [ $want_llvm = 1 ]; then
        if [ ! -x "$(fw_llvm_bin llvm-nm)" ]; then
            fw_log "rustup component add llvm-tools"
            rustup component add llvm-tools >/dev/null 2>&1 || rustup component add llvm-tools-preview >/dev/null \
                || fw_die "rustup component add llvm-tools failed"
        fi
    fi
}

# Path of a tool from rustup's llvm-tools (same LLVM as rustc).
fw_llvm_bin() {
    local sysroot host
    sysroot="$(rustc --print sysroot)"
    host="$(rustc -vV | sed -n 's/^host: //p')"
    printf '%s\n' "$sysroot/lib/rustlib/$host/bin/$1"
}

# ------------------------------------------------------- configurations --

# fw_knobs CONFIG: "ATOME_VOCAB_SIZE=.. ATOME_D_MODEL=.." for a golden
# configuration name, or the defaults for "default-config".
fw_knobs() {
    python3 - "$FW_GOLDEN" "$1" "$FW_ROOT/build.rs" <<'EOF'
import json, re, sys
name = sys.argv[2]
m = [("V", "ATOME_VOCAB_SIZE"), ("D", "ATOME_D_MODEL"), ("L", "ATOME_N_LAYERS"),
     ("DH", "ATOME_D_HEAD"), ("K", "ATOME_KERNEL_SIZE"), ("TOPK", "ATOME_TOP_K"), ("S", "ATOME_MAX_SEQ")]
if name == "default-config":
    # the defaults of build.rs's KNOBS table (their one source)
    d = dict(re.findall(r'Knob \{ name: "(ATOME_\w+)", default: (\d+)', open(sys.argv[3]).read()))
    c = {k: int(d[e]) for k, e in m}
else:
    c = json.load(open(sys.argv[1]))[name]["config"]
print(" ".join("%s=%d" % (e, c[k]) for k, e in m))
EOF
}

# "-DATOME_VOCAB_SIZE=.. ..." from a knob string
fw_knob_defs() {
    local k out=""
    for k in $1; do out="$out -D$k"; done
    printf '%s\n' "$out"
}

# --------------------------------------------------------------- targets --

fw_target_cflags() {
    case "$1" in
        thumbv6m-none-eabi)        echo "-mcpu=cortex-m0 -mthumb -mfloat-abi=soft" ;;
        thumbv7m-none-eabi)        echo "-mcpu=cortex-m3 -mthumb -mfloat-abi=soft" ;;
        thumbv7em-none-eabi)       echo "-mcpu=cortex-m4 -mthumb -mfloat-abi=soft" ;;
        thumbv7em-none-eabihf)     echo "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16" ;;
        thumbv8m.main-none-eabihf) echo "-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16" ;;
        riscv32imc-unknown-none-elf)  echo "--target=riscv32-unknown-elf -march=rv32imc -mabi=ilp32 -mno-relax" ;;
        riscv32imac-unknown-none-elf) echo "--target=riscv32-unknown-elf -march=rv32imac -mabi=ilp32 -mno-relax" ;;
        *) fw_die "no C flags for target $1" ;;
    esac
}

# board -> "qemu-machine linker-script board-define"
fw_board() {
    case "$1" in
        microbit)   echo "microbit microbit.ld FW_BOARD_MICROBIT" ;;
        mps2-an385) echo "mps2-an385 mps2-an385.ld FW_BOARD_MPS2" ;;
        mps2-an386) echo "mps2-an386 mps2-an386.ld FW_BOARD_MPS2" ;;
        mps2-an500) echo "mps2-an500 mps2-an500.ld FW_BOARD_MPS2" ;;
        mps2-an505) echo "mps2-an505 mps2-an505.ld FW_BOARD_MPS2_AN505" ;;
        riscv-virt) echo "virt riscv-virt.ld FW_BOARD_RISCV_VIRT" ;;
        *) fw_die "unknown board $1" ;;
    esac
}

# fw_cargo_build CFGNAME "KNOBS" PROFILE TARGET... : builds libatome.a for
# every listed target (one cargo invocation, one CARGO_TARGET_DIR per
# configuration). TARGET "host" means the machine's own target.
fw_cargo_build() {
    local cfg="$1" knobs="$2" profile="$3"; shift 3
    local args="" t
    for t in "$@"; do
        if [ "$t" = host ]; then args="$args --target $(rustc -vV | sed -n 's/^host: //p')"; else args="$args --target $t"; fi
    done
    local log="$FW_ROOT/target/fw/$cfg.build.log"
    mkdir -p "$FW_ROOT/target/fw"
    # shellcheck disable=SC2086
    if ! (cd "$FW_ROOT" && env $knobs CARGO_TARGET_DIR="$FW_ROOT/target/fw/$cfg" \
            cargo build --lib --profile "$profile" $args ${FW_CARGO_FEATURES:-}) > "$log" 2>&1; then
        grep -v "dropping unsupported crate type" "$log" | tail -40 >&2
        return 1
    fi
}

# fw_crate_build DIR OUTDIR PROFILE TARGET... : builds a firmware-side test
# crate (firmware/q15mv, firmware/softcheck: a staticlib over the library)
# for every listed target into OUTDIR/cargo; its library for a target is
# OUTDIR/cargo/TARGET/PROFILE/lib<name>.a. The log is OUTDIR/build.log.
fw_crate_build() {
    local dir="$1" out="$2" profile="$3"; shift 3
    local args="" t
    for t in "$@"; do args="$args --target $t"; done
    mkdir -p "$out"
    # shellcheck disable=SC2086
    if ! (cd "$FW_ROOT/$dir" && CARGO_TARGET_DIR="$out/cargo" cargo build --profile "$profile" $args) > "$out/build.log" 2>&1; then
        grep -v "dropping unsupported crate type" "$out/build.log" | tail -30 >&2
        return 1
    fi
}

fw_lib_path() { # CFGNAME PROFILE TARGET
    local t="$3"
    [ "$t" = host ] && t="$(rustc -vV | sed -n 's/^host: //p')"
    printf '%s\n' "$FW_ROOT/target/fw/$1/$t/$2/libatome.a"
}

# fw_link_firmware OUT.elf BOARD TARGET LIBATOME "KNOBS" "EXTRA_CFLAGS" SOURCES...
# Compiles the start-up code, semihosting and the given sources for the
# board and links them with libatome.a. Arm: arm-none-eabi-gcc, no newlib
# (-nostdlib, libgcc last). RISC-V: clang --target=riscv32 (freestanding)
# and rust-lld, no C library at all.
# FW_LDPRE: link arguments placed before the objects (e.g. -lm first);
# FW_LDFLAGS: appended at the end; FW_LDSPECS replaces -nostdlib (Arm);
# FW_LDSCRIPT: another linker script in place of the board's (a part's
# memory map, firmware/boards/*/board.ld; it may INCLUDE common.ld).
fw_link_firmware() {
    local out="$1" board="$2" target="$3" lib="$4" knobs="$5" extra="$6"; shift 6
    local b mach ld def cflags cc start
    b="$(fw_board "$board")"; set -- $b "$@"
    mach="$1"; ld="$2"; def="$3"; shift 3
    case "$target" in
        riscv*) cc=clang; start="$FW_DIR/common/startup_riscv.c" ;;
        *) cc=arm-none-eabi-gcc; start="$FW_DIR/common/startup.c" ;;
    esac
    cflags="$(fw_target_cflags "$target") -Os -g -std=gnu11 -Wall -Wextra -Werror -ffreestanding \
        -fno-tree-loop-distribute-patterns -ffunction-sections -fdata-sections -D$def \
        -I$FW_ROOT/include -I$FW_DIR/common $(fw_knob_defs "$knobs") $extra"
    [ $cc = clang ] && cflags="${cflags/-fno-tree-loop-distribute-patterns/-fno-builtin}"
    local objdir="${out%.elf}.obj" src objs=""
    mkdir -p "$objdir"
    for src in "$start" "$FW_DIR/common/stack.c" "$FW_DIR/common/semihost.c" "$@"; do
        local o="$objdir/$(basename "${src%.*}").o"
        # shellcheck disable=SC2086
        $cc $cflags -c "$src" -o "$o" || return 1
        objs="$objs $o"
    done
    if [ $cc = clang ]; then
        # shellcheck disable=SC2086
        "$(fw_llvm_bin rust-lld)" -flavor gnu --gc-sections --no-relax -Map="${out%.elf}.map" \
            -L"$FW_DIR/ld" -T "${FW_LDSCRIPT:-$FW_DIR/ld/$ld}" ${FW_LDPRE:-} $objs "$lib" -o "$out" ${FW_LDFLAGS:-}
        return
    fi
    # shellcheck disable=SC2086
    arm-none-eabi-gcc $(fw_target_cflags "$target") ${FW_LDSPECS:--nostdlib} -nostartfiles \
        -Wl,--gc-sections -Wl,-Map="${out%.elf}.map" -Wl,--no-warn-rwx-segments -Wl,-z,noexecstack \
        -L"$FW_DIR/ld" -T "${FW_LDSCRIPT:-$FW_DIR/ld/$ld}" ${FW_LDPRE:-} $objs "$lib" -lgcc -o "$out" ${FW_LDFLAGS:-}
}

# fw_qemu BOARD ELF TIMEOUT [extra qemu args] : runs the firmware, semihosting
# output on stdout; exit status is the firmware's (124 on timeout).
fw_qemu() {
    local board="$1" elf="$2" to="$3"; shift 3
    local mach
    mach="$(fw_board "$board" | cut -d' ' -f1)"
    local qemu=qemu-system-arm
    case "$board" in riscv-*) qemu=qemu-system-riscv32; set -- -bios none "$@" ;; esac
    timeout "$to" $qemu -M "$mach" -nographic -monitor none -serial none \
        -semihosting-config enable=on,target=native -kernel "$elf" "$@" </dev/null
}
