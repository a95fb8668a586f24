//! Declarations, labels and loop ranges (SPEC §2.1, §2.2).

use super::context::Cx;
use super::error::{err, ValidateError, ValidateErrorKind};
use crate::arch::Arch;
use crate::ir::{Attr, Loc, Mem, Module};
use std::collections::HashMap;

pub(super) fn declarations(m: &Module, arch: &Arch) -> Result<(), ValidateError> {
    let mut names = HashMap::new();
    for (i, t) in m.tensors.values().enumerate() {
        let loc = Loc::Tensor(crate::ir::TensorId::new(i));
        if names.insert(t.name.as_str(), i).is_some() {
            return err(loc, ValidateErrorKind::DuplicateTensor(t.name.clone()));
        }
        if t.partitions == 0 || t.bytes == 0 {
            return err(
                loc,
                ValidateErrorKind::EmptyTensor {
                    name: t.name.clone(),
                    partitions: t.partitions,
                    bytes: t.bytes,
                },
            );
        }
        if t.bytes % t.dtype.size() != 0 {
            return err(
                loc,
                ValidateErrorKind::BytesNotMultiple {
                    name: t.name.clone(),
                    bytes: t.bytes,
                    dtype: t.dtype,
                },
            );
        }
        let max = match t.mem {
            Mem::Psum => Some(arch.psum().part_size),
            Mem::Sbuf => Some(arch.sbuf().num_partitions),
            Mem::Dram => None,
        };
        if let Some(max) = max.filter(|&max| t.partitions > max) {
            return err(
                loc,
                ValidateErrorKind::TooManyPartitions {
                    name: t.name.clone(),
                    mem: t.mem,
                    partitions: t.partitions,
                    max,
                    arch: m.arch.clone(),
                },
            );
        }
    }
    Ok(())
}

impl Cx<'_> {
    pub(super) fn labels(&self) -> Result<(), ValidateError> {
        let mut seen = HashMap::new();
        for id in self.m.insts_in_order() {
            if let Some(l) = self.m.inst(id).label() {
                if seen.insert(l, id).is_some() {
                    return err(
                        Loc::Attr(id, Attr::Label),
                        ValidateErrorKind::DuplicateLabel(l.to_string()),
                    );
                }
            }
        }
        for id in self.m.insts_in_order() {
            if let Some(a) = self.m.inst(id).after() {
                if !seen.contains_key(a) {
                    return err(
                        Loc::Attr(id, Attr::After),
                        ValidateErrorKind::UnknownAfter(a.to_string()),
                    );
                }
            }
        }
        Ok(())
    }

    pub(super) fn loops(&self) -> Result<(), ValidateError> {
        let mut out = Ok(());
        self.m.walk(|v, _| {
            if let (crate::ir::Visit::Enter(l), Ok(())) = (v, &out) {
                let lp = self.m.loop_(l);
                if lp.hi <= lp.lo {
                    out = err(
                        Loc::LoopRange(l),
                        ValidateErrorKind::EmptyLoop {
                            var: self.m.vars[lp.var].name.clone(),
                            lo: lp.lo,
                            hi: lp.hi,
                        },
                    );
                }
            }
        });
        out
    }
}
