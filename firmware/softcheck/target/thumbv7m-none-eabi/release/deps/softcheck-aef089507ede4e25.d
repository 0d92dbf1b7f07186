/work/main/firmware/softcheck/target/thumbv7m-none-eabi/release/deps/softcheck-aef089507ede4e25.d: src/lib.rs Cargo.toml

/work/main/firmware/softcheck/target/thumbv7m-none-eabi/release/deps/libsoftcheck-aef089507ede4e25.rmeta: src/lib.rs Cargo.toml

src/lib.rs:
Cargo.toml:

# env-dep:CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__
# env-dep:CLIPPY_CONF_DIR
