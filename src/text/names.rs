//! How diagnostics name an instruction (SPEC §2.3, §4.3): `%label`, else
//! `%N` for the N-th instruction of the printed program (each loop body
//! once), with its mnemonic and, where wanted, its kernel line.

use crate::entity::IdMap;
use crate::ir::{InstId, Module};

/// The names of a module's instructions, numbered as the printer orders them.
pub(crate) struct InstNames<'m> {
    m: &'m Module,
    order: Vec<InstId>,
    pos: IdMap<InstId, usize>,
}

impl<'m> InstNames<'m> {
    /// Numbers the instructions of `m`.
    pub(crate) fn new(m: &'m Module) -> Self {
        let order = m.insts_in_order();
        let mut pos = IdMap::with_len(m.insts.len(), 0);
        for (n, &i) in order.iter().enumerate() {
            pos[i] = n;
        }
        InstNames { m, order, pos }
    }

    /// The instructions in printed order.
    pub(crate) fn order(&self) -> &[InstId] {
        &self.order
    }

    /// Where `id` is in printed order.
    pub(crate) fn position(&self, id: InstId) -> usize {
        self.pos[id]
    }

    /// `%label (matmul)` or `%N (matmul)`; with `loc`, an instruction that
    /// has a kernel line names it too: `%N (matmul at kernel.py:42)`.
    pub(crate) fn describe(&self, id: InstId, loc: bool) -> String {
        let inst = self.m.inst(id);
        let what = match inst.loc().filter(|_| loc) {
            Some(l) => format!("{} at {l}", inst.kind.mnemonic()),
            None => inst.kind.mnemonic().to_string(),
        };
        match inst.label() {
            Some(l) => format!("%{l} ({what})"),
            None => format!("%{} ({what})", self.pos[id]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlabelled_instructions_are_numbered_in_printed_order() {
        let src = "arch trn1\npsum acc [128, 2048]\nsbuf x [128, 2048]\n\
                   block b {\n  loop i 0..2 {\n    copy acc <- x loc=\"k.py:3\"\n  }\n  %out: copy x <- acc\n}\n";
        let m = crate::text::parse(src).unwrap().module;
        let names = InstNames::new(&m);
        let [copy, out] = [names.order()[0], names.order()[1]];
        assert_eq!(names.position(out), 1);
        assert_eq!(names.describe(copy, false), "%0 (copy)");
        assert_eq!(names.describe(copy, true), "%0 (copy at k.py:3)");
        assert_eq!(names.describe(out, true), "%out (copy)");
    }
}
