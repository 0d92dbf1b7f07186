//! Reads the ATOME_* build-time configuration (docs/API.md#build-configuration) from the
//! environment, validates it and writes it as Rust constants. The same names
//! configure the C header, and each value is also exported as a link-time
//! marker symbol so a C file built for another configuration fails to link.
use std::env;
use std::fs;
use std::path::PathBuf;

struct Knob {
    name: &'static str,
    default: u64,
    min: u64,
    max: u64,
}

// The one table of the knobs and their defaults. cmake/atome.cmake and
// firmware/fw.sh read it from here; tests/knob_defaults.rs checks the copies
// that cannot (cbindgen.toml's #defines, python/atome/_build.py, README.md).
const KNOBS: &[Knob] = &[
    Knob { name: "ATOME_D_MODEL", default: 64, min: 1, max: 65535 },
    Knob { name: "ATOME_MAX_SEQ", default: 32, min: 1, max: 65535 },
    Knob { name: "ATOME_N_LAYERS", default: 4, min: 1, max: 1024 },
    Knob { name: "ATOME_N_PATHWAYS", default: 3, min: 3, max: 3 },
    Knob { name: "ATOME_VOCAB_SIZE", default: 256, min: 1, max: 65535 },
    Knob { name: "ATOME_D_HEAD", default: 16, min: 1, max: 65535 },
    Knob { name: "ATOME_KERNEL_SIZE", default: 5, min: 1, max: 65535 },
    Knob { name: "ATOME_TOP_K", default: 4, min: 1, max: 65535 },
    Knob { name: "ATOME_MAX_CLASSES", default: 16, min: 1, max: 65535 },
];

fn fail(msg: String) -> ! {
    eprintln!("error: atome build configuration: {msg}");
    println!("cargo:warning=atome build configuration: {msg}");
    std::process::exit(1);
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo::rustc-check-cfg=cfg(atome_cached)");
    println!("cargo::rustc-check-cfg=cfg(atome_q15)");
    println!("cargo::rustc-check-cfg=cfg(atome_tiny)");
    println!("cargo::rustc-check-cfg=cfg(atome_lazy_block)");
    // atome_portable: the microcontroller code path (every target but
    // x86-64, or any target with the `portable` feature).
    // The cores, each named once. The code tests only these names (and
    // target_arch = "arm" for what every Arm core shares); docs/ARCHITECTURE.md
    // maps each to its kernels. Supported targets: thumbv6m, thumbv7m,
    // thumbv7em (soft and hard float), thumbv8m.main, riscv32imc/imac and
    // x86-64; any other target gets the portable code its cfgs select.
    //   atome_portable  the microcontroller code path: every target but
    //                   x86-64, or any target with the `portable` feature
    //   atome_device    atome_portable without the `size-first` feature: the
    //                   device float kernels (src/kernels/device/)
    //   atome_small     the `size-first` feature: the q15 kernels' one
    //                   compact portable routine each (no asm, no unrolled
    //                   or per-kind copies); the float kernels read the
    //                   feature itself
    //   atome_x86       x86-64 without `portable`: AVX2 chosen at run time
    //   atome_armv6m    Armv6-M (Cortex-M0/M0+): no 32-bit atomics, Thumb-1
    //   atome_thumb2    Armv7-M, Armv7E-M, Armv8-M Mainline (M3, M4, M7, M33)
    //   atome_dsp       Armv7E-M (M4, M7): the DSP instructions (SMLAD, SMMULR)
    //   atome_fpu       hard-float Arm (eabihf: M4F, M7, M33)
    //   atome_arm_soft  soft-float Arm (atome_armv6m or atome_t2_soft)
    //   atome_t2_soft   soft-float Thumb-2 (M3, M4 without its FPU)
    //   atome_rv32      RV32 (riscv32imc, riscv32imac)
    // (Stable Rust exposes no cfg for Thumb-2 or the DSP extension.)
    let target = env::var("TARGET").unwrap_or_default();
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let abi = env::var("CARGO_CFG_TARGET_ABI").unwrap_or_default();
    let atomic32 = env::var("CARGO_CFG_TARGET_HAS_ATOMIC").unwrap_or_default().split(',').any(|a| a == "32");
    let portable = arch != "x86_64" || env::var_os("CARGO_FEATURE_PORTABLE").is_some();
    let arm = arch == "arm";
    let thumb2 = ["thumbv7m", "thumbv7em", "thumbv8m.main"].iter().any(|p| target.starts_with(p));
    let cores = [
        ("atome_portable", portable),
        ("atome_device", portable && env::var_os("CARGO_FEATURE_SIZE_FIRST").is_none()),
        ("atome_small", env::var_os("CARGO_FEATURE_SIZE_FIRST").is_some()),
        ("atome_x86", arch == "x86_64" && !portable),
        ("atome_armv6m", arm && !atomic32),
        ("atome_thumb2", thumb2),
        ("atome_dsp", target.starts_with("thumbv7em")),
        ("atome_fpu", arm && abi == "eabihf"),
        ("atome_arm_soft", arm && abi != "eabihf"),
        ("atome_t2_soft", thumb2 && abi != "eabihf"),
        ("atome_rv32", arch == "riscv32"),
    ];
    for (name, on) in cores {
        println!("cargo::rustc-check-cfg=cfg({name})");
        if on {
            println!("cargo:rustc-cfg={name}");
        }
    }
    let mut vals = Vec::new();
    for k in KNOBS {
        println!("cargo:rerun-if-env-changed={}", k.name);
        let v = match env::var(k.name) {
            Ok(s) => s.trim().parse::<u64>().unwrap_or_else(|_| {
                fail(format!("{}={s:?} is not a whole number", k.name))
            }),
            Err(_) => k.default,
        };
        if k.name == "ATOME_N_PATHWAYS" && v != 3 {
            fail(format!("ATOME_N_PATHWAYS={v}: must be 3 (local, state, sparse)"));
        }
        if v < k.min || v > k.max {
            fail(format!(
                "{}={v} is out of range {}..={} (the reference stores it in a uint16 field)",
                k.name, k.min, k.max
            ));
        }
        vals.push((k.name, v));
    }
    let get = |n: &str| vals.iter().find(|(k, _)| *k == n).unwrap().1;
    let (d, s, kk, dh) = (get("ATOME_D_MODEL"), get("ATOME_MAX_SEQ"), get("ATOME_KERNEL_SIZE"), get("ATOME_D_HEAD"));
    // Matrix element counts must stay addressable by the reference's uint16 rows/cols
    // and by 32-bit size_t on microcontrollers.
    if d.checked_mul(d).is_none_or(|n| n > u32::MAX as u64 / 2) {
        fail(format!("ATOME_D_MODEL={d} makes a D x D matrix too large"));
    }
    let v = get("ATOME_VOCAB_SIZE");
    if v * d > u32::MAX as u64 / 2 || dh * d > u32::MAX as u64 / 2 || d * kk > u32::MAX as u64 / 2 {
        fail("ATOME_VOCAB_SIZE/ATOME_D_HEAD/ATOME_KERNEL_SIZE times ATOME_D_MODEL too large".into());
    }
    if s * d * 4 > u32::MAX as u64 / 4 {
        fail(format!("ATOME_MAX_SEQ={s} x ATOME_D_MODEL={d} makes the state too large"));
    }
    println!("cargo:rerun-if-env-changed=ATOME_STATE");
    let state = env::var("ATOME_STATE").unwrap_or_else(|_| "lean".into());
    let (cached, tiny) = match state.trim() {
        "lean" | "" => (false, false),
        "cached" => (true, false),
        "tiny" => (false, true),
        other => fail(format!("ATOME_STATE={other:?}: must be lean, cached or tiny")),
    };
    if cached {
        println!("cargo:rustc-cfg=atome_cached");
    }
    // ATOME_DTYPE: f32 (the reference's float arithmetic) or q15 (the
    // integer mode of docs/Q15.md; lean or cached state).
    println!("cargo:rerun-if-env-changed=ATOME_DTYPE");
    let dtype = env::var("ATOME_DTYPE").unwrap_or_else(|_| "f32".into());
    let q15 = match dtype.trim() {
        "f32" | "" => false,
        "q15" => true,
        other => fail(format!("ATOME_DTYPE={other:?}: must be f32 or q15")),
    };
    if q15 {
        println!("cargo:rustc-cfg=atome_q15");
    }
    // A block as a view of its bytes (src/format/mod.rs): the q15
    // size-first build's smaller stack. (The float size-first build keeps
    // the whole block: its .text budget is tighter than its stack.)
    if q15 && env::var_os("CARGO_FEATURE_SIZE_FIRST").is_some() {
        println!("cargo:rustc-cfg=atome_lazy_block");
    }
    // The tiny plan (docs/Q15.md#tiny-plan) is the q15 engine's.
    if tiny && !q15 {
        fail("ATOME_STATE=\"tiny\" needs ATOME_DTYPE=q15 (the float engine has the lean and cached plans)".into());
    }
    if tiny {
        println!("cargo:rustc-cfg=atome_tiny");
    }

    let mut out = String::new();
    out.push_str("// Generated by build.rs from the ATOME_* environment variables.\n");
    for (n, v) in &vals {
        out.push_str(&format!("/// Build-time configuration knob (docs/API.md#build-configuration).\npub const {n}: usize = {v};\n"));
    }
    out.push_str(&format!("/// 1 when built with ATOME_STATE=cached.\npub const ATOME_STATE_CACHED: usize = {};\n", cached as u8));
    out.push_str(&format!("/// 1 when built with ATOME_STATE=tiny.\npub const ATOME_STATE_TINY: usize = {};\n", tiny as u8));
    // Link-time configuration markers: the header references the ones matching
    // the includer's macros, so a mismatch is an undefined symbol naming it.
    // Floats of the state's work area (must equal LeanMem::floats /
    // CachedMem::floats; a unit test checks it, the header has the same formula).
    let (l, topk) = (get("ATOME_N_LAYERS"), get("ATOME_TOP_K"));
    let work = if cached {
        s * d + l * s * dh + l * s * d + l * (kk - 1) * d + 2 * l * d + s * l + l
            + (kk + 7) * d + (8 * dh).max(8 * kk) + 24 + 16 * topk
    } else {
        2 * s * d + s * dh + (kk + 5) * d + l + (4 * dh).max(8 * kk) + 12 + 8 * topk
    };
    out.push_str(&format!("/// Floats in the state's work area.\npub const ATOME_STATE_WORK: usize = {work};\n"));
    out.push_str(&format!("/// 1 when built with ATOME_DTYPE=q15.\npub const ATOME_DTYPE_Q15: usize = {};\n", q15 as u8));
    // The q15 state's areas (must equal q15::Q15Layout, or
    // Q15CachedLayout for the cached state, Q15TinyLayout for the tiny one;
    // a test checks it, the header has the same formulas).
    let v = get("ATOME_VOCAB_SIZE");
    let pints = (4 - v.checked_div(d).unwrap_or(4).min(4)) * d;
    let (q16, q32) = if cached {
        (
            l * (s * dh + s + s * d + s + (kk - 1) * d + (kk - 1)) + d + 1 + kk * d + kk + dh + d,
            // (The parameter area: three byte tables at least for D >= 64.)
            l * (d + 1) + (d + 2 * dh + 3) + 4 * topk + l + if d >= 64 { pints.max(768) } else { pints } + 11 * l + 3,
        )
    } else if tiny {
        // C: the smallest power of two with C^2 >= S; ceil(S / C) - 1
        // checkpoints; matvec outputs max(D, DH + 3).
        let mut c = 1;
        while c * c < s {
            c *= 2;
        }
        let nck = (s - 1) / c;
        (
            s * d + s + s * dh + s + kk * d + kk + topk * d + topk + dh + d,
            c * d + c + nck * d + nck + d.max(dh + 3) + 4 * topk + l + kk + topk + pints,
        )
    } else {
        (2 * s * d + s * dh + 3 * s + kk * d + kk + dh + d, d + (d + 2 * dh + 3) + 4 * topk + l + pints)
    };
    out.push_str(&format!("/// int16 elements of the q15 state.\npub const ATOME_Q15_I16: usize = {q16};\n"));
    out.push_str(&format!("/// int32 elements of the q15 state.\npub const ATOME_Q15_I32: usize = {q32};\n"));
    out.push_str("/// Link-time configuration markers (see include/atome.h).\n#[allow(missing_docs, non_upper_case_globals)]\npub mod cfg_markers {\n");
    for (n, v) in &vals {
        let short = n.trim_start_matches("ATOME_");
        out.push_str(&format!(
            "    #[no_mangle]\n    #[used]\n    pub static atome_cfg_{short}_{v}: u8 = 0;\n"
        ));
    }
    let st = if cached {
        "cached"
    } else if tiny {
        "tiny"
    } else {
        "lean"
    };
    out.push_str(&format!("    #[no_mangle]\n    #[used]\n    pub static atome_cfg_STATE_{st}: u8 = 0;\n"));
    let dt = if q15 { "q15" } else { "f32" };
    out.push_str(&format!("    #[no_mangle]\n    #[used]\n    pub static atome_cfg_DTYPE_{dt}: u8 = 0;\n}}\n"));
    let path = PathBuf::from(env::var("OUT_DIR").unwrap()).join("config.rs");
    fs::write(path, out).unwrap();
}
