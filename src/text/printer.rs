//! The canonical printer (SPEC §2.5): `Display` for [`Module`] writes the
//! text format such that parsing it back gives the same program. It expects a
//! structurally sound module (ids in range), as [`crate::validate`] ensures.
//!
//! Everything is appended to one `String` with numbers formatted by `itoa`:
//! a program of 100k tensors is tens of megabytes, and `core::fmt`'s
//! machinery per number and per piece of text would cost more than the rest
//! of printing.

use crate::ir::{write_affine, Access, Bound, Flags, InstId, InstKind, Module, Stmt};
use std::{fmt, io};

/// Prints one access: the bare name when it covers the whole tensor, else
/// `NAME[p0:p1, b0:b1]`.
pub fn access_to_string(m: &Module, a: &Access) -> String {
    let mut s = String::new();
    push_access(&mut s, m, a);
    s
}

/// Prints one instruction as it appears in the canonical form (no indent).
pub fn inst_to_string(m: &Module, id: InstId) -> String {
    let mut s = String::new();
    push_inst(&mut s, m, id);
    s
}

/// The canonical text of `m` (what `Display` writes).
pub(super) fn module_to_string(m: &Module) -> String {
    let mut out = Out {
        buf: String::with_capacity(64 * (m.insts.len() + m.tensors.len()) + 64),
        sink: None,
    };
    push_module(&mut out, m).expect("printing into a String cannot fail");
    out.buf
}

/// Writes the canonical text of `m` to `w` in chunks of about [`CHUNK`]
/// bytes, never holding the whole text.
pub(super) fn write_module(m: &Module, w: &mut dyn io::Write) -> io::Result<()> {
    let mut out = Out {
        buf: String::with_capacity(CHUNK + 4096),
        sink: Some(w),
    };
    push_module(&mut out, m)
}

/// How much printed text [`write_module`] gathers before writing it.
const CHUNK: usize = 1 << 20;

/// Where printed text goes: one `String`, or a writer it is handed to in chunks.
struct Out<'w> {
    buf: String,
    sink: Option<&'w mut dyn io::Write>,
}

impl Out<'_> {
    /// Hands the text gathered so far to the writer once it fills a chunk
    /// (`all`: whatever there is).
    fn spill(&mut self, all: bool) -> io::Result<()> {
        if let Some(w) = self.sink.as_mut() {
            if all || self.buf.len() >= CHUNK {
                w.write_all(self.buf.as_bytes())?;
                self.buf.clear();
            }
        }
        Ok(())
    }
}

fn push_num(out: &mut String, n: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(n));
}

fn push_access(out: &mut String, m: &Module, a: &Access) {
    let t = m.tensor(a.tensor);
    out.push_str(&t.name);
    if a.is_whole(t) {
        return;
    }
    out.push('[');
    if a.is_affine() {
        for (b, sep) in Bound::ALL.into_iter().zip([":", ", ", ":", ""]) {
            let (constant, terms) = b.parts(a);
            write_affine(out, constant, terms, &m.vars);
            out.push_str(sep);
        }
    } else {
        // Constant bounds print as their numbers, without building expressions.
        let r = a.region(|_| 0);
        push_num(out, r.p0);
        out.push(':');
        push_num(out, r.p1);
        out.push_str(", ");
        push_num(out, r.b0);
        out.push(':');
        push_num(out, r.b1);
    }
    out.push(']');
}

fn push_inst(out: &mut String, m: &Module, id: InstId) {
    let inst = m.inst(id);
    if let Some(l) = inst.label() {
        out.push('%');
        out.push_str(l);
        out.push_str(": ");
    }
    out.push_str(inst.kind.mnemonic());
    out.push(' ');
    push_access(out, m, inst.kind.dst());
    if let InstKind::Memset { value, .. } = &inst.kind {
        out.push_str(" = ");
        out.push_str(&value.to_string());
    } else {
        out.push_str(" <- ");
        let mut sep = "";
        inst.kind.for_each_src(|s| {
            out.push_str(sep);
            push_access(out, m, s);
            sep = ", ";
        });
    }
    if let InstKind::Matmul(mm) = &inst.kind {
        if mm.pos != (0, 0) {
            out.push_str(" pos=");
            push_num(out, mm.pos.0);
            out.push(',');
            push_num(out, mm.pos.1);
        }
        if let Flags::Set(s) = mm.flags {
            out.push_str(" flags=");
            out.push_str(&s.to_string());
        }
        if let Some(zr) = mm.zr {
            out.push_str(" zr=");
            push_num(out, zr);
        }
        if let Some(acc) = mm.accumulate {
            out.push_str(if acc {
                " accumulate=true"
            } else {
                " accumulate=false"
            });
        }
    }
    if let Some(a) = inst.after() {
        out.push_str(" after=%");
        out.push_str(a);
    }
    if let Some(loc) = inst.loc() {
        out.push_str(" loc=\"");
        out.push_str(loc);
        out.push('"');
    }
}

fn push_body(o: &mut Out<'_>, m: &Module, body: &[Stmt], depth: usize) -> io::Result<()> {
    let indent = |out: &mut String| (0..depth).for_each(|_| out.push_str("  "));
    for s in body {
        let out = &mut o.buf;
        match *s {
            Stmt::Inst(i) => {
                indent(out);
                push_inst(out, m, i);
                out.push('\n');
            }
            Stmt::Loop(l) => {
                let lp = m.loop_(l);
                indent(out);
                out.push_str("loop ");
                out.push_str(&m.vars[lp.var].name);
                out.push(' ');
                push_num(out, lp.lo);
                out.push_str("..");
                push_num(out, lp.hi);
                out.push_str(if lp.affine { " affine {\n" } else { " {\n" });
                push_body(o, m, &lp.body, depth + 1)?;
                indent(&mut o.buf);
                o.buf.push_str("}\n");
            }
        }
        o.spill(false)?;
    }
    Ok(())
}

fn push_module(o: &mut Out<'_>, m: &Module) -> io::Result<()> {
    let out = &mut o.buf;
    out.push_str("arch ");
    out.push_str(&m.arch);
    out.push('\n');
    if !m.tensors.is_empty() {
        out.push('\n');
    }
    for t in &m.tensors {
        out.push_str(t.mem.keyword());
        out.push(' ');
        out.push_str(&t.name);
        out.push_str(" [");
        push_num(out, t.partitions);
        out.push_str(", ");
        push_num(out, t.bytes);
        out.push(']');
        if t.dtype != Default::default() {
            out.push(' ');
            out.push_str(t.dtype.keyword());
        }
        if let Some(b) = t.bank {
            out.push_str(" bank=");
            push_num(out, b);
        }
        if let Some(a) = t.addr {
            out.push_str(" addr=");
            push_num(out, a);
        }
        if let Some(loc) = &t.loc {
            out.push_str(" loc=\"");
            out.push_str(loc);
            out.push('"');
        }
        if let Some(scope) = &t.scope {
            out.push_str(" scope=");
            out.push_str(scope);
        }
        out.push('\n');
    }
    for b in &m.blocks {
        o.buf.push_str("\nblock ");
        o.buf.push_str(&b.name);
        o.buf.push_str(" {\n");
        push_body(o, m, &b.body, 1)?;
        o.buf.push_str("}\n");
    }
    o.spill(true)
}

impl fmt::Display for Module {
    /// The canonical text form (SPEC §2.5).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&module_to_string(self))
    }
}
