//! `psum bench` (SPEC §3.10, §7): the command's arguments and its modes,
//! one module each: the allocator's scaling table ([`scaling`], the
//! default), the whole pipeline ([`pipeline`], `--pipeline`), allocation
//! quality ([`quality`], `--quality`), rotation ([`rotation`],
//! `--rotation`) and the regalloc2 comparison ([`peers`], `--peers`).
//! [`procfs`] reads the process's time, faults and peak memory for them.

mod peers;
mod pipeline;
mod procfs;
mod quality;
mod rotation;
mod scaling;

use crate::cli::io::Failure;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `psum bench`.
#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Skip the reference run at 20k tensors and the fast sizes of 300k and up.
    #[arg(long)]
    quick: bool,
    /// Sizes (PSUM tensors) for fast mode alone [default: 100000,300000,1000000].
    #[arg(long, value_delimiter = ',', value_name = "N,…")]
    sizes: Option<Vec<u32>>,
    /// Sizes on which reference and fast mode are compared [default: 1000,5000,20000].
    #[arg(long, value_delimiter = ',', value_name = "N,…")]
    compare_sizes: Option<Vec<u32>>,
    /// Runs per size (the median is reported); reference mode from 20k
    /// tensors runs once.
    #[arg(long, default_value_t = 3, value_name = "N")]
    runs: u32,
    /// Compare with regalloc2 (Ion and fastalloc) on the same problems instead:
    /// runs `cargo bench --bench peers` of the source checkout's `benches/`
    /// crate, since regalloc2 is a dependency of the bench, not of this binary.
    #[arg(long)]
    peers: bool,
    /// Time and weigh every pass of `compile` (parse to print) on the
    /// 100k-tensor random program and the 2048³ gemm instead, with `psum
    /// compile` and `psum fmt` end to end, and the symbolic against the
    /// exact simulator on the gemm.
    #[arg(long)]
    pipeline: bool,
    /// With `--pipeline`: the 1M-tensor scaling program too.
    #[arg(long, requires = "pipeline")]
    million: bool,
    /// Internal: one `--pipeline` measurement (`passes`, `compile` or `fmt`) of one program file.
    #[arg(long, hide = true, num_args = 3, value_names = ["WHAT", "PROGRAM", "FILE"])]
    pipeline_child: Option<Vec<String>>,
    /// Allocation quality instead: briggs, mincost, exact and the bounds
    /// side by side (SPEC §3.11), then the peer comparison (`--peers`).
    #[arg(long)]
    quality: bool,
    /// Reuse edges and estimated cycles with and without rotation instead
    /// (SPEC §3.12): every `gen` workload, then the programs of each PATH
    /// (a program, a folder of programs, or a folder with a MANIFEST.tsv of
    /// NKI kernels to trace; a missing PATH is skipped).
    #[arg(long)]
    rotation: bool,
    /// With `--rotation`: programs, folders of programs, or kernel corpora.
    #[arg(requires = "rotation", value_name = "PATH")]
    programs: Vec<PathBuf>,
    /// Internal: measure one size in this process and print one result line.
    #[arg(long, hide = true, num_args = 2, value_names = ["SIZE", "MODE"])]
    child: Option<Vec<String>>,
}

/// Runs `psum bench`.
pub(crate) fn run(a: BenchArgs) -> Result<(), Failure> {
    if let Some(child) = &a.child {
        return scaling::run_child(&child[0], &child[1], a.runs);
    }
    if a.peers {
        return peers::run_peers();
    }
    if let Some(c) = &a.pipeline_child {
        return pipeline::pipeline_child(&c[0], &c[1], &c[2]);
    }
    if a.pipeline {
        return pipeline::run_pipeline(a.million);
    }
    if a.quality {
        return quality::run_quality().and_then(|()| peers::run_peers());
    }
    if a.rotation {
        return rotation::run_rotation(&a.programs);
    }
    scaling::run_scaling(&a)
}

/// `s` seconds, in milliseconds below one second.
fn format_secs(s: f64) -> String {
    if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}
