//! softcheck_dsp: the Armv7E-M targets (Cortex-M4/M7), where the atome
//! crate compiles its DSP kernels (its build script's `atome_dsp`; stable
//! Rust exposes no cfg for the DSP extension).
fn main() {
    println!("cargo::rustc-check-cfg=cfg(softcheck_dsp)");
    println!("cargo:rerun-if-env-changed=TARGET");
    if std::env::var("TARGET").unwrap_or_default().starts_with("thumbv7em") {
        println!("cargo:rustc-cfg=softcheck_dsp");
    }
}
