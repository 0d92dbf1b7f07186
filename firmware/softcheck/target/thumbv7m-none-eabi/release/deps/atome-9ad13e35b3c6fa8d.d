/work/main/firmware/softcheck/target/thumbv7m-none-eabi/release/deps/atome-9ad13e35b3c6fa8d.d: /work/main/src/lib.rs /work/main/src/config.rs /work/main/src/container.rs /work/main/src/ffi/mod.rs /work/main/src/ffi/extra.rs /work/main/src/ffi/kernels.rs /work/main/src/ffi/model.rs /work/main/src/ffi/run.rs /work/main/src/ffi/runtime/mod.rs /work/main/src/ffi/runtime/calls.rs /work/main/src/ffi/types.rs /work/main/src/format/mod.rs /work/main/src/format/codec.rs /work/main/src/format/layout.rs /work/main/src/format/parse.rs /work/main/src/format/write.rs /work/main/src/forward/mod.rs /work/main/src/forward/cached.rs /work/main/src/forward/head.rs /work/main/src/forward/layers.rs /work/main/src/forward/lean.rs /work/main/src/forward/mem.rs /work/main/src/forward/sample.rs /work/main/src/forward/tokens.rs /work/main/src/kernels/mod.rs /work/main/src/kernels/attention.rs /work/main/src/kernels/choice.rs /work/main/src/kernels/conv.rs /work/main/src/kernels/isa.rs /work/main/src/kernels/job.rs /work/main/src/kernels/keys.rs /work/main/src/kernels/lanes.rs /work/main/src/kernels/matvec.rs /work/main/src/kernels/norm.rs /work/main/src/kernels/q15/mod.rs /work/main/src/kernels/q15/conv_t2.rs /work/main/src/kernels/q15/dot.rs /work/main/src/kernels/q15/ssm.rs /work/main/src/kernels/q15/matvec.rs /work/main/src/kernels/q15/norm.rs /work/main/src/kernels/q15/quant.rs /work/main/src/kernels/softmax.rs /work/main/src/kernels/device/mod.rs /work/main/src/kernels/device/fpu.rs /work/main/src/kernels/device/sf.rs /work/main/src/kernels/device/sf_asm.rs /work/main/src/kernels/device/sf_rv.rs /work/main/src/kernels/device/soft.rs /work/main/src/kernels/device/soft_t2.rs /work/main/src/kernels/device/soft_rv.rs /work/main/src/math.rs /work/main/src/math/fixed.rs /work/main/src/q15/mod.rs /work/main/src/q15/arith.rs /work/main/src/q15/engine.rs /work/main/src/q15/params.rs /work/main/src/runner.rs /work/main/firmware/softcheck/target/thumbv7m-none-eabi/release/build/atome-2adf5e726bcf6321/out/config.rs

/work/main/firmware/softcheck/target/thumbv7m-none-eabi/release/deps/libatome-9ad13e35b3c6fa8d.rmeta: /work/main/src/lib.rs /work/main/src/config.rs /work/main/src/container.rs /work/main/src/ffi/mod.rs /work/main/src/ffi/extra.rs /work/main/src/ffi/kernels.rs /work/main/src/ffi/model.rs /work/main/src/ffi/run.rs /work/main/src/ffi/runtime/mod.rs /work/main/src/ffi/runtime/calls.rs /work/main/src/ffi/types.rs /work/main/src/format/mod.rs /work/main/src/format/codec.rs /work/main/src/format/layout.rs /work/main/src/format/parse.rs /work/main/src/format/write.rs /work/main/src/forward/mod.rs /work/main/src/forward/cached.rs /work/main/src/forward/head.rs /work/main/src/forward/layers.rs /work/main/src/forward/lean.rs /work/main/src/forward/mem.rs /work/main/src/forward/sample.rs /work/main/src/forward/tokens.rs /work/main/src/kernels/mod.rs /work/main/src/kernels/attention.rs /work/main/src/kernels/choice.rs /work/main/src/kernels/conv.rs /work/main/src/kernels/isa.rs /work/main/src/kernels/job.rs /work/main/src/kernels/keys.rs /work/main/src/kernels/lanes.rs /work/main/src/kernels/matvec.rs /work/main/src/kernels/norm.rs /work/main/src/kernels/q15/mod.rs /work/main/src/kernels/q15/conv_t2.rs /work/main/src/kernels/q15/dot.rs /work/main/src/kernels/q15/ssm.rs /work/main/src/kernels/q15/matvec.rs /work/main/src/kernels/q15/norm.rs /work/main/src/kernels/q15/quant.rs /work/main/src/kernels/softmax.rs /work/main/src/kernels/device/mod.rs /work/main/src/kernels/device/fpu.rs /work/main/src/kernels/device/sf.rs /work/main/src/kernels/device/sf_asm.rs /work/main/src/kernels/device/sf_rv.rs /work/main/src/kernels/device/soft.rs /work/main/src/kernels/device/soft_t2.rs /work/main/src/kernels/device/soft_rv.rs /work/main/src/math.rs /work/main/src/math/fixed.rs /work/main/src/q15/mod.rs /work/main/src/q15/arith.rs /work/main/src/q15/engine.rs /work/main/src/q15/params.rs /work/main/src/runner.rs /work/main/firmware/softcheck/target/thumbv7m-none-eabi/release/build/atome-2adf5e726bcf6321/out/config.rs

/work/main/src/lib.rs:
/work/main/src/config.rs:
/work/main/src/container.rs:
/work/main/src/ffi/mod.rs:
/work/main/src/ffi/extra.rs:
/work/main/src/ffi/kernels.rs:
/work/main/src/ffi/model.rs:
/work/main/src/ffi/run.rs:
/work/main/src/ffi/runtime/mod.rs:
/work/main/src/ffi/runtime/calls.rs:
/work/main/src/ffi/types.rs:
/work/main/src/format/mod.rs:
/work/main/src/format/codec.rs:
/work/main/src/format/layout.rs:
/work/main/src/format/parse.rs:
/work/main/src/format/write.rs:
/work/main/src/forward/mod.rs:
/work/main/src/forward/cached.rs:
/work/main/src/forward/head.rs:
/work/main/src/forward/layers.rs:
/work/main/src/forward/lean.rs:
/work/main/src/forward/mem.rs:
/work/main/src/forward/sample.rs:
/work/main/src/forward/tokens.rs:
/work/main/src/kernels/mod.rs:
/work/main/src/kernels/attention.rs:
/work/main/src/kernels/choice.rs:
/work/main/src/kernels/conv.rs:
/work/main/src/kernels/isa.rs:
/work/main/src/kernels/job.rs:
/work/main/src/kernels/keys.rs:
/work/main/src/kernels/lanes.rs:
/work/main/src/kernels/matvec.rs:
/work/main/src/kernels/norm.rs:
/work/main/src/kernels/q15/mod.rs:
/work/main/src/kernels/q15/conv_t2.rs:
/work/main/src/kernels/q15/dot.rs:
/work/main/src/kernels/q15/ssm.rs:
/work/main/src/kernels/q15/matvec.rs:
/work/main/src/kernels/q15/norm.rs:
/work/main/src/kernels/q15/quant.rs:
/work/main/src/kernels/softmax.rs:
/work/main/src/kernels/device/mod.rs:
/work/main/src/kernels/device/fpu.rs:
/work/main/src/kernels/device/sf.rs:
/work/main/src/kernels/device/sf_asm.rs:
/work/main/src/kernels/device/sf_rv.rs:
/work/main/src/kernels/device/soft.rs:
/work/main/src/kernels/device/soft_t2.rs:
/work/main/src/kernels/device/soft_rv.rs:
/work/main/src/math.rs:
/work/main/src/math/fixed.rs:
/work/main/src/q15/mod.rs:
/work/main/src/q15/arith.rs:
/work/main/src/q15/engine.rs:
/work/main/src/q15/params.rs:
/work/main/src/runner.rs:
/work/main/firmware/softcheck/target/thumbv7m-none-eabi/release/build/atome-2adf5e726bcf6321/out/config.rs:

# env-dep:OUT_DIR=/work/main/firmware/softcheck/target/thumbv7m-none-eabi/release/build/atome-2adf5e726bcf6321/out
