//! What the checks of one structurally sound module share: the module,
//! its architecture, the names of its instructions and the range of each
//! loop variable.

use crate::arch::Arch;
use crate::entity::IdMap;
use crate::ir::{InstId, LoopId, Module, VarId};
use crate::text::InstNames;

/// Validation context over a structurally sound module.
pub(super) struct Cx<'m> {
    pub(super) m: &'m Module,
    pub(super) arch: Arch,
    /// How instructions are named.
    pub(super) names: InstNames<'m>,
    /// `[lo, hi)` of each variable's loop.
    pub(super) range: IdMap<VarId, (i64, i64)>,
}

/// An assignment of values to some loop variables.
pub(super) type Iteration = Vec<(VarId, i64)>;

impl<'m> Cx<'m> {
    pub(super) fn new(
        m: &'m Module,
        arch: Arch,
        loop_of_var: &IdMap<VarId, Option<LoopId>>,
    ) -> Self {
        let range = loop_of_var
            .values()
            .map(|l| l.map_or((0, 1), |l| (m.loop_(l).lo, m.loop_(l).hi)))
            .collect();
        Cx {
            m,
            arch,
            names: InstNames::new(m),
            range,
        }
    }

    pub(super) fn inst_name(&self, id: InstId) -> String {
        self.names.describe(id, true)
    }

    pub(super) fn iteration_text(&self, it: &Iteration) -> String {
        if it.is_empty() {
            return String::new();
        }
        let parts: Vec<_> = it
            .iter()
            .map(|(v, x)| format!("{}={x}", self.m.vars[*v].name))
            .collect();
        format!(" at {}", parts.join(", "))
    }
}
