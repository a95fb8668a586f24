//! Verification (SPEC §5): proves a compiled program equivalent to its
//! original with three independent checks that share no code with the passes
//! they check.
//!
//! 1. [`checker`]: symbolic execution of the result over physical PSUM,
//!    tracking which tensor and which write each cell holds (§5.1).
//! 2. A value simulator: execution of the original (virtual storage, §2.4)
//!    and of the result (physical PSUM with flags, §4.4) on the same seeded
//!    inputs, comparing every SBUF and DRAM tensor of the original (§5.2).
//!    [`symbolic`] (the default) hashes values, at a cost per piece of
//!    storage touched; [`sim`] computes them exactly in f64, at a cost per
//!    multiply-add ([`Simulator::Exact`], `psum verify --exact`).
//! 3. [`statics`]: banks, spill/reload declarations, flags and `zr` (§5.3).
//!
//! [`admit`] bounds what the checks may cost before they run (§5.4).
//!
//! The abstract states live in `rects` maps, whose cost grows with the
//! pieces a program writes, not with its cells. [`verify`] runs all three
//! checks; [`VerifyReport`] serializes to the `verify` key of the JSON report.

pub mod checker;
mod exec;
mod layout;
pub(crate) mod limits;
pub(crate) mod rects;
pub mod sim;
pub mod statics;
pub mod symbolic;

pub use checker::CheckError;
pub use limits::{admit, LimitError, MAX_EXACT_CELLS};
pub use limits::{admit_instances, DEFAULT_EXACT_LIMIT};
pub use sim::SimError;
pub(crate) use statics::StaticError;

use crate::entity::IdMap;
use crate::ir::{Loc, Module, TensorId};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// The outcome of the three checks of SPEC §5.
#[derive(Clone, Debug, PartialEq)]
pub struct VerifyReport {
    /// The symbolic checker (§5.1).
    pub checker: Result<(), CheckError>,
    /// The value simulator (§5.2).
    pub simulator: Result<(), SimError>,
    /// The static checks (§5.3).
    pub statics: Result<(), StaticError>,
}

impl VerifyReport {
    /// Whether all three checks passed.
    pub fn is_ok(&self) -> bool {
        self.checker.is_ok() && self.simulator.is_ok() && self.statics.is_ok()
    }

    /// The first violation, in the order static checks, checker, simulator.
    pub fn first_error(&self) -> Option<String> {
        let s = self
            .statics
            .as_ref()
            .err()
            .map(|e| format!("static check: {e}"));
        let c = self.checker.as_ref().err().map(|e| format!("checker: {e}"));
        let v = self
            .simulator
            .as_ref()
            .err()
            .map(|e| format!("simulator: {e}"));
        s.or(c).or(v)
    }

    /// Where the first violation is in `result` (an instruction or a tensor
    /// declaration), for a diagnostic with its source line.
    pub fn first_loc(&self, result: &Module) -> Loc {
        let inst = match (&self.statics, &self.checker) {
            (Err(e), _) => e.inst().map(Loc::Inst).or_else(|| {
                e.tensor()
                    .and_then(|t| result.tensor_by_name(t))
                    .map(Loc::Tensor)
            }),
            (Ok(()), Err(e)) => e.inst().map(Loc::Inst),
            _ => None,
        };
        inst.unwrap_or(Loc::Module)
    }
}

fn verdict<E: std::fmt::Display>(r: &Result<(), E>) -> String {
    match r {
        Ok(()) => "ok".to_string(),
        Err(e) => e.to_string(),
    }
}

impl Serialize for VerifyReport {
    /// `{checker, simulator, statics}`, each `"ok"` or the error message.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(3))?;
        map.serialize_entry("checker", &verdict(&self.checker))?;
        map.serialize_entry("simulator", &verdict(&self.simulator))?;
        map.serialize_entry("statics", &verdict(&self.statics))?;
        map.end()
    }
}

/// Which value simulator verification runs (SPEC §5.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Simulator {
    /// Hashed values, a cost per piece of storage touched ([`symbolic`]).
    #[default]
    Symbolic,
    /// Exact f64 values, a cost per multiply-add ([`sim`]).
    Exact,
}

/// Verifies that `result` (allocated, possibly unrolled and legalized)
/// computes what `original` computes (SPEC §5), with the symbolic simulator.
///
/// ```
/// let src = "arch trn1
///
/// psum a [128, 2048]
/// psum b [128, 2048]
/// sbuf w [128, 256] bf16
/// sbuf x [128, 1024] bf16
/// sbuf y [128, 2048]
///
/// block main {
///   matmul a <- w, x
///   act y <- a
///   matmul b <- w, x
///   act y <- b
/// }
/// ";
/// let input = psum::text::parse(src)?.module;
/// let out = psum::alloc::allocate(&input, &Default::default())?;
/// assert!(psum::verify::verify(&input, &out.module).is_ok());
///
/// // Reading `b` first reads what the input does not: a wrong value.
/// let mut wrong = out.module.clone();
/// wrong.insts.swap(psum::ir::InstId::new(1), psum::ir::InstId::new(3));
/// let report = psum::verify::verify(&input, &wrong);
/// assert!(!report.is_ok());
/// assert_eq!(
///     report.checker.unwrap_err().to_string(),
///     "%1 reads b at bank 0, partition 0, byte 0: expected a write of b (there was none), found a written by %0"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn verify(original: &Module, result: &Module) -> VerifyReport {
    verify_with(original, result, Simulator::Symbolic)
}

/// [`verify`] with the value simulator `simulator`. The simulator runs on a
/// thread of its own beside the checker and the static checks: the three
/// only read the two programs. Each visits every instruction instance, so
/// a caller bounds the programs first with [`admit`] (SPEC §5.4).
pub fn verify_with(original: &Module, result: &Module, simulator: Simulator) -> VerifyReport {
    let seed = sim::DEFAULT_SEED;
    std::thread::scope(|s| {
        let simulated = s.spawn(|| match simulator {
            Simulator::Symbolic => symbolic::compare(original, result, seed),
            Simulator::Exact => sim::compare(original, result, seed),
        });
        let checker = checker::check(original, result);
        let statics = statics::check(original, result);
        VerifyReport {
            checker,
            simulator: simulated
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            statics,
        }
    })
}

/// Which spill-code tensor a name denotes (SPEC §3.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpillRole {
    /// `X_SpillTensorCopyK`, an SBUF copy of X.
    Spill,
    /// `X_ReloadTensorCopyJ`, a PSUM temporary standing for X.
    Reload,
}

/// Splits `X_SpillTensorCopyK` / `X_ReloadTensorCopyJ` into `(X, role, K)`.
pub(crate) fn spill_name(name: &str) -> Option<(&str, SpillRole, u64)> {
    [
        ("_SpillTensorCopy", SpillRole::Spill),
        ("_ReloadTensorCopy", SpillRole::Reload),
    ]
    .into_iter()
    .find_map(|(tag, role)| {
        let i = name.rfind(tag)?;
        let digits = &name[i + tag.len()..];
        let ok = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
        let k = digits.parse().ok().filter(|_| ok)?;
        (i > 0).then(|| (&name[..i], role, k))
    })
}

/// The logical tensor ("family") every result tensor stands for: spill and
/// reload tensors the original does not declare stand for their base tensor
/// when shape and dtype agree; every other tensor stands for itself.
pub(crate) struct Families {
    of: IdMap<TensorId, u32>,
    bases: Vec<TensorId>,
    tracked: Vec<bool>,
}

impl Families {
    /// Derives the families of `result`'s tensors.
    pub(crate) fn new(original: &Module, result: &Module) -> Self {
        let n = result.tensors.len();
        let mut base_of: IdMap<TensorId, TensorId> = result.tensors.keys().collect();
        let (orig_names, res_names) = (original.name_index(), result.name_index());
        for (i, t) in result.tensors.iter() {
            if orig_names.contains_key(t.name.as_str()) {
                continue;
            }
            let Some((base, _, _)) = spill_name(&t.name) else {
                continue;
            };
            let Some(&b) = res_names.get(base) else {
                continue;
            };
            let bt = result.tensor(b);
            if (bt.partitions, bt.bytes, bt.dtype) == (t.partitions, t.bytes, t.dtype) {
                base_of[i] = b;
            }
        }
        // Resolve chains (a base that is itself a member); names strictly shorten.
        for i in result.tensors.keys() {
            let mut b = base_of[i];
            while base_of[b] != b {
                b = base_of[b];
            }
            base_of[i] = b;
        }
        let mut fam_of_base = IdMap::with_len(n, u32::MAX);
        let mut bases = Vec::new();
        let mut of = IdMap::with_len(n, 0);
        for i in result.tensors.keys() {
            let b = base_of[i];
            if fam_of_base[b] == u32::MAX {
                fam_of_base[b] = bases.len() as u32;
                bases.push(b);
            }
            of[i] = fam_of_base[b];
        }
        let tracked = bases
            .iter()
            .map(|&b| result.tensor(b).mem == crate::ir::Mem::Psum)
            .collect();
        Families { of, bases, tracked }
    }

    /// The family of tensor `t`.
    pub(crate) fn of(&self, t: TensorId) -> u32 {
        self.of[t]
    }

    /// The base tensor of family `f`.
    pub(crate) fn base(&self, f: u32) -> TensorId {
        self.bases[f as usize]
    }

    /// Whether `t`'s family lives in PSUM (and so is checked).
    pub(crate) fn tracked(&self, t: TensorId) -> bool {
        self.tracked[self.of(t) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spill_names_split() {
        assert_eq!(
            spill_name("acc.0_ReloadTensorCopy12"),
            Some(("acc.0", SpillRole::Reload, 12))
        );
        assert_eq!(
            spill_name("t0_SpillTensorCopy0"),
            Some(("t0", SpillRole::Spill, 0))
        );
        assert_eq!(spill_name("t0_SpillTensorCopy"), None);
        assert_eq!(spill_name("_SpillTensorCopy3"), None);
        assert_eq!(spill_name("t0_SpillTensorCopy1x"), None);
    }
}
