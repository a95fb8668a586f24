//! Integration tests of the `psum` command line end to end (SPEC §6, §7).

mod bound;
#[path = "../support/cli.rs"]
mod cli;
mod commands;
mod compile_examples;
mod mincost;
mod robust_output;
mod robust_passes;
mod rotation;
mod viz;
mod workloads;
