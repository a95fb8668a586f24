//! psum's own allocator, `--allocator mincost` (SPEC §3.11, not the
//! reference's): the least spill cost it finds under split spilling
//! (SPEC §3.11: §3.8's save, and a reload only where the value was out of
//! PSUM, serving the groups after it) and the costs of SPEC §3.5.
//!
//! [`allocate`] is the phase list. From the shared start
//! ([`super::setup::Start`]), a program whose peak demand is within the
//! banks is first swept with nothing spillable ([`place_as_is`]); else each
//! round works out every node's pieces
//! ([`super::split_cost::Pieces`]), finds the round's best placement
//! ([`search::best_placement`]: the sweep of [`sweep`], with its Kempe
//! swaps, improved by local search and restarts and by the flow of
//! [`reflow`]) and puts its spill code in in one round
//! ([`super::spill::insert_spill_code`]), into a module grown for it on the
//! other thread while the sweep ran; the banks of the sweep carry over to
//! the program with it. When the program's own live ranges disagree with
//! the sweep's pieces (a value a loop carries across its save), the next
//! round sweeps the program as it now is, until it fits
//! ([`super::blocks::fits`]). A piece that no spilling can place returns
//! the program, without its spill code, to [`super::allocate_owned`],
//! which hands it to briggs ([`Fallback::Briggs`]).

mod reflow;
mod search;
mod sweep;

pub(super) use search::best_placement;

use super::blocks::fits;
use super::liveness::{Liveness, Node};
use super::setup::{Finish, Start};
use super::spill;
use super::split_cost::{cost_of, spill_plans, Pieces, Placement};
use super::support::threads::{self, PARALLEL_MIN_NODES};
use super::{AllocError, AllocOptions, AllocOutcome, NodeId};
use crate::entity::{IdMap, IdVec};
use crate::ir::{InstKind, Module, Stmt, TensorId};
use sweep::{Let, Problem};

/// Why [`allocate`] returns without an allocation.
pub(super) enum Fallback {
    /// The program cannot be allocated.
    Error(AllocError),
    /// A piece that no spilling can place: the program for briggs instead.
    Briggs {
        /// The split program, without spill code.
        work: Box<Module>,
        /// The log line that says so, to follow briggs' opening two.
        why: String,
        /// Warnings of the first iteration.
        warnings: Vec<String>,
    },
}

impl From<AllocError> for Fallback {
    fn from(e: AllocError) -> Self {
        Fallback::Error(e)
    }
}

/// Allocates the PSUM tensors of a validated module with the mincost
/// allocator (SPEC §3.11), taking it over.
pub(super) fn allocate(m: Module, opts: &AllocOptions) -> Result<AllocOutcome, Fallback> {
    let Start {
        analysis: mut a,
        peak,
        demand,
        warnings,
        mut log,
        parallel,
    } = Start::of(m, opts)?;
    let num_banks = a.num_banks;
    let mut pinned = IdMap::with_len(a.module.tensors.len(), false);
    let mut namer = None;
    let before = (a.module.tensors.len(), a.module.insts.len());
    let mut spilled: Vec<TensorId> = Vec::new();
    let mut spill_cost = 0u64;
    let placed_all = 'rounds: {
        if peak <= u64::from(num_banks) {
            if let Some(bank) = place_as_is(&a.live.nodes, num_banks) {
                break 'rounds Some((bank, 1));
            }
        }
        for iteration in 1..=opts.max_iterations {
            let (lin, live) = (&a.lin, &a.live);
            let pieces = Pieces::of(lin, live, &pinned, opts.spill_latency, parallel);
            let place = || best_placement(&live.nodes, &pieces, num_banks, lin.len());
            // A large program over the banks spills: while the sweep
            // chooses what, the other thread grows the module for the
            // spill code and makes the namer, which would otherwise each
            // take their turn after it.
            let placed = if parallel && peak > u64::from(num_banks) {
                let module = &mut a.module;
                let room = || {
                    spill::make_room(module, pieces.copies_at_most());
                    namer.get_or_insert_with(|| spill::Namer::new(module));
                };
                threads::join(true, room, place).1
            } else {
                place()
            };
            let placed = match placed {
                Ok(placed) => placed,
                Err(stuck) => {
                    let name = &a.module.tensor(live.nodes[stuck.node].tensor).name;
                    let why = format!(
                        "mincost cannot place {name} at point {}: briggs allocates the program",
                        stuck.point
                    );
                    let work = Box::new(without_spill_code(a.module, before));
                    return Err(Fallback::Briggs {
                        work,
                        why,
                        warnings,
                    });
                }
            };
            if placed.spilled.is_empty() {
                let bank: Vec<Option<u32>> =
                    placed.bank.values().map(|&b| Some(u32::from(b))).collect();
                break 'rounds Some((bank, iteration));
            }
            let cycles = cost_of(&pieces, &placed);
            log.v(format!("spilling from PSUM cost about {cycles} cycles"));
            spill_cost = spill_cost.saturating_add(cycles);
            spilled.extend(placed.spilled.iter().map(|v| live.nodes[*v].tensor));
            let big = parallel && placed.spilled.len() >= PARALLEL_MIN_NODES;
            let plans = [spill_plans(live, &pieces, &placed)];
            let namer = namer.get_or_insert_with(|| spill::Namer::new(&a.module));
            let shift = spill::insert_spill_code(&mut a.module, lin, &plans, namer, big);
            pinned.resize(a.module.tensors.len(), false);
            for &v in &placed.spilled {
                pinned[live.nodes[v].tensor] = true;
            }
            for r in &shift.reloads {
                pinned[r.tensor] = true;
            }
            let by_tensor = banks_by_tensor(a.module.tensors.len(), live, &pieces, &placed, &shift);
            a.after_spill(&shift, parallel)?;
            let bank: Vec<Option<u32>> = (a.live.nodes.values())
                .map(|n| by_tensor[n.tensor])
                .collect();
            if fits(a.live.nodes.as_slice(), &bank, num_banks) {
                break 'rounds Some((bank, iteration + 1));
            }
        }
        None
    };
    let Some((banks, iterations)) = placed_all else {
        return Err(AllocError::NotConverged.into());
    };
    let finish = Finish {
        work: a.module,
        arch: &a.arch,
        num_banks,
        live: &a.live,
        points: a.lin.len(),
        banks: &banks,
        spilled: &spilled,
        spill_cost,
        iterations,
        best_heuristic: 0,
        demand,
        log,
        warnings,
        parallel,
    };
    Ok(finish.finish())
}

/// The banks of a sweep that spills nothing, when one places every node
/// of `nodes` (it is the plain sweep of [`best_placement`] then, found
/// without the spill costs); `None` when aligned blocks run out.
fn place_as_is(nodes: &IdVec<NodeId, Node>, num_banks: u32) -> Option<Vec<Option<u32>>> {
    let pieces = Pieces::unspillable(nodes.len());
    let problem = Problem::new(nodes, &pieces, num_banks);
    let never = IdMap::with_len(nodes.len(), Let::Never);
    let placed = problem.sweep(&never, &IdMap::default()).ok()?;
    Some(placed.bank.values().map(|&b| Some(u32::from(b))).collect())
}

/// The base banks of the program after spilling `placed.spilled` in one
/// round, by tensor: each node keeps the sweep's bank (a spilled one up to
/// where it goes) and each reload temporary takes the bank of its first
/// group's reload.
fn banks_by_tensor(
    tensors: usize,
    live: &Liveness,
    pieces: &Pieces,
    placed: &Placement,
    shift: &spill::SpillShift,
) -> IdMap<TensorId, Option<u32>> {
    let mut by = IdMap::with_len(tensors, None);
    for (n, &b) in live.nodes.values().zip(placed.bank.values()) {
        by[n.tensor] = Some(u32::from(b));
    }
    let groups = (placed.spilled.iter()).flat_map(|&v| pieces.groups_of(v));
    for (g, r) in groups.filter(|&g| placed.reload[g]).zip(&shift.reloads) {
        by[r.tensor] = Some(u32::from(placed.group_bank[g]));
    }
    by
}

/// `m` as it was before any spill code: the copies from instruction
/// `before.1` on and the tensors from `before.0` on removed, and the reads
/// of each reload temporary given back to the tensor it reloads.
fn without_spill_code(mut m: Module, (tensors, insts): (usize, usize)) -> Module {
    // What each new tensor holds: a save copies a tensor of the program,
    // a reload copies a save (created after it).
    let mut holds: IdMap<TensorId, TensorId> = (0..m.tensors.len()).map(TensorId::new).collect();
    for inst in &m.insts.as_slice()[insts..] {
        if let InstKind::Copy { dst, src } = &inst.kind {
            holds[dst.tensor] = holds[src.tensor];
        }
    }
    for inst in m.insts.values_mut().take(insts) {
        inst.kind.for_each_src_mut(|a| a.tensor = holds[a.tensor]);
    }
    let keep = |s: &Stmt| !matches!(s, Stmt::Inst(i) if i.index() >= insts);
    for b in &mut m.blocks {
        b.body.retain(keep);
    }
    for l in &mut m.loops {
        l.body.retain(keep);
    }
    m.insts.truncate(insts);
    m.tensors.truncate(tensors);
    m
}
