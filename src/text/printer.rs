//! The canonical printer (SPEC §2.5): `Display` for [`Module`] writes the
//! text format such that parsing it back gives the same program. It expects a
//! structurally sound module (ids in range), as [`crate::validate`] ensures.

use crate::ir::{Access, Flags, InstId, InstKind, Module, Stmt};
use std::fmt::{self, Write};

/// Prints one access: the bare name when it covers the whole tensor, else
/// `NAME[p0:p1, b0:b1]`.
pub fn access_to_string(m: &Module, a: &Access) -> String {
    let mut s = String::new();
    write_access(&mut s, m, a).expect("writing to a String cannot fail");
    s
}

/// Prints one instruction as it appears in the canonical form (no indent).
pub fn inst_to_string(m: &Module, id: InstId) -> String {
    let mut s = String::new();
    write_inst(&mut s, m, id).expect("writing to a String cannot fail");
    s
}

fn write_access(f: &mut impl Write, m: &Module, a: &Access) -> fmt::Result {
    let t = m.tensor(a.tensor);
    f.write_str(&t.name)?;
    if a.is_whole(t) {
        return Ok(());
    }
    if !a.is_affine() {
        // Constant bounds print as their numbers, without building expressions.
        let r = a.region(|_| 0);
        return write!(f, "[{}:{}, {}:{}]", r.p0, r.p1, r.b0, r.b1);
    }
    let v = &m.vars;
    write!(
        f,
        "[{}:{}, {}:{}]",
        a.p0().display(v),
        a.p1().display(v),
        a.b0().display(v),
        a.b1().display(v)
    )
}

fn write_inst(f: &mut impl Write, m: &Module, id: InstId) -> fmt::Result {
    let inst = m.inst(id);
    if let Some(l) = inst.label() {
        write!(f, "%{l}: ")?;
    }
    write!(f, "{} ", inst.kind.mnemonic())?;
    write_access(f, m, inst.kind.dst())?;
    if let InstKind::Memset { value, .. } = &inst.kind {
        write!(f, " = {value}")?;
    } else {
        f.write_str(" <- ")?;
        let mut sep = "";
        let mut written = Ok(());
        inst.kind.for_each_src(|s| {
            written = written
                .and_then(|()| f.write_str(sep))
                .and_then(|()| write_access(f, m, s));
            sep = ", ";
        });
        written?;
    }
    if let InstKind::Matmul(mm) = &inst.kind {
        if mm.pos != (0, 0) {
            write!(f, " pos={},{}", mm.pos.0, mm.pos.1)?;
        }
        if let Flags::Set(s) = mm.flags {
            write!(f, " flags={s}")?;
        }
        if let Some(zr) = mm.zr {
            write!(f, " zr={zr}")?;
        }
        if let Some(acc) = mm.accumulate {
            write!(f, " accumulate={acc}")?;
        }
    }
    if let Some(a) = inst.after() {
        write!(f, " after=%{a}")?;
    }
    if let Some(loc) = inst.loc() {
        write!(f, " loc=\"{loc}\"")?;
    }
    Ok(())
}

fn write_body(f: &mut fmt::Formatter<'_>, m: &Module, body: &[Stmt], depth: usize) -> fmt::Result {
    let indent = |f: &mut fmt::Formatter<'_>| (0..depth).try_for_each(|_| f.write_str("  "));
    for s in body {
        match *s {
            Stmt::Inst(i) => {
                indent(f)?;
                write_inst(f, m, i)?;
                f.write_str("\n")?;
            }
            Stmt::Loop(l) => {
                let lp = m.loop_(l);
                let var = &m.vars[lp.var.index()].name;
                indent(f)?;
                let affine = if lp.affine { " affine" } else { "" };
                writeln!(f, "loop {var} {}..{}{affine} {{", lp.lo, lp.hi)?;
                write_body(f, m, &lp.body, depth + 1)?;
                indent(f)?;
                f.write_str("}\n")?;
            }
        }
    }
    Ok(())
}

impl fmt::Display for Module {
    /// The canonical text form (SPEC §2.5).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "arch {}", self.arch)?;
        if !self.tensors.is_empty() {
            f.write_str("\n")?;
        }
        for t in &self.tensors {
            write!(f, "{} {} [{}, {}]", t.mem, t.name, t.partitions, t.bytes)?;
            if t.dtype != Default::default() {
                write!(f, " {}", t.dtype)?;
            }
            if let Some(b) = t.bank {
                write!(f, " bank={b}")?;
            }
            if let Some(a) = t.addr {
                write!(f, " addr={a}")?;
            }
            if let Some(loc) = &t.loc {
                write!(f, " loc=\"{loc}\"")?;
            }
            if let Some(scope) = &t.scope {
                write!(f, " scope={scope}")?;
            }
            f.write_str("\n")?;
        }
        for b in &self.blocks {
            writeln!(f, "\nblock {} {{", b.name)?;
            write_body(f, self, &b.body, 1)?;
            f.write_str("}\n")?;
        }
        Ok(())
    }
}
