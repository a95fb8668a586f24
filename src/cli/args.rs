//! Flags and value types several commands share.

use crate::alloc::{AllocOptions, AllocOutcome, Allocator, Mode};
use crate::arch;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// Allocator settings shared by `alloc` and `compile`.
#[derive(Args)]
pub(crate) struct AllocFlags {
    /// Use the reference allocator (the seed's data structures; same output).
    #[arg(long)]
    pub(crate) reference: bool,
    /// Cycles per bank moved by one spill or reload TensorCopy.
    #[arg(long, value_name = "N", default_value_t = arch::DEFAULT_SPILL_LATENCY)]
    pub(crate) spill_latency: u64,
    /// Banks the allocator may use (1..=numBanks), e.g. 7 when bank 7 is kept for PE transposes.
    #[arg(long, value_name = "N")]
    pub(crate) psum_banks: Option<u32>,
    /// Print the allocator's log on stderr (-v), with its trace lines (-vv).
    #[arg(short, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Which allocator runs (SPEC §3, §3.11).
    #[arg(long, value_enum, default_value = "briggs")]
    pub(crate) allocator: AllocatorKind,
}

/// `--allocator`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum AllocatorKind {
    /// The reference compiler's Chaitin–Briggs allocator (SPEC §3).
    Briggs,
    /// psum's own: the least spill cost it finds, fast on any size.
    Mincost,
    /// The least spill cost there is, by search (at most 24 PSUM nodes).
    Exact,
}

impl AllocFlags {
    pub(crate) fn options(&self) -> AllocOptions {
        AllocOptions {
            mode: if self.reference {
                Mode::Reference
            } else {
                Mode::Fast
            },
            spill_latency: self.spill_latency,
            psum_banks: self.psum_banks,
            trace: self.verbose >= 2,
            allocator: match self.allocator {
                AllocatorKind::Briggs => Allocator::Briggs,
                AllocatorKind::Mincost => Allocator::Mincost,
                AllocatorKind::Exact => Allocator::Exact,
            },
            ..AllocOptions::default()
        }
    }

    /// Prints the log (or trace) of an allocation on stderr, as -v / -vv ask.
    pub(crate) fn print_log(&self, outcome: &AllocOutcome) {
        let lines = match self.verbose {
            0 => return,
            1 => &outcome.log,
            _ => &outcome.trace,
        };
        for l in lines {
            eprintln!("{l}");
        }
    }
}

/// `--objective` of `export --split-lp`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum ObjectiveKind {
    /// The total spill cost in cycles.
    Cost,
    /// The number of tensors spilled.
    Count,
}

/// `--report json` (JSON on stdout; the program goes to `-o` only).
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum ReportKind {
    /// The JSON report of SPEC §6.
    Json,
}

/// Output format of a module.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Emit {
    /// The text format.
    Text,
    /// The serde JSON form.
    Json,
}

/// Where a command writes its main output.
#[derive(Args)]
pub(crate) struct OutputArgs {
    /// Write to this file (atomically: a temp file, then rename) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}
