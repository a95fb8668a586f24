//! Running the `psum` binary from the tests: from the repository root, its
//! output captured, its input given or closed; and a scratch directory per
//! test. Each test binary that runs `psum` includes this file with
//! `#[path = "../support/cli.rs"] mod cli;` and uses part of it.

#![allow(dead_code)]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// Runs `psum ARGS` from the repository root with stdin closed.
pub fn psum(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_psum"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null())
        .output()
        .expect("psum runs")
}

/// Runs `psum ARGS` from the repository root with `input` on stdin.
pub fn psum_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_psum"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("psum runs");
    let mut stdin = child.stdin.take().expect("piped stdin");
    stdin.write_all(input.as_bytes()).expect("stdin written");
    drop(stdin);
    child.wait_with_output().expect("psum finishes")
}

/// Output bytes as text (psum writes UTF-8).
pub fn text(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).expect("psum writes UTF-8")
}

/// The run's stdout.
pub fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

/// The run's stderr.
pub fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// A fresh, empty scratch directory for the test `name` of this run.
pub fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("psum-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch directory");
    d
}
