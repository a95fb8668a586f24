//! `psum viz` (SPEC §8): the bank timeline as SVG or HTML.

use crate::cli::args::{AllocFlags, RotateFlags};
use crate::cli::io::{compile_failure, load, title, usage_error, Failure};
use crate::cli::output::emit_str;
use crate::pipeline::{self, CompileError, CompileOptions, Stopped};
use crate::viz::{self, Timeline};
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct VizArgs {
    /// Input file (`.psum` text or `.json`); `-` reads stdin.
    pub(crate) file: String,
    #[command(flatten)]
    pub(crate) flags: AllocFlags,
    #[command(flatten)]
    pub(crate) rotation: RotateFlags,
    /// Write to OUT.svg or OUT.html (by extension) instead of SVG on stdout.
    #[arg(short, long, value_name = "FILE")]
    pub(crate) output: Option<PathBuf>,
}

pub(crate) fn run(a: VizArgs) -> Result<(), Failure> {
    let html = match a.output.as_ref().and_then(|p| p.extension()) {
        None if a.output.is_none() => false,
        Some(e) if e == "svg" => false,
        Some(e) if e == "html" || e == "htm" => true,
        _ => return Err(usage_error("the output of viz must end in .svg or .html")),
    };
    let loaded = load(&a.file)?;
    let m = &loaded.module;
    let opts = CompileOptions {
        alloc: a.flags.options()?,
        rotate: a.rotation.rotation(),
        verify: false,
        ..CompileOptions::default()
    };
    let t = match pipeline::compile_partial(m, &opts) {
        Ok(c) => {
            a.flags.print_log(&c.alloc);
            Timeline::from_compiled(title(&a.file), m, &c)
        }
        Err(Stopped {
            error: e @ (CompileError::Unroll(_) | CompileError::Matmul { .. }),
            alloc: Some(outcome),
        }) => {
            eprintln!("warning: accumulation clusters not drawn: {e}");
            a.flags.print_log(&outcome);
            Timeline::from_alloc(title(&a.file), m, &outcome)
        }
        Err(stopped) => return Err(compile_failure(&loaded, &stopped.error)),
    };
    let page = if html { viz::html(&t) } else { viz::svg(&t) };
    emit_str(a.output.as_deref(), &page)
}
