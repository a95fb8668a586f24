//! The program builder behind every generator of SPEC §7: declarations and
//! statements appended to a module in program order, loops entered into the
//! arenas before their bodies (the parser's order, so `parse(print(m)) == m`),
//! the errors generation can end in, and the building blocks the workloads
//! share (PSUM banks side by side, stores, PE transposes).

use crate::arch::{self, Arch, ArchError, PSUM_BANK_SIZE};
use crate::ir::{
    Access, Affine, Block, DType, Flags, Inst, InstKind, Loop, LoopId, Matmul, MatmulKind, Mem,
    Module, Stmt, Tensor, TensorId, VarId,
};
use std::ops::Range;

/// Bytes per partition of one PSUM bank.
pub(super) const BANK: u32 = PSUM_BANK_SIZE;
/// f32 elements per partition in one bank: the N of a one-bank matmul.
pub(super) const TILE_N: u32 = 512;
/// PE rows: the contraction (K) chunk of a matmul.
pub(super) const K_TILE: u32 = 128;

/// Why a workload could not be generated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GenError {
    /// The workload name is not one of [`WorkloadKind::ALL`](super::workloads::WorkloadKind::ALL).
    #[error("unknown workload '{0}' (known: gemm, attention, attention-bwd, qkv, conv1d, column-tiled, random)")]
    UnknownWorkload(String),
    /// A `--key` the workload does not have.
    #[error("workload {workload} has no parameter '--{key}' (parameters: {known})")]
    UnknownParam {
        /// The workload.
        workload: &'static str,
        /// The key as given (without `--`).
        key: String,
        /// The workload's keys, comma-separated.
        known: String,
    },
    /// A `--key` at the end of the arguments with no value.
    #[error("parameter '--{0}' needs a value")]
    MissingValue(String),
    /// A value that does not parse.
    #[error("bad value '{value}' for '--{key}': expected {expected}")]
    BadValue {
        /// The key.
        key: &'static str,
        /// The value as given.
        value: String,
        /// What was expected.
        expected: &'static str,
    },
    /// More positional arguments than the workload takes.
    #[error("unexpected argument '{arg}' for workload {workload}")]
    ExtraArg {
        /// The workload.
        workload: &'static str,
        /// The argument.
        arg: String,
    },
    /// The architecture codename is unknown.
    #[error(transparent)]
    Arch(#[from] ArchError),
    /// A size that must be a positive multiple of a tile.
    #[error("{param} = {value} must be a positive multiple of {multiple}")]
    NotMultiple {
        /// The parameter.
        param: &'static str,
        /// Its value.
        value: u64,
        /// The tile it must be a multiple of.
        multiple: u64,
    },
    /// A parameter outside its range.
    #[error("{param} = {value} is out of range {lo}..={hi} ({why})")]
    OutOfRange {
        /// The parameter.
        param: &'static str,
        /// Its value.
        value: u64,
        /// Smallest allowed value.
        lo: u64,
        /// Largest allowed value.
        hi: u64,
        /// The constraint behind the range.
        why: &'static str,
    },
    /// The random workload's pressure is not a positive number of banks.
    #[error("pressure = {0} must be a positive number of banks")]
    BadPressure(f64),
    /// A tensor whose bytes per partition do not fit the IR's `u32`.
    #[error("tensor {tensor} would need {bytes} bytes per partition")]
    TooLarge {
        /// The tensor.
        tensor: String,
        /// Bytes per partition it would need.
        bytes: u64,
    },
    /// The SBUF tensors do not fit the architecture's SBUF partition.
    #[error("the SBUF tensors need {bytes} bytes per partition; {arch} has {limit}")]
    SbufOverflow {
        /// The architecture codename.
        arch: String,
        /// Bytes per partition the program's SBUF tensors need.
        bytes: u64,
        /// Bytes per SBUF partition of the architecture.
        limit: u64,
    },
}

/// An open statement list: the current block's body, or a loop's body.
struct Open {
    header: Option<LoopId>,
    body: Vec<Stmt>,
}

/// Appends declarations and statements to a module in program order.
pub(super) struct Builder {
    /// The module built so far.
    pub(super) module: Module,
    /// Its architecture.
    pub(super) arch: Arch,
    open: Vec<Open>,
}

impl Builder {
    pub(super) fn new(codename: &str) -> Result<Builder, GenError> {
        Ok(Builder {
            module: Module::new(codename),
            arch: arch::lookup(codename)?,
            open: vec![Open {
                header: None,
                body: Vec::new(),
            }],
        })
    }

    /// The M tile: PSUM partitions and PE columns a matmul output may use.
    pub(super) fn m_tile(&self) -> u32 {
        self.arch.pe().cols.min(self.arch.psum().part_size)
    }

    pub(super) fn tensor(
        &mut self,
        mem: Mem,
        name: impl Into<String>,
        partitions: u32,
        bytes: u64,
        dtype: DType,
    ) -> Result<TensorId, GenError> {
        let name = name.into();
        let bytes = u32::try_from(bytes).map_err(|_| GenError::TooLarge {
            tensor: name.clone(),
            bytes,
        })?;
        Ok(self
            .module
            .add_tensor(Tensor::new(name, mem, partitions, bytes, dtype)))
    }

    /// An f32 PSUM tensor.
    pub(super) fn psum(
        &mut self,
        name: impl Into<String>,
        partitions: u32,
        bytes: u64,
    ) -> Result<TensorId, GenError> {
        self.tensor(Mem::Psum, name, partitions, bytes, DType::F32)
    }

    pub(super) fn sbuf(
        &mut self,
        name: &str,
        partitions: u32,
        bytes: u64,
        dtype: DType,
    ) -> Result<TensorId, GenError> {
        self.tensor(Mem::Sbuf, name, partitions, bytes, dtype)
    }

    pub(super) fn dram(
        &mut self,
        name: &str,
        partitions: u32,
        bytes: u64,
        dtype: DType,
    ) -> Result<TensorId, GenError> {
        self.tensor(Mem::Dram, name, partitions, bytes, dtype)
    }

    /// Declares, per SBUF tensor in `inputs`, a DRAM tensor `NAME_in` shaped
    /// like it; returns the `(sbuf, dram)` pairs for [`Builder::load_inputs`].
    pub(super) fn dram_inputs(
        &mut self,
        inputs: &[TensorId],
    ) -> Result<Vec<(TensorId, TensorId)>, GenError> {
        let mut pairs = Vec::with_capacity(inputs.len());
        for &t in inputs {
            let s = self.module.tensor(t).clone();
            let name = format!("{}_in", s.name);
            let d = self.tensor(Mem::Dram, name, s.partitions, u64::from(s.bytes), s.dtype)?;
            pairs.push((t, d));
        }
        Ok(pairs)
    }

    /// `dma sbuf <- dram` for each `(sbuf, dram)` pair.
    pub(super) fn load_inputs(&mut self, pairs: &[(TensorId, TensorId)]) {
        for &(sb, dr) in pairs {
            let (dst, src) = (self.whole(sb), self.whole(dr));
            self.dma(dst, src);
        }
    }

    pub(super) fn whole(&self, t: TensorId) -> Access {
        Access::whole(t, self.module.tensor(t))
    }

    pub(super) fn emit(&mut self, kind: InstKind) {
        self.emit_inst(Inst::new(kind));
    }

    /// Appends `inst` (with its label and ordering edge) to the open body.
    pub(super) fn emit_inst(&mut self, inst: Inst) {
        let id = self.module.add_inst(inst);
        self.current().push(Stmt::Inst(id));
    }

    fn current(&mut self) -> &mut Vec<Stmt> {
        &mut self
            .open
            .last_mut()
            .expect("block body is always open")
            .body
    }

    pub(super) fn matmul_at(
        &mut self,
        kind: MatmulKind,
        dst: Access,
        stationary: Access,
        moving: Access,
        pos: (u32, u32),
    ) {
        self.emit(InstKind::Matmul(Box::new(Matmul {
            kind,
            dst,
            stationary,
            moving,
            pos,
            flags: Flags::Auto,
            zr: None,
            accumulate: None,
        })));
    }

    pub(super) fn matmul(&mut self, dst: Access, stationary: Access, moving: Access) {
        self.matmul_at(MatmulKind::Plain, dst, stationary, moving, (0, 0));
    }

    pub(super) fn act(&mut self, dst: Access, srcs: Vec<Access>) {
        self.emit(InstKind::Act { dst, srcs });
    }

    pub(super) fn dma(&mut self, dst: Access, src: Access) {
        self.emit(InstKind::Dma { dst, src });
    }

    /// Opens `loop NAME 0..trips` and returns its variable.
    pub(super) fn open_loop(&mut self, name: &str, trips: u32) -> VarId {
        self.open_range(name, 0, i64::from(trips))
    }

    /// Opens `loop NAME lo..hi` and returns its variable. The variable and
    /// the loop enter the arenas here, before the body, as the parser adds
    /// them, so that `parse(print(m)) == m`.
    pub(super) fn open_range(&mut self, name: &str, lo: i64, hi: i64) -> VarId {
        let var = self.module.add_var(name);
        let id = self.module.add_loop(Loop {
            var,
            lo,
            hi,
            affine: false,
            body: Vec::new(),
        });
        self.open.push(Open {
            header: Some(id),
            body: Vec::new(),
        });
        var
    }

    /// Closes the innermost open loop.
    pub(super) fn close_loop(&mut self) {
        let open = self.open.pop().expect("a loop is open");
        let id = open
            .header
            .expect("close_loop closes a loop, not the block");
        self.module.loops[id].body = open.body;
        self.current().push(Stmt::Loop(id));
    }

    /// The open loops, outermost first.
    pub(super) fn open_loops(&self) -> impl Iterator<Item = &Loop> + '_ {
        self.open
            .iter()
            .filter_map(|o| o.header)
            .map(|id| &self.module.loops[id])
    }

    /// Ends the current block under `name` and starts the next one (no loop
    /// may be open).
    pub(super) fn end_block(&mut self, name: impl Into<String>) {
        debug_assert_eq!(self.open.len(), 1, "every loop is closed");
        let body = std::mem::take(self.current());
        self.module.blocks.push(Block {
            name: name.into(),
            body,
        });
    }

    /// Ends the last block under `name` and checks that the SBUF tensors fit.
    pub(super) fn finish_as(mut self, name: &str) -> Result<Module, GenError> {
        self.end_block(name);
        let bytes: u64 = self
            .module
            .tensors
            .values()
            .filter(|t| t.mem == Mem::Sbuf)
            .map(|t| u64::from(t.bytes))
            .sum();
        let limit = u64::from(self.arch.sbuf().partition_size);
        if bytes > limit {
            return Err(GenError::SbufOverflow {
                arch: self.module.arch,
                bytes,
                limit,
            });
        }
        Ok(self.module)
    }

    /// Closes the block `main` and checks that the SBUF tensors fit.
    pub(super) fn finish(self) -> Result<Module, GenError> {
        self.finish_as("main")
    }
}

/// `c + Σ coef·var`.
pub(super) fn aff(c: u64, terms: &[(VarId, u64)]) -> Affine {
    let mut a = Affine::constant(c as i64);
    for &(v, coef) in terms {
        a.add_term(v, coef as i64);
    }
    a
}

/// `t[p0:p1, b0 : b0+len]`.
pub(super) fn at(t: TensorId, parts: Range<u32>, b0: Affine, len: u64) -> Access {
    let mut b1 = b0.clone();
    b1.constant += len as i64;
    Access::new(
        t,
        Affine::constant(i64::from(parts.start)),
        Affine::constant(i64::from(parts.end)),
        b0,
        b1,
    )
}

pub(super) fn in_range(
    param: &'static str,
    value: u32,
    lo: u32,
    hi: u32,
    why: &'static str,
) -> Result<u32, GenError> {
    if value < lo || value > hi {
        return Err(GenError::OutOfRange {
            param,
            value: value.into(),
            lo: lo.into(),
            hi: hi.into(),
            why,
        });
    }
    Ok(value)
}

/// `value / tile`, requiring a positive multiple.
pub(super) fn tiles(param: &'static str, value: u32, tile: u32) -> Result<u32, GenError> {
    if value == 0 || value % tile != 0 {
        return Err(GenError::NotMultiple {
            param,
            value: value.into(),
            multiple: tile.into(),
        });
    }
    Ok(value / tile)
}

impl Builder {
    /// One bank-sized f32 PSUM tensor `{prefix}{i}` of `partitions` for each
    /// `i` in `0..count`.
    pub(super) fn psum_banks(
        &mut self,
        prefix: &str,
        partitions: u32,
        count: u32,
    ) -> Result<Vec<TensorId>, GenError> {
        (0..count)
            .map(|i| self.psum(format!("{prefix}{i}"), partitions, BANK.into()))
            .collect()
    }

    /// `act y[:, i·BANK : (i+1)·BANK] <- accs[i]` for each accumulator: the
    /// banks evacuated side by side.
    pub(super) fn evacuate_side_by_side(&mut self, y: TensorId, accs: &[TensorId]) {
        let parts = self.module.tensor(y).partitions;
        let bank = u64::from(BANK);
        for (i, &acc) in accs.iter().enumerate() {
            let dst = at(y, 0..parts, aff(i as u64 * bank, &[]), bank);
            self.act(dst, vec![self.whole(acc)]);
        }
    }

    /// `dma out[0:P, offset : offset + B] <- sb`: stores the SBUF tensor `sb`
    /// (`[P, B]`) into its slot of `out`.
    pub(super) fn store(&mut self, out: TensorId, offset: Affine, sb: TensorId) {
        let t = self.module.tensor(sb);
        let (parts, bytes) = (t.partitions, u64::from(t.bytes));
        self.dma(at(out, 0..parts, offset, bytes), self.whole(sb));
    }

    /// A loop `j` of `matmul.t`s transposing the square blocks of `src`
    /// (`[M tile, 512]` bf16) through `ident` into the PSUM tile `tp`.
    pub(super) fn transpose_blocks(&mut self, tp: TensorId, src: TensorId, ident: TensorId) {
        let mt = self.m_tile();
        let mt64 = u64::from(mt);
        let j = self.open_loop("j", TILE_N / mt);
        self.matmul_at(
            MatmulKind::Transpose,
            at(tp, 0..mt, aff(0, &[(j, mt64 * 4)]), mt64 * 4),
            at(src, 0..mt, aff(0, &[(j, mt64 * 2)]), mt64 * 2),
            self.whole(ident),
            (0, 0),
        );
        self.close_loop();
    }

    /// A loop `j` over the square blocks of `lhs` (`[M tile, 512]` bf16, the
    /// output of [`Builder::transpose_blocks`], evacuated):
    /// `acc += lhs block j · rhs[:, rhs_at + j·len : … + len]`.
    pub(super) fn block_matmuls(
        &mut self,
        acc: TensorId,
        lhs: TensorId,
        rhs: TensorId,
        mut rhs_at: Affine,
        len: u64,
    ) {
        let mt = self.m_tile();
        let mt64 = u64::from(mt);
        let j = self.open_loop("j", TILE_N / mt);
        rhs_at.add_term(j, len as i64);
        self.matmul(
            self.whole(acc),
            at(lhs, 0..mt, aff(0, &[(j, mt64 * 2)]), mt64 * 2),
            at(rhs, 0..mt, rhs_at, len),
        );
        self.close_loop();
    }
}
