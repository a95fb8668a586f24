//! Matmul passes (SPEC §4, seed 004 "Matmul Tile Ordering and
//! Accumulation-Group Legalization").
//!
//! - `first`: `set_first_matmults`, the provisional start marker (§4.1).
//! - [`order`]: `order_column_tiled_mms`, ordered edges between column tiles (§4.2).
//! - `groups`: accumulation runs, the `MatmulAccGrp` geometry, the five
//!   overlap predicates and the union-find clustering (§4.3.1–3).
//! - `legalize`: the START/STOP/ACCUMULATE flags, inserted memsets and
//!   zero-region widths (§4.3.4–5), and [`legalize_program`], which runs §4.2
//!   and §4.3 on an allocated loop-free program.
//! - `trace`: the program the passes read, its PSUM accesses placed in
//!   physical PSUM; `cells`: the grid of physical cells and the sweeps over
//!   it; `lists`: the flat tables; `error`: [`MatmulError`].
//!
//! Its tables are flat: per-ordinal and per-group lists are [`Lists`], and
//! ordinals and groups are indices into vectors.
//!
//! The legalizer reasons about physical PSUM: a tensor with `bank=B` occupies
//! the cells `B·2048 + offset` of every partition it has (SPEC §4.4).

mod cells;
mod error;
pub(crate) mod first;
pub(crate) mod groups;
pub(crate) mod legalize;
mod lists;
pub mod order;
mod trace;

pub use error::MatmulError;
pub use first::set_first_matmults;
pub use groups::{analyze, AccGroup, Analysis, PartitionMode};
pub use legalize::{legalize_program, Cluster, MatmulReport};
pub use lists::Lists;
pub use order::order_column_tiled_mms;
pub(crate) use trace::Trace;
