//! psum: PSUM bank allocation, spill, and matmul accumulation-group
//! legalization for Trainium-class accelerators, with an independent checker.
//!
//! The contract is `docs/SPEC.md` (section numbers are cited throughout);
//! `docs/DESIGN.md` describes the modules and the data flow. A program is an
//! [`ir::Module`] of flat vectors indexed by typed ids; [`text`] reads and
//! prints its text form. [`pipeline::compile`] runs the pass list
//! [`pipeline::Pass::ALL`] — validate → alloc → rebank → unroll → legalize —
//! and then the verifier ([`verify`]), which proves that the result computes
//! what the input computes. [`report`] turns what the passes did into the JSON report
//! and the summary the command line prints.
//!
//! ```
//! use psum::pipeline::{compile, CompileOptions};
//!
//! let src = "arch trn1
//!
//! psum acc [128, 2048]
//! sbuf w [128, 4096] bf16
//! sbuf x [128, 8192] bf16
//! sbuf y [128, 2048]
//! dram out [128, 2048]
//!
//! block main {
//!   loop k 0..4 {
//!     matmul acc <- w[0:128, k*1024 : k*1024+256], x[0:128, k*2048 : k*2048+1024]
//!   }
//!   act y <- acc
//!   dma out <- y
//! }
//! ";
//! let input = psum::text::parse(src)?.module;
//! let compiled = compile(&input, &CompileOptions::default())?;
//!
//! // The accumulator got bank 0 and the verifier proved the result.
//! let report = psum::report::compile_report(&compiled);
//! assert_eq!(report["tensors"][0]["bank"], 0);
//! assert_eq!(report["verify"]["checker"], "ok");
//! assert_eq!(report["verify"]["simulator"], "ok");
//!
//! // The loop is unrolled and the four matmuls form one accumulation group.
//! let out = psum::text::print(&compiled.module);
//! assert!(out.contains("psum acc [128, 2048] bank=0"));
//! assert!(out.contains("matmul acc <- w[0:128, 0:256], x[0:128, 0:1024] flags=start zr=2"));
//! assert!(out.contains("flags=stop"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! This crate is the library; the command line is [`cli`], behind the
//! `cli` feature (the only part that depends on clap), and the `psum` binary
//! is a thin shell over it.

pub mod alloc;
pub mod arch;
pub mod bound;
#[cfg(feature = "cli")]
pub mod cli;
pub mod entity;
pub mod estimate;
pub mod export;
pub(crate) mod flow;
pub mod fuzzing;
pub mod gen;
pub mod ir;
pub mod lint;
pub mod lp;
pub mod matmul;
pub mod peers;
pub mod pipeline;
pub(crate) mod rebank;
pub mod report;
pub mod reuse;
pub mod source;
pub mod text;
pub mod trace;
pub mod unroll;
pub mod validate;
pub mod verify;
pub mod viz;
