//! What simplify and select read of one iteration's dirty graph: the
//! interference graph, its nodes and their initial budgets.

use super::interference::{DirtyId, Interference};
use super::simplify::budgets::Budgets;
use crate::alloc::liveness::Node;
use crate::entity::IdVec;

/// What simplify and select read of one iteration's dirty graph.
#[derive(Clone, Copy)]
pub(crate) struct Graph<'a> {
    /// The interference graph of the dirty nodes.
    pub g: &'a Interference,
    /// The dirty nodes.
    pub nodes: &'a IdVec<DirtyId, Node>,
    /// Their initial budgets and worklists, with their costs.
    pub init: &'a Budgets<'a>,
    /// Banks the allocator may use.
    pub num_banks: u32,
    /// A drain splits what remains of a part of this many nodes or more
    /// into ranges it drains one by one (`usize::MAX`: never, so the stack
    /// keeps the order of one drain).
    pub split_min: usize,
}
