# atome.cmake - build libatome.a with cargo and use it from a CMake project.
#
#   # optional knobs (cache variables; defaults = the reference's):
#   set(ATOME_D_MODEL 256 CACHE STRING "" FORCE)   # or -DATOME_D_MODEL=256
#   include(path/to/atome/cmake/atome.cmake)
#   target_link_libraries(app PRIVATE atome::atome)
#
# atome::atome is an imported static library carrying include/ and the
# -DATOME_* compile definitions that must match the library's build (a
# mismatch fails to link with "undefined reference to atome_cfg_<KNOB>_<value>").
# The library is built by cargo at build time (add_custom_command), once per
# configuration, into ${CMAKE_BINARY_DIR}/atome-cargo, and rebuilt when the
# Rust sources, Cargo.toml, build.rs or the knobs change. Cargo runs in the
# checkout, so .cargo/config.toml applies (the archive carries no LLVM
# bitcode, which GNU nm could not read). No Corrosion needed;
# cargo (rustup) must be installed, with the Rust target (the module runs
# `rustup target add` when rustup is there and the target is missing).
#
# Cache variables:
#   ATOME_D_MODEL ATOME_MAX_SEQ ATOME_N_LAYERS ATOME_N_PATHWAYS ATOME_VOCAB_SIZE
#   ATOME_D_HEAD ATOME_KERNEL_SIZE ATOME_TOP_K ATOME_MAX_CLASSES
#                       the model configuration (docs/API.md#build-configuration)
#   ATOME_STATE         lean (default), cached, or tiny (with ATOME_DTYPE=q15:
#                       the q15 state without a value cache, docs/Q15.md)
#   ATOME_DTYPE         f32 (default: the reference's bits) or q15 (integer
#                       activations, docs/Q15.md); q15 defines ATOME_DTYPE_Q15=1
#   ATOME_FEATURES      cargo features, e.g. "system-libm" (platform expf/tanhf)
#   ATOME_SIZE_FIRST    ON: the smallest engine code on microcontrollers (cargo
#                       feature size-first, about 8 KB of .text on Cortex-M4F;
#                       with ATOME_DTYPE=q15 the q15 kernels' portable
#                       routines, the same bits as the q15 build)
#                       instead of the device kernels (up to 24 KB, several
#                       times faster); same results either way. Default OFF.
#   ATOME_RUST_TARGET   Rust target triple; empty = derived (see below)
#   ATOME_CARGO_PROFILE cargo profile; empty = "firmware" (size-optimised)
#                       when cross-compiling, "release" on the host
#   ATOME_SOURCE_DIR    the atome checkout (default: this file's parent folder)
#   ATOME_CARGO         the cargo program
#
# Rust target derivation, when ATOME_RUST_TARGET is empty:
#   not cross-compiling                   -> the host (no --target)
#   -mcpu=cortex-m0/m0plus/m1             -> thumbv6m-none-eabi
#   -mcpu=cortex-m3                       -> thumbv7m-none-eabi
#   -mcpu=cortex-m4/m7   + -mfloat-abi=hard -> thumbv7em-none-eabihf, else thumbv7em-none-eabi
#                                            (softfp is the soft calling convention: eabi)
#   -mcpu=cortex-m23                      -> thumbv8m.base-none-eabi
#   -mcpu=cortex-m33/m35p/m55/m85 + hard  -> thumbv8m.main-none-eabihf, else thumbv8m.main-none-eabi
#   -march=rv32imc / rv32imac (-mabi=ilp32)  -> riscv32imc / riscv32imac-unknown-none-elf
#   -mabi=ilp32f (e.g. rv32imafc)           -> riscv32imafc-unknown-none-elf
# The flags are read from CMAKE_C_FLAGS, CMAKE_C_FLAGS_INIT and
# CMAKE_SYSTEM_PROCESSOR (a Cortex name or rv32... there also works).
# Xtensa (ESP32, ESP32-S2/S3) has no upstream Rust target: set
# ATOME_RUST_TARGET (e.g. xtensa-esp32-none-elf) and use the espup toolchain.

if(CMAKE_VERSION VERSION_LESS 3.17)
  message(FATAL_ERROR "atome.cmake needs CMake 3.17 or newer")
endif()
if(TARGET atome::atome)
  return()
endif()

get_filename_component(_atome_default_src "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(ATOME_SOURCE_DIR "${_atome_default_src}" CACHE PATH "atome source checkout")

# The knobs and their defaults: build.rs's KNOBS table (their one source).
file(STRINGS "${ATOME_SOURCE_DIR}/build.rs" _atome_knob_lines REGEX "Knob . name: \"ATOME_[A-Z_]+\", default: [0-9]+")
set(_atome_knobs)
set(_atome_defaults)
foreach(_l IN LISTS _atome_knob_lines)
  string(REGEX MATCH "name: \"ATOME_([A-Z_]+)\", default: ([0-9]+)" _m "${_l}")
  list(APPEND _atome_knobs "${CMAKE_MATCH_1}")
  list(APPEND _atome_defaults "${CMAKE_MATCH_2}")
endforeach()
list(LENGTH _atome_knobs _atome_nknobs)
if(NOT _atome_nknobs EQUAL 9)
  message(FATAL_ERROR "atome: read ${_atome_nknobs} knobs from ${ATOME_SOURCE_DIR}/build.rs, expected 9")
endif()
foreach(_k _d IN ZIP_LISTS _atome_knobs _atome_defaults)
  set(ATOME_${_k} "${_d}" CACHE STRING "atome build-time knob ATOME_${_k}")
  if(NOT ATOME_${_k} MATCHES "^[0-9]+$")
    message(FATAL_ERROR "ATOME_${_k}=${ATOME_${_k}} is not a whole number")
  endif()
endforeach()
set(ATOME_STATE "lean" CACHE STRING "atome state layout: lean, cached or tiny (q15 only)")
set_property(CACHE ATOME_STATE PROPERTY STRINGS lean cached tiny)
set(ATOME_DTYPE "f32" CACHE STRING "atome activation arithmetic: f32 (reference bits) or q15 (integer, docs/Q15.md)")
set_property(CACHE ATOME_DTYPE PROPERTY STRINGS f32 q15)
set(ATOME_FEATURES "" CACHE STRING "cargo features for atome (e.g. system-libm)")
option(ATOME_SIZE_FIRST "atome: smallest code instead of the device kernels (cargo feature size-first)" OFF)
set(ATOME_RUST_TARGET "" CACHE STRING "Rust target triple for atome (empty: derived from the toolchain)")
set(ATOME_CARGO_PROFILE "" CACHE STRING "cargo profile for atome (empty: firmware when cross-compiling, else release)")

find_program(ATOME_CARGO cargo HINTS "$ENV{CARGO_HOME}/bin" "$ENV{HOME}/.cargo/bin")
if(NOT ATOME_CARGO)
  message(FATAL_ERROR "atome: cargo not found (install Rust with rustup, or set ATOME_CARGO)")
endif()

# ---- Rust target --------------------------------------------------------
function(_atome_derive_target out)
  set(_flags "${CMAKE_C_FLAGS} ${CMAKE_C_FLAGS_INIT} ${CMAKE_SYSTEM_PROCESSOR}")
  string(TOLOWER "${_flags}" _flags)
  # Only -mfloat-abi=hard matches the Rust *-eabihf targets (floats in FPU
  # registers); softfp and soft use the soft-float calling convention.
  set(_hard FALSE)
  if(_flags MATCHES "-mfloat-abi=hard")
    set(_hard TRUE)
  endif()
  set(_cpu "")
  if(_flags MATCHES "-mcpu=([a-z0-9+.-]+)")
    set(_cpu "${CMAKE_MATCH_1}")
  elseif(_flags MATCHES "(cortex-m[0-9a-z]+)")
    set(_cpu "${CMAKE_MATCH_1}")
  endif()
  string(REGEX REPLACE "\\+.*" "" _cpu "${_cpu}")   # cortex-m33+nodsp -> cortex-m33
  set(_t "")
  if(_cpu MATCHES "^cortex-m(0|0plus|1)$")
    set(_t thumbv6m-none-eabi)
  elseif(_cpu STREQUAL "cortex-m3")
    set(_t thumbv7m-none-eabi)
  elseif(_cpu MATCHES "^cortex-m(4|7)$")
    if(_hard AND NOT _flags MATCHES "-mfpu=none")
      set(_t thumbv7em-none-eabihf)
    else()
      set(_t thumbv7em-none-eabi)
    endif()
  elseif(_cpu STREQUAL "cortex-m23")
    set(_t thumbv8m.base-none-eabi)
  elseif(_cpu MATCHES "^cortex-m(33|35p|55|85)$")
    if(_hard)
      set(_t thumbv8m.main-none-eabihf)
    else()
      set(_t thumbv8m.main-none-eabi)
    endif()
  elseif(_flags MATCHES "rv32([a-z0-9_]+)")         # -march=rv32imc_zicsr..., or a processor name
    set(_isa "${CMAKE_MATCH_1}")
    string(REGEX REPLACE "_.*" "" _isa "${_isa}")     # drop _zicsr_zifencei...
    if(_flags MATCHES "-mabi=ilp32d")
      message(FATAL_ERROR "atome: no bare-metal Rust target uses the ilp32d ABI; set ATOME_RUST_TARGET")
    elseif(_flags MATCHES "-mabi=ilp32f")
      set(_t riscv32imafc-unknown-none-elf)
    elseif(_isa MATCHES "a")
      set(_t riscv32imac-unknown-none-elf)
    else()
      set(_t riscv32imc-unknown-none-elf)
    endif()
  elseif(_flags MATCHES "xtensa|esp32")
    message(FATAL_ERROR "atome: Xtensa has no upstream Rust target; install the espup "
                        "toolchain and set ATOME_RUST_TARGET (e.g. xtensa-esp32-none-elf)")
  endif()
  if(NOT _t)
    message(FATAL_ERROR "atome: cannot derive the Rust target from the toolchain "
                        "(CMAKE_SYSTEM_PROCESSOR='${CMAKE_SYSTEM_PROCESSOR}', flags '${CMAKE_C_FLAGS}'); "
                        "set ATOME_RUST_TARGET")
  endif()
  set(${out} "${_t}" PARENT_SCOPE)
endfunction()

set(_atome_target "${ATOME_RUST_TARGET}")
if(NOT _atome_target AND CMAKE_CROSSCOMPILING)
  _atome_derive_target(_atome_target)
endif()
set(_atome_profile "${ATOME_CARGO_PROFILE}")
if(NOT _atome_profile)
  if(_atome_target)
    set(_atome_profile firmware)
  else()
    set(_atome_profile release)
  endif()
endif()
set(_atome_profile_dir "${_atome_profile}")
if(_atome_profile STREQUAL "dev")
  set(_atome_profile_dir debug)
endif()

if(_atome_target)
  find_program(ATOME_RUSTUP rustup HINTS "$ENV{CARGO_HOME}/bin" "$ENV{HOME}/.cargo/bin")
  if(ATOME_RUSTUP)
    execute_process(COMMAND "${ATOME_RUSTUP}" target list --installed
                    OUTPUT_VARIABLE _installed ERROR_QUIET RESULT_VARIABLE _rc)
    if(_rc EQUAL 0 AND NOT _installed MATCHES "(^|\n)${_atome_target}(\n|$)")
      message(STATUS "atome: rustup target add ${_atome_target}")
      execute_process(COMMAND "${ATOME_RUSTUP}" target add "${_atome_target}" RESULT_VARIABLE _rc)
      if(NOT _rc EQUAL 0)
        message(WARNING "atome: rustup target add ${_atome_target} failed")
      endif()
    endif()
  endif()
endif()

# ---- the cargo build ------------------------------------------------------
set(_atome_env)
set(_atome_defs)
set(_atome_tag "")
foreach(_k IN LISTS _atome_knobs)
  list(APPEND _atome_env "ATOME_${_k}=${ATOME_${_k}}")
  list(APPEND _atome_defs "ATOME_${_k}=${ATOME_${_k}}")
  string(APPEND _atome_tag "${ATOME_${_k}}-")
endforeach()
list(APPEND _atome_env "ATOME_STATE=${ATOME_STATE}")
if(ATOME_STATE STREQUAL "cached")
  list(APPEND _atome_defs "ATOME_STATE_CACHED=1")
elseif(ATOME_STATE STREQUAL "tiny")
  if(NOT ATOME_DTYPE STREQUAL "q15")
    message(FATAL_ERROR "ATOME_STATE=tiny needs ATOME_DTYPE=q15 (the tiny plan is the q15 engine's)")
  endif()
  list(APPEND _atome_defs "ATOME_STATE_TINY=1")
elseif(NOT ATOME_STATE STREQUAL "lean")
  message(FATAL_ERROR "ATOME_STATE must be lean, cached or tiny, not '${ATOME_STATE}'")
endif()
string(APPEND _atome_tag "${ATOME_STATE}")
list(APPEND _atome_env "ATOME_DTYPE=${ATOME_DTYPE}")
if(ATOME_DTYPE STREQUAL "q15")
  list(APPEND _atome_defs "ATOME_DTYPE_Q15=1")
  string(APPEND _atome_tag "_q15")
elseif(NOT ATOME_DTYPE STREQUAL "f32")
  message(FATAL_ERROR "ATOME_DTYPE must be f32 or q15, not '${ATOME_DTYPE}'")
endif()
set(_atome_feat_list ${ATOME_FEATURES})
if(ATOME_SIZE_FIRST)
  list(APPEND _atome_feat_list size-first)
  string(APPEND _atome_tag "_size_first")
endif()
string(REPLACE ";" "," _atome_feat "${_atome_feat_list}")
string(REPLACE " " "," _atome_feat "${_atome_feat}")

set(ATOME_CARGO_TARGET_DIR "${CMAKE_BINARY_DIR}/atome-cargo/${_atome_tag}")
set(_atome_args build --lib --profile "${_atome_profile}")
if(_atome_target)
  list(APPEND _atome_args --target "${_atome_target}")
  set(ATOME_LIBRARY "${ATOME_CARGO_TARGET_DIR}/${_atome_target}/${_atome_profile_dir}/libatome.a")
else()
  set(ATOME_LIBRARY "${ATOME_CARGO_TARGET_DIR}/${_atome_profile_dir}/libatome.a")
endif()
if(_atome_feat)
  list(APPEND _atome_args --features "${_atome_feat}")
endif()

file(GLOB_RECURSE _atome_sources CONFIGURE_DEPENDS "${ATOME_SOURCE_DIR}/src/*.rs")
add_custom_command(
  OUTPUT "${ATOME_LIBRARY}"
  COMMAND "${CMAKE_COMMAND}" -E env ${_atome_env} "CARGO_TARGET_DIR=${ATOME_CARGO_TARGET_DIR}"
          "${ATOME_CARGO}" ${_atome_args}
  WORKING_DIRECTORY "${ATOME_SOURCE_DIR}"
  DEPENDS ${_atome_sources} "${ATOME_SOURCE_DIR}/Cargo.toml" "${ATOME_SOURCE_DIR}/build.rs"
          "${ATOME_SOURCE_DIR}/include/atome.h"
  COMMENT "cargo: building libatome.a (${_atome_profile}, ${_atome_target}${_atome_feat})"
  USES_TERMINAL
  VERBATIM)
add_custom_target(atome_cargo DEPENDS "${ATOME_LIBRARY}")

add_library(atome::atome STATIC IMPORTED GLOBAL)
set_target_properties(atome::atome PROPERTIES
  IMPORTED_LOCATION "${ATOME_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${ATOME_SOURCE_DIR}/include"
  INTERFACE_COMPILE_DEFINITIONS "${_atome_defs}")
if(NOT _atome_target AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  # A host staticlib from Rust may reference libm (system-libm) and libdl/pthread.
  set_property(TARGET atome::atome APPEND PROPERTY INTERFACE_LINK_LIBRARIES m)
endif()
if(_atome_target AND _atome_feat MATCHES "system-libm")
  # On the none targets compiler_builtins (inside libatome.a) carries weak
  # expf/tanhf (a Rust libm port): with libm after libatome.a the linker
  # takes those, not the C library's. Pull the C library's in first.
  set_property(TARGET atome::atome APPEND PROPERTY INTERFACE_LINK_OPTIONS
               "LINKER:-u,expf" "LINKER:-u,tanhf" "-lm")
endif()
add_dependencies(atome::atome atome_cargo)

set(ATOME_RUST_TARGET_RESOLVED "${_atome_target}")
message(STATUS "atome: ${ATOME_LIBRARY} (target ${_atome_target}, profile ${_atome_profile}, "
               "D=${ATOME_D_MODEL} L=${ATOME_N_LAYERS} S=${ATOME_MAX_SEQ} V=${ATOME_VOCAB_SIZE} ${ATOME_STATE} ${ATOME_DTYPE})")
