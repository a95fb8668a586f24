//! Flags and value types several commands share.

use super::io::{usage_error, Failure};
use crate::alloc::{AllocOptions, AllocOutcome, Allocator, LogLevel};
use crate::arch;
use crate::ir::Module;
use crate::pipeline::Rotation;
use crate::text;
use clap::{Args, ValueEnum};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Allocator settings shared by `alloc` and `compile`.
#[derive(Args)]
pub(crate) struct AllocFlags {
    /// Briggs with the seed's data structures (same output): `--allocator briggs-reference`.
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
    /// Which allocator runs (SPEC §3, §3.11) [default: briggs].
    #[arg(long, value_enum)]
    pub(crate) allocator: Option<AllocatorKind>,
}

/// `--allocator`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub(crate) enum AllocatorKind {
    /// The reference compiler's Chaitin–Briggs allocator (SPEC §3).
    Briggs,
    /// The same with the seed's data structures: same output, quadratic.
    BriggsReference,
    /// psum's own: the least spill cost it finds, fast on any size.
    Mincost,
    /// The least spill cost there is, by search (at most 24 PSUM nodes).
    Exact,
}

impl AllocFlags {
    /// The allocator settings; a usage error (exit 2) for `--reference`
    /// beside an allocator other than briggs.
    pub(crate) fn options(&self) -> Result<AllocOptions, Failure> {
        let allocator = match (self.allocator, self.reference) {
            (None | Some(AllocatorKind::Briggs), false) => Allocator::Briggs,
            (None | Some(AllocatorKind::Briggs | AllocatorKind::BriggsReference), true)
            | (Some(AllocatorKind::BriggsReference), false) => Allocator::BriggsReference,
            (Some(AllocatorKind::Mincost), false) => Allocator::Mincost,
            (Some(AllocatorKind::Exact), false) => Allocator::Exact,
            (Some(other), true) => {
                let name = other.to_possible_value().map(|v| v.get_name().to_string());
                let msg = format!(
                    "the argument '--reference' cannot be used with '--allocator {}'",
                    name.unwrap_or_default()
                );
                return Err(Failure::Usage(
                    clap::error::ErrorKind::ArgumentConflict,
                    msg,
                ));
            }
        };
        Ok(AllocOptions {
            allocator,
            log: match self.verbose {
                0 => LogLevel::Quiet,
                1 => LogLevel::Log,
                _ => LogLevel::Trace,
            },
            spill_latency: self.spill_latency,
            psum_banks: self.psum_banks,
            ..AllocOptions::default()
        })
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

/// `--rotate` / `--no-rotate` of `compile`, `viz` and `bench` (SPEC §3.12).
#[derive(Args)]
pub(crate) struct RotateFlags {
    /// Rotate the placement after any allocator (the default after mincost).
    #[arg(long, conflicts_with = "no_rotate")]
    pub(crate) rotate: bool,
    /// Keep the allocator's placement as it is.
    #[arg(long)]
    pub(crate) no_rotate: bool,
}

impl RotateFlags {
    /// The rotation the flags ask for.
    pub(crate) fn rotation(&self) -> Rotation {
        match (self.rotate, self.no_rotate) {
            (true, _) => Rotation::On,
            (_, true) => Rotation::Off,
            _ => Rotation::Auto,
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

/// What `--report` makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReportKind {
    /// The JSON report of SPEC §6.
    Json,
    /// The bank timeline page of SPEC §8 (`compile` only).
    Html,
}

/// `--report KIND[=FILE]`: a report, written to FILE or else to stdout
/// (the program then goes to `-o` only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Report {
    /// Which report.
    pub(crate) kind: ReportKind,
    /// Where it goes; stdout when `None`.
    pub(crate) file: Option<PathBuf>,
}

impl Report {
    /// Parses `json`, `json=FILE` or `html=FILE` (clap's value parser).
    pub(crate) fn parse(s: &str) -> Result<Report, String> {
        let (kind, file) = match s.split_once('=') {
            Some((kind, file)) if !file.is_empty() => (kind, Some(PathBuf::from(file))),
            Some((kind, _)) => return Err(format!("`{kind}=` names no file")),
            None => (s, None),
        };
        let kind = match kind {
            "json" => ReportKind::Json,
            "html" => ReportKind::Html,
            _ => {
                return Err(format!(
                    "`{kind}` is not a report (json[=FILE] or html=FILE)"
                ))
            }
        };
        Ok(Report { kind, file })
    }

    /// The JSON report's file (`None`: stdout), or a usage error for a
    /// kind other than json (on commands that make only the JSON report).
    pub(crate) fn json_file(&self) -> Result<Option<&Path>, Failure> {
        match self.kind {
            ReportKind::Json => Ok(self.file.as_deref()),
            ReportKind::Html => Err(usage_error(
                "--report html is compile's; this command writes --report json[=FILE]",
            )),
        }
    }
}

/// Output format of a module.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Emit {
    /// The text format.
    Text,
    /// The serde JSON form.
    Json,
}

impl Emit {
    /// Writes `m` in this format, as it is printed.
    pub(crate) fn write(self, m: &Module, w: &mut dyn Write) -> std::io::Result<()> {
        match self {
            Emit::Text => text::write(m, w),
            Emit::Json => text::write_json(m, w),
        }
    }
}

/// Where a command writes its main output.
#[derive(Args)]
pub(crate) struct OutputArgs {
    /// Write to this file instead of stdout, once the command has succeeded (SPEC §6).
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}
