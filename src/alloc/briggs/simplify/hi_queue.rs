//! Simplify's queue of `hi` nodes by metric (SPEC §3.6): the initial
//! entries as one sorted run, the re-keyed ones in a radix heap; an entry
//! whose key is out of date is pushed again with the current one.

use super::heuristic::Ratio;
use crate::alloc::briggs::interference::DirtyId;
use crate::alloc::support::sort::{radix_sort, RADIX_MIN};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A `hi` entry: the node's key when queued, the node, and its degree
/// then. Every key change comes with a degree change (a removal lowers
/// both the degree and the neighbor banks; the rest of a key is fixed), so
/// an entry whose degree is still the node's has its current key. Ordered
/// by key, then node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Entry {
    pub(super) key: Ratio,
    pub(super) node: u32,
    pub(super) deg: u32,
}

impl Entry {
    /// The bits of the `f64` nearest the key when its numerator and
    /// denominator are below 2^53. Both convert exactly and the quotient is
    /// correctly rounded, so `a/b ≤ c/d` gives `approx(a/b) ≤ approx(c/d)`
    /// (the bits of a non-negative `f64` order as the `f64` does): a
    /// smaller approximation means a smaller key.
    fn approx(&self) -> Option<u64> {
        const EXACT: u64 = 1 << 53;
        let Ratio { num, den } = self.key;
        (num < EXACT && den < EXACT).then(|| (num as f64 / den as f64).to_bits())
    }
}

/// The `hi` entries: the initial ones as one sorted run read through a
/// cursor, and the re-keyed ones in a [`RadixHeap`]. A pop compares the
/// two fronts once, and a push costs an append to a bucket, where a single
/// heap of up to n entries would miss the cache at every level of each
/// pop.
#[derive(Default)]
pub(super) struct HiQueue {
    /// The initial entries, ascending, consumed from `next` on.
    first: Vec<Entry>,
    next: usize,
    /// Buffers of the initial sort, kept from run to run.
    sorting: Sorting,
    /// The re-keyed entries.
    fresh: RadixHeap,
    /// The node [`COMING`] entries down the initial run after the last pop
    /// from it: likely popped soon, and a pop reads its node's slot.
    coming: Option<u32>,
}

/// How far down the initial run [`HiQueue::coming`] looks.
const COMING: usize = 8;

impl HiQueue {
    /// Empties the queue and refills it with the entries `fill` adds.
    pub(super) fn refill(&mut self, fill: impl FnOnce(&mut Vec<Entry>)) {
        self.first.clear();
        self.next = 0;
        fill(&mut self.first);
        let exact = self.sorting.sort(&mut self.first);
        self.fresh.reset(exact);
        self.coming = None;
    }

    /// Adds a re-keyed entry.
    pub(super) fn push(&mut self, entry: Entry) {
        self.fresh.push(entry);
    }

    /// The nodes `k` places further down the initial run and down the
    /// batch of re-keyed entries being served, if any: each front is read
    /// in order, so these are likely popped soon.
    pub(super) fn ahead(&self, k: usize) -> [Option<DirtyId>; 2] {
        let first = self.first.get(self.next + k).map(|e| DirtyId(e.node));
        let tied = &self.fresh.tied;
        let batch = (tied.len().checked_sub(k + 1)).map(|i| DirtyId(tied[i].node));
        [first, batch]
    }

    /// The node [`COMING`] entries down the initial run after the last
    /// pop from it, if that pop came from there.
    pub(super) fn coming(&self) -> Option<u32> {
        self.coming
    }

    /// The smallest entry, if any.
    pub(super) fn peek(&mut self) -> Option<Entry> {
        let head = self.first.get(self.next).copied();
        match (head, self.fresh.peek()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Removes and returns the smallest entry.
    pub(super) fn pop(&mut self) -> Option<Entry> {
        let head = self.first.get(self.next).copied();
        match (head, self.fresh.peek()) {
            (Some(a), fresh) if fresh.is_none_or(|b| a < b) => {
                self.next += 1;
                self.coming = self.first.get(self.next + COMING).map(|e| e.node);
                Some(a)
            }
            _ => {
                self.coming = None;
                self.fresh.pop()
            }
        }
    }
}

/// A radix heap (after Ahuja, Mehlhorn, Orlin and Tarjan) on the entries'
/// [`Entry::approx`], exact where approximations tie. An entry whose
/// approximation exceeds `last` waits in the bucket of the highest bit
/// where the two differ; the others are smaller than every bucketed one
/// and wait in `tied` or `low`, whose smaller front is the minimum. When
/// both run dry, the lowest non-empty bucket is spread out again around
/// its smallest approximation, which becomes `last`: the entries that have
/// it go to `tied`, sorted once, and the others to lower buckets; the
/// higher buckets stay as they are. Simplify's keys only grow, so an entry
/// moves down a few times; equal keys are common (many nodes share a cost
/// and a degree), and a sorted batch serves them faster than a heap. An
/// entry pushed at or below `last` goes to `low`. When some key has no
/// approximation, every entry goes to `low`.
#[derive(Default)]
struct RadixHeap {
    /// The last spread's entries whose approximation is `last`, in
    /// descending order (the minimum last).
    tied: Vec<Entry>,
    /// Entries pushed with an approximation of at most `last`.
    low: BinaryHeap<Reverse<Entry>>,
    /// By highest differing bit from `last`.
    buckets: Vec<Vec<Entry>>,
    /// Bit `i` set when `buckets[i]` is not empty.
    full: u64,
    last: u64,
    /// Whether entries are placed by approximation.
    exact: bool,
}

impl RadixHeap {
    /// Empties the heap; `exact` says every key to come has an
    /// approximation.
    fn reset(&mut self, exact: bool) {
        self.tied.clear();
        self.low.clear();
        self.buckets.resize_with(64, Vec::new);
        for b in &mut self.buckets {
            b.clear();
        }
        self.full = 0;
        self.last = 0;
        self.exact = exact;
    }

    fn push(&mut self, e: Entry) {
        let approx = if self.exact {
            // A re-keyed entry keeps its node's cost and has a smaller
            // denominator, so it fits where the initial entries did.
            e.approx()
                .expect("a re-keyed key fits where the initial ones did")
        } else {
            0
        };
        if approx <= self.last {
            self.low.push(Reverse(e));
        } else {
            self.bucket(approx, e);
        }
    }

    /// Puts an entry whose approximation exceeds `last` in its bucket.
    fn bucket(&mut self, approx: u64, e: Entry) {
        let bit = 63 - (approx ^ self.last).leading_zeros() as usize;
        self.buckets[bit].push(e);
        self.full |= 1 << bit;
    }

    /// The smallest entry, if any, spreading out a bucket if `tied` and
    /// `low` are empty.
    fn peek(&mut self) -> Option<Entry> {
        if self.tied.is_empty() && self.low.is_empty() && self.full != 0 {
            let bit = self.full.trailing_zeros() as usize;
            self.full &= !(1 << bit);
            let mut bucket = std::mem::take(&mut self.buckets[bit]);
            // Bucketed entries have approximations (see `push`).
            let approx = |e: &Entry| e.approx().unwrap_or_default();
            self.last = (bucket.iter().map(approx).min()).expect("a full bucket has entries");
            // Every entry lands in `tied` or below `bit`.
            for e in bucket.drain(..) {
                let a = approx(&e);
                if a == self.last {
                    self.tied.push(e);
                } else {
                    self.bucket(a, e);
                }
            }
            sort_descending(&mut self.tied);
            self.buckets[bit] = bucket;
        }
        match (self.tied.last(), self.low.peek()) {
            (Some(&t), Some(l)) => Some(t.min(l.0)),
            (t, l) => t.copied().or(l.map(|l| l.0)),
        }
    }

    fn pop(&mut self) -> Option<Entry> {
        let e = self.peek()?;
        if self.tied.last() == Some(&e) {
            self.tied.pop()
        } else {
            self.low.pop().map(|r| r.0)
        }
    }
}

/// The buffers of [`Sorting::sort`].
#[derive(Default)]
struct Sorting {
    keys: Vec<(u64, u32)>,
    spare: Vec<Entry>,
}

impl Sorting {
    /// Sorts `entries` as `sort_unstable` does (key, then node); returns
    /// whether every key has an approximation ([`Entry::approx`]). Then
    /// the entries are ordered by it first (a radix sort for a large
    /// batch, a sort of integer pairs for a small one), stably, and only
    /// runs of equal approximations out of order are sorted exactly: exact
    /// comparisons multiply, and the first batch holds every `hi` node.
    /// Otherwise they are sorted exactly.
    fn sort(&mut self, entries: &mut Vec<Entry>) -> bool {
        let Sorting { keys, spare } = self;
        keys.clear();
        for (i, e) in entries.iter().enumerate() {
            let Some(approx) = e.approx() else {
                entries.sort_unstable();
                return false;
            };
            keys.push((approx, i as u32));
        }
        if keys.len() < RADIX_MIN {
            keys.sort_unstable();
        } else {
            radix_sort(keys);
        }
        spare.clear();
        spare.extend(keys.iter().map(|&(_, i)| entries[i as usize]));
        std::mem::swap(entries, spare);
        let mut start = 0;
        for run in keys.chunk_by(|a, b| a.0 == b.0) {
            let run = &mut entries[start..start + run.len()];
            start += run.len();
            if !run.is_sorted() {
                run.sort_unstable();
            }
        }
        true
    }
}

/// Sorts `entries` in descending order. Entries tied on their
/// approximation mostly share their exact key too, and then node and
/// degree order them: one integer per entry to compare, where the full
/// order cross-multiplies keys at every comparison.
fn sort_descending(entries: &mut [Entry]) {
    let Some(first) = entries.first().map(|e| e.key) else {
        return;
    };
    let same = |k: &Ratio| (k.num == first.num && k.den == first.den) || *k == first;
    if entries.iter().all(|e| same(&e.key)) {
        entries.sort_unstable_by_key(|e| Reverse(u64::from(e.node) << 32 | u64::from(e.deg)));
    } else {
        entries.sort_unstable_by(|a, b| b.cmp(a));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(node: u32, num: u64, den: u64) -> Entry {
        Entry {
            key: Ratio { num, den },
            node,
            deg: 0,
        }
    }

    /// Entries sort exactly as by comparison, large batches (radix) and
    /// small ones, of many keys or of a few (counted), in buffers reused
    /// from batch to batch: with exact ties (`2/4` and `1/2`), distinct
    /// ratios too close for an `f64` to tell apart, zero costs, and
    /// numerators too wide for it.
    #[test]
    fn entries_sort_as_by_comparison() {
        let mut rng = crate::alloc::support::rng::Rng::new(9);
        let mut rnd = move |n: u64| rng.below(n);
        let mut close = 0;
        let mut sorting = Sorting::default();
        for round in 0..12 {
            let n = match round % 3 {
                0 => 1 + rnd(300) as usize,
                _ => RADIX_MIN + rnd(1000) as usize,
            };
            // A few values: every key from a pool of 40.
            let few = round % 3 == 2;
            let entries: Vec<Entry> = (0..n as u32)
                .map(|i| {
                    let x = if few { rnd(40) } else { rnd(1 << 20) };
                    match rnd(5) {
                        // A third, or a hair below: `m / (3m + 1)`.
                        0 => {
                            let m = (1 << 51) - x;
                            entry(i, m, 3 * m + rnd(2))
                        }
                        1 => entry(i, x, 3),
                        2 => entry(i, 2 * x, 6),
                        3 => entry(i, 0, 1 + rnd(9)),
                        _ if round == 5 => entry(i, u64::MAX - rnd(9), 1 + rnd(9)),
                        _ if few => entry(i, x << 30, 1 + x % 7),
                        _ => entry(i, rnd(1 << 40), 1 + rnd(1 << 40)),
                    }
                })
                .collect();
            let mut want = entries.clone();
            want.sort_unstable();
            let mut got = entries;
            let exact = got.iter().all(|e| e.approx().is_some());
            assert_eq!(sorting.sort(&mut got), exact);
            assert_eq!(got, want, "round {round}");
            let f = |e: &Entry| e.key.num as f64 / e.key.den as f64;
            close += (want.windows(2))
                .filter(|w| w[0].key < w[1].key && f(&w[0]) == f(&w[1]))
                .count();
        }
        assert!(close > 10, "{close} distinct keys with one f64");
    }

    /// A tied batch sorts descending as by comparison, on node and degree
    /// when its keys are all one (`2/4` and `1/2` are), exactly when two of
    /// them only share an `f64`.
    #[test]
    fn tied_entries_sort_descending() {
        let mut rng = crate::alloc::support::rng::Rng::new(4);
        // `m / (3m + 1)` and `(m + 1) / (3m + 4)` differ by less than the
        // `f64` spacing there.
        let m = (1u64 << 51) - 6;
        for close in [false, true] {
            let mut entries: Vec<Entry> = (0..200)
                .map(|_| {
                    let node = rng.below(50) as u32;
                    let e = match (rng.below(2), close) {
                        (0, false) => entry(node, 1, 2),
                        (_, false) => entry(node, 2, 4),
                        (0, true) => entry(node, m, 3 * m + 1),
                        (_, true) => entry(node, m + 1, 3 * m + 4),
                    };
                    Entry {
                        deg: rng.below(3) as u32,
                        ..e
                    }
                })
                .collect();
            let mut want = entries.clone();
            want.sort_unstable_by(|a, b| b.cmp(a));
            let approx = entries[0].approx();
            assert!(entries.iter().all(|e| e.approx() == approx));
            sort_descending(&mut entries);
            assert_eq!(entries, want, "close: {close}");
        }
    }

    /// The queue pops exactly what one binary heap of the same entries
    /// pops, while re-keyed entries spread through the buckets, some of
    /// them pushed below the heap's `last`; with keys too wide for an
    /// `f64`, every re-keyed entry waits in `low`.
    #[test]
    fn hi_queue_pops_in_key_order() {
        let mut rng = crate::alloc::support::rng::Rng::new(7);
        let mut rnd = move || rng.next_u64();
        for wide in [false, true] {
            let n = 1 << 16;
            let init: Vec<Entry> = (0..n as u32)
                .map(|i| {
                    let num = if wide && i % 100 == 0 {
                        u64::MAX / 2
                    } else {
                        rnd() % 1000
                    };
                    entry(i, num, 1 + rnd() % 7)
                })
                .collect();
            let mut model: BinaryHeap<Reverse<Entry>> = init.iter().map(|&e| Reverse(e)).collect();
            let mut q = HiQueue::default();
            q.refill(|entries| entries.extend_from_slice(&init));
            let (mut pops, mut pushes, mut below, mut most_full) = (0, 0, 0, 0);
            while let Some(e) = q.pop() {
                assert_eq!(Some(e), model.pop().map(|r| r.0));
                pops += 1;
                if pushes < 8 * n && rnd() % 4 != 0 {
                    // Simplify only raises keys, often far past the others.
                    let raise = [0, 1, rnd() % 100, rnd() % 100_000][(rnd() % 4) as usize];
                    let cur = entry(e.node, e.key.num.saturating_add(raise), e.key.den);
                    below += usize::from(cur.approx().is_some_and(|a| a < q.fresh.last));
                    q.push(cur);
                    model.push(Reverse(cur));
                    pushes += 1;
                }
                assert_eq!(q.peek(), model.peek().map(|r| r.0));
                most_full = most_full.max(q.fresh.full.count_ones());
            }
            assert!(model.is_empty());
            assert_eq!(pops, n + pushes);
            assert!(pushes > 2 * n, "{pushes} pushes");
            if wide {
                assert_eq!(most_full, 0, "wide keys all wait in low");
            } else {
                assert!(most_full >= 8, "{most_full} buckets in use at once");
                assert!(below > 100, "{below} pushes below last");
            }
        }
    }
}
