//! Integration tests of NKI kernels traced, compiled and linted (SPEC §9).

mod ir;
mod kernels;
mod trace;

use std::process::{Command, Output};

/// Runs `psum ARGS` from the repository root.
fn psum(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_psum"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap()
}

/// Bytes as UTF-8 text.
fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}
