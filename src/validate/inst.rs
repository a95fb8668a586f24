//! The shape rules of each instruction kind (SPEC §2.3).

use super::context::Cx;
use super::error::{err, ValidateError, ValidateErrorKind};
use crate::ir::{Access, Attr, DType, InstId, InstKind, Loc, Matmul, MatmulKind, Mem};
use crate::text::access_to_string;

impl Cx<'_> {
    pub(super) fn inst(&self, id: InstId) -> Result<(), ValidateError> {
        let kind = &self.m.inst(id).kind;
        self.access(id, 0, kind.dst())?;
        let (mut k, mut checked) = (0, Ok(()));
        kind.for_each_src(|a| {
            k += 1;
            if checked.is_ok() {
                checked = self.access(id, k, a);
            }
        });
        checked?;
        match kind {
            InstKind::Matmul(mm) => self.matmul(id, mm),
            InstKind::Copy { dst, src } | InstKind::Dma { dst, src } => {
                let (d, s) = (
                    dst.part_extent() * self.elems(dst),
                    src.part_extent() * self.elems(src),
                );
                if d != s {
                    return self.mismatch(
                        id,
                        1,
                        dst,
                        src,
                        format!("{d} elements"),
                        format!("{s} elements"),
                    );
                }
                Ok(())
            }
            InstKind::Act { dst, srcs } => {
                let shape = |a: &Access| (a.part_extent(), self.elems(a));
                let text = |(p, e): (i64, i64)| format!("shape [{p} partitions, {e} elements]");
                for (k, s) in srcs.iter().enumerate() {
                    if shape(s) != shape(dst) {
                        return self.mismatch(id, k + 1, dst, s, text(shape(dst)), text(shape(s)));
                    }
                }
                Ok(())
            }
            InstKind::Memset { .. } | InstKind::Engine { .. } => Ok(()),
        }
    }

    fn matmul(&self, id: InstId, mm: &Matmul) -> Result<(), ValidateError> {
        let inst = || self.inst_name(id);
        let dt = self.m.tensor(mm.dst.tensor);
        if dt.mem != Mem::Psum {
            return err(
                Loc::Operand(id, 0),
                ValidateErrorKind::MatmulDstNotPsum {
                    inst: inst(),
                    name: dt.name.clone(),
                    mem: dt.mem,
                },
            );
        }
        // A PE transpose (NKI's nc_transpose) writes its input's dtype.
        let transposed = mm.kind == MatmulKind::Transpose
            && dt.dtype == self.m.tensor(mm.stationary.tensor).dtype;
        if dt.dtype != DType::F32
            && !transposed
            && (dt.dtype != DType::Bf16 || self.arch.arch_level() < 40)
        {
            return err(
                Loc::Operand(id, 0),
                ValidateErrorKind::MatmulDstDtype {
                    inst: inst(),
                    name: dt.name.clone(),
                    dtype: dt.dtype,
                },
            );
        }
        let text = |a: &Access| access_to_string(self.m, a);
        let (k, m) = (mm.stationary.part_extent(), self.elems(&mm.stationary));
        let (k2, n) = (mm.moving.part_extent(), self.elems(&mm.moving));
        let (dm, dn) = (mm.dst.part_extent(), self.elems(&mm.dst));
        let mismatch = if k != k2 {
            Some((
                2,
                format!(
                    "stationary {} has K={k} partitions but moving {} has K={k2}",
                    text(&mm.stationary),
                    text(&mm.moving)
                ),
            ))
        } else if dm != m {
            Some((
                0,
                format!(
                    "destination {} has {dm} partitions but stationary {} has M={m} elements",
                    text(&mm.dst),
                    text(&mm.stationary)
                ),
            ))
        } else if dn != n {
            Some((
                0,
                format!(
                    "destination {} has {dn} elements but moving {} has N={n}",
                    text(&mm.dst),
                    text(&mm.moving)
                ),
            ))
        } else {
            None
        };
        if let Some((operand, detail)) = mismatch {
            return err(
                Loc::Operand(id, operand),
                ValidateErrorKind::MatmulShape {
                    inst: inst(),
                    detail,
                },
            );
        }
        let pe = *self.arch.pe();
        let codename = &self.m.arch;
        let limits = [
            ('K', k, pe.rows, 1),
            ('M', m, pe.cols, 1),
            ('N', n, self.arch.max_matmul_n(), 2),
        ];
        for (dim, value, max, operand) in limits {
            if value > i64::from(max) {
                let why = match dim {
                    'K' => format!("the {} PE rows", pe.rows),
                    'M' => format!("the {} PE columns of {codename}", pe.cols),
                    _ if self.arch.arch_level() >= 40 => format!("eight banks on {codename}"),
                    _ => format!("one bank on {codename}; only gen4 allows 4096"),
                };
                return err(
                    Loc::Operand(id, operand),
                    ValidateErrorKind::MatmulLimit {
                        inst: inst(),
                        dim,
                        value,
                        max,
                        why,
                    },
                );
            }
        }
        let (row, col) = mm.pos;
        if i64::from(row) + k > i64::from(pe.rows) || i64::from(col) + m > i64::from(pe.cols) {
            return err(
                Loc::Attr(id, Attr::Pos),
                ValidateErrorKind::PosOutOfArray {
                    inst: inst(),
                    k,
                    m,
                    row,
                    col,
                    rows: pe.rows,
                    cols: pe.cols,
                },
            );
        }
        if self.arch.arch_level() < 40 {
            if let Some(it) = self.bank_crossing(&mm.dst.b0(), mm.dst.byte_extent()) {
                return err(
                    Loc::Operand(id, 0),
                    ValidateErrorKind::BankCrossing {
                        inst: inst(),
                        access: text(&mm.dst),
                        at: self.iteration_text(&it),
                    },
                );
            }
        }
        Ok(())
    }

    fn mismatch(
        &self,
        id: InstId,
        operand: usize,
        dst: &Access,
        src: &Access,
        dst_shape: String,
        src_shape: String,
    ) -> Result<(), ValidateError> {
        err(
            Loc::Operand(id, operand),
            ValidateErrorKind::ShapeMismatch {
                inst: self.inst_name(id),
                dst: access_to_string(self.m, dst),
                dst_shape,
                src: access_to_string(self.m, src),
                src_shape,
            },
        )
    }
}
