//! The workload generators of SPEC §7: every program validates and round-trips
//! through the text format, has the expected structure (PSUM tensors, matmul
//! counts, loop trips, peak live banks), and the shipped `examples/gen_*.psum`
//! are exactly what the generators print.
//!
//! Set `PSUM_REGEN_EXAMPLES=1` to rewrite the example files.

use psum::arch;
use psum::gen::workloads::*;
use psum::ir::{InstId, InstKind, MatmulKind, Mem, Module, TensorId, Visit};

/// Generates, validates and round-trips `w`.
fn gen(w: &Workload) -> Module {
    let m = generate(w).unwrap_or_else(|e| panic!("{}: {e}", w.command_line()));
    if let Err(e) = psum::validate::validate(&m) {
        panic!(
            "{}: invalid: {e}\n{}",
            w.command_line(),
            psum::text::print(&m)
        );
    }
    let text = psum::text::print(&m);
    let back = psum::text::parse(&text)
        .expect("printed program parses")
        .module;
    assert!(back.same_program(&m), "{}: round trip", w.command_line());
    // Each instruction's PSUM operands fit PSUM together, so spilling can
    // always make room.
    let a = arch::lookup(&m.arch).unwrap();
    for inst in &m.insts {
        let mut ts: Vec<TensorId> = inst.kind.srcs().map(|s| s.tensor).collect();
        ts.push(inst.kind.dst().tensor);
        ts.sort();
        ts.dedup();
        let banks: u32 = ts
            .iter()
            .map(|&t| m.tensor(t))
            .filter(|t| t.mem == Mem::Psum)
            .map(|t| a.aligned_bank_num(a.bank_num(t.bytes.into())))
            .sum();
        assert!(
            banks <= a.num_banks(),
            "{}: {banks} banks in one instruction",
            w.command_line()
        );
    }
    m
}

fn args(kind: WorkloadKind, a: &str) -> Workload {
    let v: Vec<&str> = a.split_whitespace().collect();
    Workload::from_args(kind, &v).unwrap()
}

fn psum_names(m: &Module) -> Vec<&str> {
    m.tensors
        .values()
        .filter(|t| t.mem == Mem::Psum)
        .map(|t| t.name.as_str())
        .collect()
}

/// Executions of each instruction: the product of the enclosing trip counts.
fn executions(m: &Module) -> Vec<(InstId, u64)> {
    let mut out = Vec::new();
    m.walk(|v, nest| {
        if let Visit::Inst(i) = v {
            let n = nest.iter().map(|&l| m.loop_(l).trip_count()).product();
            out.push((i, n));
        }
    });
    out
}

/// Dynamic matmul-family count of `kind`.
fn matmuls(m: &Module, kind: MatmulKind) -> u64 {
    executions(m)
        .iter()
        .filter(|(i, _)| {
            m.inst(*i)
                .kind
                .as_matmul()
                .is_some_and(|mm| mm.kind == kind)
        })
        .map(|(_, n)| n)
        .sum()
}

/// Trip counts of the loops in program order.
fn trips(m: &Module) -> Vec<u64> {
    let mut out = Vec::new();
    m.walk(|v, _| {
        if let Visit::Enter(l) = v {
            out.push(m.loop_(l).trip_count());
        }
    });
    out
}

/// SPEC §3.1/§3.3 live intervals of the PSUM tensors, a direct reading of
/// the spec independent of the allocator.
struct Liveness {
    /// `[start, end]` program points per PSUM tensor (None: never accessed).
    intervals: Vec<(TensorId, Option<(usize, usize)>)>,
    points: usize,
    banks: Vec<u32>,
}

impl Liveness {
    fn new(m: &Module) -> Liveness {
        let a = arch::lookup(&m.arch).unwrap();
        let mut point = 0;
        let mut header = vec![0; m.loops.len()];
        let mut end = vec![0; m.loops.len()];
        // Per tensor: (point, nest) of each write and read.
        let mut writes = vec![Vec::new(); m.tensors.len()];
        let mut reads = vec![Vec::new(); m.tensors.len()];
        m.walk(|v, nest| {
            match v {
                Visit::BlockStart(_) => return,
                Visit::Enter(l) => header[l.index()] = point,
                Visit::Exit(l) => end[l.index()] = point,
                Visit::Inst(i) => {
                    let k = &m.inst(i).kind;
                    for s in k.srcs() {
                        reads[s.tensor.index()].push((point, nest.to_vec()));
                    }
                    writes[k.dst().tensor.index()].push((point, nest.to_vec()));
                }
            }
            point += 1;
        });
        let mut intervals = Vec::new();
        let mut banks = Vec::new();
        for (ti, t) in m.tensors.values().enumerate() {
            if t.mem != Mem::Psum {
                continue;
            }
            banks.push(a.aligned_bank_num(a.bank_num(t.bytes.into())));
            let (w, r) = (&writes[ti], &reads[ti]);
            let (Some((def, ld)), Some((use_, lu))) = (w.first(), r.last()) else {
                intervals.push((TensorId::new(ti), None));
                continue;
            };
            let c = ld.iter().zip(lu).take_while(|(x, y)| x == y).count();
            let mut start = if ld.len() > c {
                header[ld[c].index()]
            } else {
                *def
            };
            let mut stop = if lu.len() > c {
                end[lu[c].index()]
            } else {
                *use_
            };
            for (_, nest) in w {
                for l in nest {
                    let (h, e) = (header[l.index()], end[l.index()]);
                    let first_w = w.iter().map(|x| x.0).find(|&p| p > h && p < e);
                    let first_r = r.iter().map(|x| x.0).find(|&p| p > h && p < e);
                    if let (Some(fw), Some(fr)) = (first_w, first_r) {
                        if fr <= fw {
                            start = start.min(h);
                            stop = stop.max(e);
                        }
                    }
                }
            }
            intervals.push((TensorId::new(ti), Some((start, stop))));
        }
        Liveness {
            intervals,
            points: point,
            banks,
        }
    }

    /// Live banks at each program point.
    fn pressure(&self) -> Vec<u32> {
        let mut live = vec![0; self.points];
        for ((_, iv), &b) in self.intervals.iter().zip(&self.banks) {
            if let Some((s, e)) = iv {
                for p in &mut live[*s..=*e] {
                    *p += b;
                }
            }
        }
        live
    }

    fn peak(&self) -> u32 {
        self.pressure().into_iter().max().unwrap_or(0)
    }
}

#[test]
fn gemm_tiles_the_neuron_way() {
    let m = gen(&args(WorkloadKind::Gemm, "256 1024 512"));
    assert_eq!(m, gen(&Workload::defaults(WorkloadKind::Gemm)));
    assert_eq!(psum_names(&m), ["acc"]);
    assert_eq!(trips(&m), [2, 2, 4]);
    assert_eq!(matmuls(&m, MatmulKind::Plain), 16);
    assert_eq!(Liveness::new(&m).peak(), 1);
    let big = gen(&args(WorkloadKind::Gemm, "512 2048 1024"));
    assert_eq!(trips(&big), [4, 4, 8]);
    assert_eq!(matmuls(&big, MatmulKind::Plain), 128);
    // gen1: 64-row M tiles (PE columns and PSUM partitions).
    let g1 = gen(&args(WorkloadKind::Gemm, "128 512 256 --arch inf1"));
    assert_eq!(trips(&g1), [2, 1, 2]);
    assert_eq!(m.tensors[TensorId(0)].partitions, 128);
    assert_eq!(g1.tensors[TensorId(0)].partitions, 64);
}

#[test]
fn attention_transposes_every_score_block() {
    let m = gen(&Workload::defaults(WorkloadKind::Attention));
    assert_eq!(psum_names(&m), ["s", "pT", "o"]);
    assert_eq!(trips(&m), [4, 2, 4, 4]);
    // Per (q tile, kv tile): one QKᵀ and four PV matmuls, four transposes.
    assert_eq!(matmuls(&m, MatmulKind::Plain), 4 * 2 * 5);
    assert_eq!(matmuls(&m, MatmulKind::Transpose), 4 * 2 * 4);
    assert_eq!(Liveness::new(&m).peak(), 2);
    let g1 = gen(&args(
        WorkloadKind::Attention,
        "--seq-q 128 --seq-k 512 --d 64 --arch inf1",
    ));
    assert_eq!(trips(&g1), [2, 1, 8, 8]);
    gen(&args(
        WorkloadKind::Attention,
        "--seq-q 256 --seq-k 1024 --d 96 --arch core_v4",
    ));
}

#[test]
fn attention_bwd_peaks_above_eight_banks_and_one_spill_relieves_it() {
    let m = gen(&Workload::defaults(WorkloadKind::AttentionBwd));
    let tiles = |suffix: &str| {
        let mut v: Vec<String> = (0..3)
            .flat_map(|g| {
                [
                    format!("qk{g}{suffix}"),
                    format!("dp{g}{suffix}"),
                    format!("dsT{g}{suffix}"),
                ]
            })
            .collect();
        v.push(format!("dq{suffix}"));
        v
    };
    let mut names: Vec<String> = ["dv0", "dv1", "dv2", "dk0", "dk1", "dk2"]
        .map(String::from)
        .to_vec();
    names.extend(tiles(""));
    names.extend(tiles("_last"));
    assert_eq!(psum_names(&m), names);
    // The q loop runs all tiles but the last, which is peeled.
    let mut expect = vec![3];
    expect.extend([4; 12]);
    assert_eq!(trips(&m), expect);
    // Per q tile and kv tile: QKᵀ, dP, dVᵀ, dKᵀ and four dQ matmuls; four transposes.
    assert_eq!(matmuls(&m, MatmulKind::Plain), 4 * 3 * 8);
    assert_eq!(matmuls(&m, MatmulKind::Transpose), 4 * 3 * 4);
    let live = Liveness::new(&m);
    let pressure = live.pressure();
    assert_eq!(live.peak(), 9);
    // The peak: the six accumulators, dq, the prefetched qk2 and dsT1, over
    // the four points of the dsT1 transposes (loop header, matmul.t, loop
    // end, act), inside the q loop.
    let interval = |name: &str| {
        let t = m.tensor_by_name(name).unwrap();
        live.intervals
            .iter()
            .find(|(x, _)| *x == t)
            .unwrap()
            .1
            .unwrap()
    };
    let (def, use_) = interval("qk2");
    let peak_points: Vec<usize> = (0..pressure.len()).filter(|&p| pressure[p] == 9).collect();
    assert_eq!(peak_points.len(), 4);
    assert!(peak_points.iter().all(|&p| def < p && p < use_));
    // Spilling qk2 (live only at its write and its read) brings the peak to 8.
    let relieved = (0..pressure.len())
        .map(|p| pressure[p] - u32::from(def < p && p < use_))
        .max();
    assert_eq!(relieved, Some(8));
    // Each accumulator is read right after its last write.
    for acc in ["dv0", "dk2"] {
        let t = m.tensor_by_name(acc).unwrap();
        let order = m.insts_in_order();
        let last_write = order
            .iter()
            .rposition(|&i| m.inst(i).kind.dst().tensor == t)
            .unwrap();
        let read = &m.inst(order[last_write + 1]).kind;
        assert!(read.srcs().any(|s| s.tensor == t), "{acc}");
    }

    let one = gen(&args(
        WorkloadKind::AttentionBwd,
        "--seq-q 128 --seq-k 512 --d 64",
    ));
    assert_eq!(
        psum_names(&one),
        ["dv0", "dk0", "qk0_last", "dp0_last", "dsT0_last", "dq_last"]
    );
    assert_eq!(trips(&one), [4, 4]);
    assert_eq!(Liveness::new(&one).peak(), 1);
    let g1 = gen(&args(
        WorkloadKind::AttentionBwd,
        "--seq-q 256 --seq-k 512 --d 64 --arch inf1",
    ));
    assert_eq!(trips(&g1), [3, 8, 8, 8, 8]);
    assert_eq!(Liveness::new(&g1).peak(), 3);
    let g4 = gen(&args(WorkloadKind::AttentionBwd, "--arch core_v4"));
    assert_eq!(Liveness::new(&g4).peak(), 9);
}

#[test]
fn qkv_interleaves_its_groups() {
    let m = gen(&Workload::defaults(WorkloadKind::Qkv));
    assert_eq!(
        psum_names(&m),
        ["qkv0", "qkv1", "qkv2", "qkv3", "qkv4", "qkv5"]
    );
    assert_eq!(trips(&m), [2, 4]);
    assert_eq!(matmuls(&m, MatmulKind::Plain), 2 * 4 * 6);
    assert_eq!(Liveness::new(&m).peak(), 6);
    // The chain loop body alternates the groups matmul by matmul.
    let order: Vec<TensorId> = m
        .insts_in_order()
        .iter()
        .filter_map(|&i| m.inst(i).kind.as_matmul().map(|mm| mm.dst.tensor))
        .collect();
    assert_eq!(order, (0..6).map(TensorId::new).collect::<Vec<_>>());
    let eight = gen(&args(
        WorkloadKind::Qkv,
        "--tokens 128 --hidden 256 --groups 8",
    ));
    assert_eq!(Liveness::new(&eight).peak(), 8);
    gen(&args(
        WorkloadKind::Qkv,
        "--tokens 128 --hidden 256 --groups 4 --arch inf1",
    ));
}

#[test]
fn conv1d_rotates_its_accumulators() {
    let m = gen(&Workload::defaults(WorkloadKind::Conv1d));
    assert_eq!(psum_names(&m), ["acc0", "acc1", "acc2", "acc3"]);
    assert_eq!(trips(&m), [1, 2, 2, 3]);
    // 8 output tiles, each a chain of 2 channel chunks x 3 taps.
    assert_eq!(matmuls(&m, MatmulKind::Plain), 8 * 2 * 3);
    assert_eq!(Liveness::new(&m).peak(), 4);
    let wide = gen(&args(
        WorkloadKind::Conv1d,
        "--c-in 128 --c-out 256 --taps 5 --length 4096 --accumulators 8",
    ));
    assert_eq!(trips(&wide), [2, 1, 1, 5]);
    assert_eq!(matmuls(&wide, MatmulKind::Plain), 2 * 8 * 5);
    assert_eq!(Liveness::new(&wide).peak(), 8);
    gen(&args(
        WorkloadKind::Conv1d,
        "--c-out 128 --length 1024 --accumulators 2 --arch inf1",
    ));
}

#[test]
fn column_tiled_places_tiles_side_by_side() {
    let m = gen(&Workload::defaults(WorkloadKind::ColumnTiled));
    let a = arch::lookup("trn1").unwrap();
    let mms: Vec<_> = m
        .insts
        .values()
        .filter_map(|i| i.kind.as_matmul())
        .collect();
    assert_eq!(mms.len(), 2);
    for (i, mm) in mms.iter().enumerate() {
        assert_eq!(mm.pos, (0, 64 * i as u32));
        let rows = mm.stationary.part_extent() as u32;
        let cols = mm.stationary.byte_extent() as u32 / 2;
        assert!(a.is_column_tile(rows, cols));
        let r = mm.dst.region(|_| 0);
        assert_eq!((r.p0, r.p1), (64 * i as i64, 64 * (i as i64 + 1)));
    }
    assert_eq!(trips(&m), [2, 4]);
    assert_eq!(matmuls(&m, MatmulKind::Plain), 16);
    let four = gen(&args(
        WorkloadKind::ColumnTiled,
        "--cols 32 --tiles 4 --n 512 --k 128",
    ));
    let pos: Vec<_> = four
        .insts
        .values()
        .filter_map(|i| i.kind.as_matmul())
        .map(|m| m.pos)
        .collect();
    assert_eq!(pos, [(0, 0), (0, 32), (0, 64), (0, 96)]);
    gen(&args(
        WorkloadKind::ColumnTiled,
        "--cols 32 --tiles 2 --arch inf1",
    ));
}

/// Per PSUM tensor: (writes, reads) counted over the program.
fn accesses(m: &Module) -> Vec<(usize, usize)> {
    let mut out = vec![(0, 0); m.tensors.len()];
    for &i in &m.insts_in_order() {
        let k = &m.inst(i).kind;
        out[k.dst().tensor.index()].0 += 1;
        for s in k.srcs() {
            out[s.tensor.index()].1 += 1;
        }
    }
    out
}

#[test]
fn random_hits_its_pressure() {
    let w = args(
        WorkloadKind::Random,
        "--tensors 2000 --pressure 12 --seed 7",
    );
    let m = gen(&w);
    assert_eq!(psum_names(&m).len(), 2000);
    assert_eq!(psum_names(&m)[1999], "p1999");
    for (t, (w, r)) in m.tensors.values().zip(accesses(&m)) {
        if t.mem == Mem::Psum {
            assert!(
                (1..=2).contains(&w) && (1..=3).contains(&r),
                "{}: {w} writes, {r} reads",
                t.name
            );
            assert_eq!(t.bytes, 2048);
        }
    }
    let live = Liveness::new(&m);
    let pressure = live.pressure();
    let avg = pressure.iter().map(|&p| f64::from(p)).sum::<f64>() / pressure.len() as f64;
    assert!((11.5..=12.0).contains(&avg), "average live banks {avg}");
    assert_eq!(live.peak(), 12);
    let frac = gen(&args(
        WorkloadKind::Random,
        "--tensors 2000 --pressure 9.5 --multi-bank",
    ));
    let pressure = Liveness::new(&frac).pressure();
    let avg = pressure.iter().map(|&p| f64::from(p)).sum::<f64>() / pressure.len() as f64;
    assert!((9.0..=10.0).contains(&avg), "average live banks {avg}");
    // Determinism, and the seed matters.
    let again = psum::text::print(&generate(&w).unwrap());
    assert_eq!(psum::text::print(&m), again);
    let other = generate(&args(
        WorkloadKind::Random,
        "--tensors 2000 --pressure 12 --seed 8",
    ))
    .unwrap();
    assert_ne!(psum::text::print(&other), again);
}

#[test]
fn random_multi_bank_and_loops() {
    let m = gen(&args(
        WorkloadKind::Random,
        "--tensors 300 --seed 3 --multi-bank --loops",
    ));
    let mut sizes = [0; 5];
    for t in m.tensors.values().filter(|t| t.mem == Mem::Psum) {
        sizes[(t.bytes / 2048) as usize] += 1;
    }
    assert_eq!(sizes[0], 0);
    assert!(sizes[1..].iter().all(|&n| n > 40), "{sizes:?}");
    assert!(!trips(&m).is_empty() && trips(&m).iter().all(|&t| t == 2));
    // Every matmul writes within one bank.
    for mm in m.insts.values().filter_map(|i| i.kind.as_matmul()) {
        let r = mm.dst.region(|_| 0);
        assert_eq!(r.b1 - r.b0, 2048);
        assert_eq!(r.b0 % 2048, 0);
    }
    // gen4 rounds 3-bank tensors up to 4 banks.
    let g4 = gen(&args(
        WorkloadKind::Random,
        "--tensors 100 --multi-bank --arch core_v4",
    ));
    assert!(Liveness::new(&g4).banks.iter().all(|&b| b != 3));
    gen(&args(
        WorkloadKind::Random,
        "--tensors 100 --multi-bank --pressure 5 --arch inf1",
    ));
}

#[test]
fn random_scales() {
    let w = args(WorkloadKind::Random, "--tensors 100000 --multi-bank");
    let m = generate(&w).unwrap();
    assert_eq!(m.tensors.len(), 100000 + 2 + 4 + 2 + 4);
    let psum: u32 = m
        .tensors
        .values()
        .filter(|t| t.mem == Mem::Psum)
        .map(|t| t.bytes / 2048)
        .sum();
    let mms = m
        .insts
        .values()
        .filter(|i| matches!(i.kind, InstKind::Matmul(_)))
        .count() as u32;
    assert!(
        mms >= psum && mms < psum * 3 / 2,
        "{mms} matmuls for {psum} banks"
    );
}

#[test]
fn command_line_parsing() {
    let w = args(WorkloadKind::Gemm, "512 --k=256 2048 --arch inf1");
    assert_eq!(
        w,
        Workload::Gemm(GemmParams {
            arch: "inf1".into(),
            m: 512,
            n: 2048,
            k: 256
        })
    );
    assert_eq!(
        w.command_line(),
        "psum gen gemm --m 512 --n 2048 --k 256 --arch inf1"
    );
    let r = args(
        WorkloadKind::Random,
        "--multi-bank --pressure 9.5 --seed 42 --loops=false",
    );
    assert_eq!(
        r.command_line(),
        "psum gen random --tensors 24 --pressure 9.5 --seed 42 --multi-bank --arch trn1"
    );
    assert_eq!(
        WorkloadKind::from_name("attention-bwd"),
        Ok(WorkloadKind::AttentionBwd)
    );
    for k in WorkloadKind::ALL {
        assert_eq!(WorkloadKind::from_name(k.name()), Ok(k));
        let d = Workload::defaults(k);
        let words: Vec<String> = d
            .command_line()
            .split(' ')
            .skip(3)
            .map(String::from)
            .collect();
        assert_eq!(Workload::from_args(k, &words), Ok(d));
    }
    assert_eq!(
        Workload::help(WorkloadKind::Qkv),
        "  --tokens        tokens (multiple of the M tile) (default: 256)\n\
         \x20 --hidden        hidden size H (multiple of 128) (default: 512)\n\
         \x20 --groups        512-column output groups (at most the bank count) (default: 6)\n\
         \x20 --arch          architecture codename (default: trn1)\n"
    );
}

#[test]
fn errors_name_the_problem() {
    let err = |kind, a: &str| {
        let v: Vec<&str> = a.split_whitespace().collect();
        match Workload::from_args(kind, &v) {
            Ok(w) => generate(&w).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        }
    };
    assert_eq!(
        WorkloadKind::from_name("gemv").unwrap_err().to_string(),
        "unknown workload 'gemv' (known: gemm, attention, attention-bwd, qkv, conv1d, column-tiled, random)"
    );
    assert_eq!(
        err(WorkloadKind::Qkv, "--heads 4"),
        "workload qkv has no parameter '--heads' (parameters: tokens, hidden, groups, arch)"
    );
    assert_eq!(
        err(WorkloadKind::Qkv, "--groups"),
        "parameter '--groups' needs a value"
    );
    assert_eq!(
        err(WorkloadKind::Gemm, "--m x"),
        "bad value 'x' for '--m': expected a non-negative integer"
    );
    assert_eq!(
        err(WorkloadKind::Gemm, "1 2 3 4"),
        "unexpected argument '4' for workload gemm"
    );
    assert_eq!(
        err(WorkloadKind::Gemm, "100"),
        "m = 100 must be a positive multiple of 128"
    );
    assert_eq!(
        err(WorkloadKind::Gemm, "--m 96 --arch inf1"),
        "m = 96 must be a positive multiple of 64"
    );
    assert_eq!(
        err(WorkloadKind::Qkv, "--groups 9"),
        "groups = 9 is out of range 1..=8 (every group holds a bank at once)"
    );
    assert_eq!(
        err(WorkloadKind::AttentionBwd, "--arch inf1 --d 64"),
        "seq-k = 1536 is out of range 512..=512 (the dK/dV accumulators and two more banks must fit in PSUM)"
    );
    assert_eq!(
        err(WorkloadKind::ColumnTiled, "--cols 128"),
        "cols = 128 is out of range 1..=127 (a column tile is narrower than the PE array)"
    );
    assert_eq!(
        err(WorkloadKind::Random, "--pressure -1"),
        "pressure = -1 must be a positive number of banks"
    );
    assert_eq!(
        err(WorkloadKind::Gemm, "128 512 131072"),
        "the SBUF tensors need 1312768 bytes per partition; trn1 has 196608"
    );
    assert!(err(WorkloadKind::Gemm, "--arch trn2").starts_with("unknown architecture 'trn2'"));
}

#[test]
fn shipped_examples_are_current() {
    let regen = std::env::var_os("PSUM_REGEN_EXAMPLES").is_some();
    for kind in WorkloadKind::ALL {
        let w = Workload::defaults(kind);
        let text = format!(
            "# Generated by `{}` (tests/gen_workloads.rs keeps it current).\n{}",
            w.command_line(),
            psum::text::print(&gen(&w))
        );
        let path = format!(
            "{}/examples/gen_{}.psum",
            env!("CARGO_MANIFEST_DIR"),
            kind.name().replace('-', "_")
        );
        if regen {
            std::fs::write(&path, &text).unwrap();
        }
        let shipped = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            shipped == text,
            "{path} is stale; rerun with PSUM_REGEN_EXAMPLES=1"
        );
        assert!(psum::text::parse(&shipped)
            .unwrap()
            .module
            .same_program(&gen(&w)));
    }
}
