//! The `psum` binary: the command line of [`psum::cli`] (SPEC §6).

use std::process::ExitCode;

/// mimalloc: the passes allocate and free millions of small objects (boxed
/// matmuls, operand lists, labels), which it serves faster than the system
/// allocator (docs/PERFORMANCE.md). Built without transparent huge pages: where
/// the kernel compacts memory to back a huge page on a fault, a pass that
/// frees and reallocates hundreds of megabytes stalls for seconds.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    psum::cli::run(std::env::args_os())
}
