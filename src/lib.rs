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
//! [`validate::validate`] is the check every pass assumes (SPEC §2.1–2.4);
//! [`text::parse`] only reads the syntax:
//!
//! ```
//! let src = "arch trn1\n\npsum a [128, 512]\nsbuf y [128, 512]\n\nblock main {\n  act y <- a\n}\n";
//! let m = psum::text::parse(src)?.module;
//! let err = psum::validate::validate(&m).unwrap_err();
//! assert_eq!(err.to_string(), "read of PSUM tensor a before any write");
//! # Ok::<(), psum::text::ParseError>(())
//! ```
//!
//! This crate is the library; the command line is [`cli`], behind the
//! `cli` feature (the only part that depends on clap), and the `psum` binary
//! is a thin shell over it.
//!
//! # Layers
//!
//! The modules sit on floors; each reads only the floors below it (DESIGN.md
//! has the module table).
//!
//! **Model** — the program and its forms:
//! - [`ir`]: the `Module` of tensors, instructions, loops and variables (SPEC §2).
//! - [`arch`]: the codenames, generations and the bank arithmetic (SPEC §1).
//! - [`text`]: the text form's parser and printer, and JSON (SPEC §2.5, §2.6).
//! - [`source`]: a file read and parsed, its errors rendered with their line.
//!
//! **Passes** — what `compile` runs, and its checker:
//! - [`validate`]: what a module must satisfy before any pass (SPEC §2.1–2.4).
//! - [`alloc`]: the PSUM bank allocators and spill code (SPEC §3).
//! - `rebank`: rotation, the banks placed again after allocation (SPEC §3.12).
//! - [`unroll`]: full loop unrolling (SPEC §4.3).
//! - [`matmul`]: accumulation groups, flags, memsets and zero regions (SPEC §4).
//! - [`verify`]: the checker, the simulator and the static checks (SPEC §5).
//!
//! **Driver** — the pass list and what it reports:
//! - [`pipeline`]: `compile`, the pass list [`pipeline::Pass::ALL`] and the verifier after it.
//! - [`report`]: the JSON report and the text summary (SPEC §6).
//! - [`reuse`]: the values, reuse edges and avoidable edges of a program (SPEC §10).
//! - [`estimate`]: the engine model's time of a program (SPEC §11).
//!
//! **NKI front end** (SPEC §9):
//! - [`trace`]: runs a kernel under the embedded Python tracer and reads its program.
//! - [`lint`]: the PSUM hazard lints of a traced program (SPEC §9.4).
//!
//! **Bounds and solvers** — the allocation problem outside psum's allocators:
//! - [`alloc::problem`]: the problem, extracted from a program, that the modules below read.
//! - [`bound`]: lower bounds on banks, spills and spill cost.
//! - `flow`: the minimum-cost flow on interval graphs behind the cost bound.
//! - [`lp`]: the split-spilling 0-1 program for MILP solvers.
//! - [`export`]: MiniMalloc CSV export and import.
//! - [`peers`]: the problems shared with regalloc2.
//!
//! **Generators** (SPEC §7):
//! - [`gen`]: the workloads, the random program generator and the program builder.
//! - [`fuzzing`]: the checks behind the fuzz targets.
//!
//! **Pictures** (SPEC §8):
//! - [`viz`]: the bank timeline as SVG and HTML.
//!
//! **Support**:
//! - [`entity`]: `IdVec` and `IdMap`, storage indexed by a typed id.
//! - [`cli`]: the command line (feature `cli`).

// Model.
pub mod arch;
pub mod ir;
pub mod source;
pub mod text;

// Passes.
pub mod alloc;
pub mod matmul;
pub(crate) mod rebank;
pub mod unroll;
pub mod validate;
pub mod verify;

// Driver.
pub mod estimate;
pub mod pipeline;
pub mod report;
pub mod reuse;

// NKI front end.
pub mod lint;
pub mod trace;

// Bounds and solvers.
pub mod bound;
pub mod export;
pub(crate) mod flow;
pub mod lp;
pub mod peers;

// Generators.
pub mod fuzzing;
pub mod gen;

// Pictures.
pub mod viz;

// Support.
#[cfg(feature = "cli")]
pub mod cli;
pub mod entity;
