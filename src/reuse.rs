//! The PSUM reuse measure (SPEC §10, psum's own): which values of PSUM
//! tensors wait for which, in a compiled program (allocated, unrolled and
//! legalized, so that every bank is known and every matmul carries its flags).
//!
//! A **value** of a PSUM tensor starts at the tensor's first write or at a
//! killing write — a matmul with the `start` flag, or a memset, copy, act,
//! engine or dma that writes the whole tensor without reading it — that
//! follows a read of the tensor, and it ends at its last access before the
//! next such write (its last read, or a later write nothing reads). When a
//! value takes a bank after an earlier value, its first write waits for that
//! value's end: a **reuse edge**, whose **slack** is the number of
//! instructions strictly between the two. An edge is **avoidable** when
//! another aligned block of the value's size holds no value at any
//! instruction from the earlier value's end to this value's end.
//!
//! [`analyze`] reads the program and nothing else: the allocator, the
//! rotation pass (`rebank`) and the reports all see the same numbers.

use crate::arch::{self, bank_alignment, Arch};
use crate::entity::IdMap;
use crate::ir::{InstId, InstKind, Mem, Module, TensorId};
use serde::Serialize;

/// One value of a PSUM tensor: its instructions are positions in program order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value {
    /// The tensor.
    pub tensor: TensorId,
    /// First bank of the tensor's block.
    pub bank: u32,
    /// Banks of the block (`aligned_bank_num`, SPEC §1).
    pub banks: u32,
    /// Position of its first write.
    pub first: u32,
    /// Position of its last access (its last read, or a later dead write).
    pub end: u32,
}

/// A reuse edge: value `to` takes a bank after value `from`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    /// The earlier value (index into [`Reuse::values`]).
    pub from: usize,
    /// The later value.
    pub to: usize,
    /// The lowest bank the two share.
    pub bank: u32,
    /// Instructions strictly between `from`'s end and `to`'s first write.
    pub slack: u32,
    /// Another block of `to`'s size is free over `from.end ..= to.end`.
    pub avoidable: bool,
}

/// The values and reuse edges of a compiled program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reuse {
    /// Every value, in order of first write (ties: tensor order).
    pub values: Vec<Value>,
    /// Every reuse edge, in order of the later value, then bank.
    pub edges: Vec<Edge>,
    /// The instruction at each position (program order).
    pub order: Vec<InstId>,
}

/// The three numbers of the `reuse` summary line and the `psum_reuse` report key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ReuseSummary {
    /// Reuse edges.
    pub edges: usize,
    /// Avoidable reuse edges.
    pub avoidable: usize,
    /// The least slack of an edge (`null` without edges).
    pub least_slack: Option<u32>,
}

impl Reuse {
    /// Counts of edges and avoidable edges, and the least slack.
    pub fn summary(&self) -> ReuseSummary {
        ReuseSummary {
            edges: self.edges.len(),
            avoidable: self.edges.iter().filter(|e| e.avoidable).count(),
            least_slack: self.edges.iter().map(|e| e.slack).min(),
        }
    }
}

impl std::fmt::Display for ReuseSummary {
    /// `N edges (M avoidable), least slack S` — or `no reuse edges`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.least_slack {
            None => f.write_str("no reuse edges"),
            Some(s) => write!(
                f,
                "{} edge{} ({} avoidable), least slack {s}",
                self.edges,
                if self.edges == 1 { "" } else { "s" },
                self.avoidable
            ),
        }
    }
}

/// A tensor's events as the scan meets them.
#[derive(Clone, Copy)]
struct Open {
    first: u32,
    end: u32,
    read: bool,
}

/// The values and reuse edges of `m`, a loop-free program whose PSUM
/// tensors carry banks (unplaced tensors have no values), with `num_banks`
/// banks to choose among. An unknown arch counts every tensor's banks as
/// `ceil(bytes / 2048)`.
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
/// let compiled = psum::pipeline::compile(&input, &Default::default())?;
/// let summary = psum::reuse::analyze(&compiled.module, 8).summary();
/// // `b` reuses `a`'s bank 0 while seven others were free: one avoidable edge.
/// assert_eq!((summary.edges, summary.avoidable, summary.least_slack), (1, 1, Some(0)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn analyze(m: &Module, num_banks: u32) -> Reuse {
    let arch = arch::lookup(&m.arch).ok();
    let order = m.insts_in_order();
    let mut open: IdMap<TensorId, Option<Open>> = IdMap::with_len(m.tensors.len(), None);
    let mut values = Vec::new();
    let close = |t: TensorId, o: Open, values: &mut Vec<Value>| {
        let tensor = m.tensor(t);
        if let Some(bank) = tensor.bank {
            values.push(Value {
                tensor: t,
                bank,
                banks: block_banks(arch.as_ref(), tensor.bytes),
                first: o.first,
                end: o.end,
            });
        }
    };
    let mut reads: Vec<TensorId> = Vec::new();
    for (pos, &id) in order.iter().enumerate() {
        let pos = pos as u32;
        let kind = &m.inst(id).kind;
        reads.clear();
        kind.for_each_src(|a| {
            if m.tensor(a.tensor).mem == Mem::Psum && !reads.contains(&a.tensor) {
                reads.push(a.tensor);
            }
        });
        for &t in &reads {
            if let Some(o) = open[t].as_mut() {
                o.end = pos;
                o.read = true;
            }
        }
        let dst = kind.dst();
        let t = dst.tensor;
        if m.tensor(t).mem != Mem::Psum {
            continue;
        }
        let kills = match kind {
            InstKind::Matmul(mm) => matches!(mm.flags, crate::ir::Flags::Set(f) if f.start),
            _ => dst.is_whole(m.tensor(t)) && !reads.contains(&t),
        };
        match open[t] {
            Some(o) if kills && o.read => {
                close(t, o, &mut values);
                open[t] = Some(Open {
                    first: pos,
                    end: pos,
                    read: false,
                });
            }
            Some(ref mut o) => o.end = pos,
            None => {
                open[t] = Some(Open {
                    first: pos,
                    end: pos,
                    read: false,
                })
            }
        }
    }
    for (t, o) in open.iter() {
        if let Some(o) = *o {
            close(t, o, &mut values);
        }
    }
    values.sort_by_key(|v| (v.first, v.tensor));
    let edges = edges_of(&values, num_banks);
    Reuse {
        values,
        edges,
        order,
    }
}

/// Banks of a tensor of `bytes` bytes per partition (`aligned_bank_num`).
fn block_banks(arch: Option<&Arch>, bytes: u32) -> u32 {
    match arch {
        Some(a) => a.aligned_bank_num(a.bank_num(u64::from(bytes))),
        None => bytes.div_ceil(arch::PSUM_BANK_SIZE),
    }
}

/// The spans of the values in one bank, sorted by start, with the running
/// maximum of their ends, to ask whether any span meets a window.
#[derive(Default)]
struct Lane {
    starts: Vec<u32>,
    max_end: Vec<u32>,
}

impl Lane {
    /// Whether some span meets the closed window `[a, b]`.
    fn busy(&self, a: u32, b: u32) -> bool {
        let n = self.starts.partition_point(|&s| s <= b);
        n > 0 && self.max_end[n - 1] >= a
    }
}

/// The reuse edges of `values` (sorted by first write) on `num_banks` banks.
fn edges_of(values: &[Value], num_banks: u32) -> Vec<Edge> {
    let lanes_n = values
        .iter()
        .map(|v| v.bank + v.banks)
        .max()
        .unwrap_or(0)
        .max(num_banks) as usize;
    let mut lanes: Vec<Lane> = (0..lanes_n).map(|_| Lane::default()).collect();
    for v in values {
        for b in v.bank..v.bank + v.banks {
            let lane = &mut lanes[b as usize];
            let max = lane.max_end.last().map_or(v.end, |&e| e.max(v.end));
            lane.starts.push(v.first);
            lane.max_end.push(max);
        }
    }
    let mut last: Vec<Option<usize>> = vec![None; lanes_n];
    let mut edges = Vec::new();
    for (to, v) in values.iter().enumerate() {
        let mut seen: Vec<usize> = Vec::new();
        for b in v.bank..v.bank + v.banks {
            let Some(from) = last[b as usize] else {
                continue;
            };
            if seen.contains(&from) {
                continue;
            }
            seen.push(from);
            let u = &values[from];
            let (a, z) = (u.end, v.end.max(u.end));
            let align = bank_alignment(v.banks).max(1);
            let avoidable = (0..num_banks)
                .step_by(align as usize)
                .filter(|&base| base != v.bank && base + v.banks <= num_banks)
                .any(|base| (base..base + v.banks).all(|c| !lanes[c as usize].busy(a, z)));
            edges.push(Edge {
                from,
                to,
                bank: b,
                slack: v.first.saturating_sub(u.end + 1),
                avoidable,
            });
        }
        for b in v.bank..v.bank + v.banks {
            last[b as usize] = Some(to);
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reuse(src: &str, banks: u32) -> Reuse {
        analyze(&crate::text::parse(src).unwrap().module, banks)
    }

    const HEAD: &str = "arch trn1\npsum a [128, 2048] bank=0\npsum b [128, 2048] bank=B\n\
        sbuf w [128, 256] bf16\nsbuf x [128, 1024] bf16\nsbuf y [128, 2048]\n";

    #[test]
    fn two_tensors_in_one_bank_make_one_edge() {
        let src = format!(
            "{}block main {{\n  matmul a <- w, x flags=start|stop\n  act y <- a\n  \
             act y <- y\n  matmul b <- w, x flags=start|stop\n  act y <- b\n}}\n",
            HEAD.replace('B', "0")
        );
        let r = reuse(&src, 8);
        assert_eq!(r.values.len(), 2);
        assert_eq!((r.values[0].first, r.values[0].end), (0, 1));
        assert_eq!((r.values[1].first, r.values[1].end), (3, 4));
        assert_eq!(
            r.edges,
            [Edge {
                from: 0,
                to: 1,
                bank: 0,
                slack: 1,
                avoidable: true
            }]
        );
        // On one bank there is nowhere else to go.
        assert!(!reuse(&src, 1).edges[0].avoidable);
        // In another bank there is no edge.
        let other = reuse(
            &src.replace("b [128, 2048] bank=0", "b [128, 2048] bank=1"),
            8,
        );
        assert_eq!(other.summary().edges, 0);
        assert_eq!(other.summary().least_slack, None);
    }

    #[test]
    fn a_tensor_rewritten_after_a_read_has_two_values() {
        let src = format!(
            "{}block main {{\n  matmul a <- w, x flags=start|stop\n  act y <- a\n  \
             matmul a <- w, x flags=start\n  matmul a <- w, x flags=stop\n  act y <- a\n  \
             memset b = 0\n  act y <- b\n}}\n",
            HEAD.replace('B', "1")
        );
        let r = reuse(&src, 2);
        let spans: Vec<_> = r
            .values
            .iter()
            .map(|v| (v.tensor.0, v.first, v.end))
            .collect();
        assert_eq!(spans, [(0, 0, 1), (0, 2, 4), (1, 5, 6)]);
        // a's second value waits for its first; b holds bank 1 from 5 on,
        // so over 1..=4 bank 1 is free: the edge is avoidable.
        assert_eq!(r.edges.len(), 1);
        assert_eq!((r.edges[0].slack, r.edges[0].avoidable), (0, true));
        // With b written at the start, bank 1 is busy throughout.
        let busy = src.replace("matmul a <- w, x flags=start|stop\n  act y <- a\n  matmul a <- w, x flags=start\n",
            "memset b = 0\n  matmul a <- w, x flags=start|stop\n  act y <- a\n  matmul a <- w, x flags=start\n");
        let r = reuse(&busy, 2);
        assert_eq!(
            r.summary(),
            ReuseSummary {
                edges: 1,
                avoidable: 0,
                least_slack: Some(0)
            }
        );
    }

    #[test]
    fn an_accumulating_update_is_not_a_new_value() {
        let src = format!(
            "{}block main {{\n  memset a = 0\n  act y <- a\n  act a <- a, y\n  act y <- a\n}}\n",
            HEAD.replace('B', "1")
        );
        let r = reuse(&src, 8);
        assert_eq!(r.values.len(), 1);
        assert_eq!((r.values[0].first, r.values[0].end), (0, 3));
        assert!(r.edges.is_empty());
    }
}
