//! The allocator's two threads: a scoped helper thread that runs one
//! side of a pass, or half of its range, while this thread runs the other
//! (`AllocOptions::parallel`). Every caller produces the same result on
//! one thread.

use std::ops::Range;

/// Runs `f` on the two halves of `0..n`, the later on a scoped helper
/// thread when `parallel`; on one thread, on `0..n` and then on the empty
/// `n..n`. Returns the results for the earlier half and the later one.
pub(crate) fn in_halves<T: Send>(
    parallel: bool,
    n: usize,
    f: impl Fn(Range<usize>) -> T + Sync,
) -> (T, T) {
    let mid = if parallel { n / 2 } else { n };
    let (late, early) = join(parallel, || f(mid..n), || f(0..mid));
    (early, late)
}

/// Runs `f` on the two halves of `items`, each with the index of its first
/// item, the later on a scoped helper thread when `parallel`; on one
/// thread, on all of `items` and then on none. Returns the results for the
/// earlier half and the later one.
pub(crate) fn in_halves_mut<T: Send, R: Send>(
    parallel: bool,
    items: &mut [T],
    f: impl Fn(usize, &mut [T]) -> R + Sync,
) -> (R, R) {
    let mid = if parallel {
        items.len() / 2
    } else {
        items.len()
    };
    let (early, late) = items.split_at_mut(mid);
    let (late, early) = join(parallel, || f(mid, late), || f(0, early));
    (early, late)
}

/// Runs `a` and `b`, `a` on a scoped helper thread when `parallel`, and
/// returns both results.
pub(crate) fn join<A: Send, B>(
    parallel: bool,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B,
) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    std::thread::scope(|s| {
        let helper = s.spawn(a);
        let b = b();
        (helper.join().expect("a helper thread panicked"), b)
    })
}

/// Passes over fewer nodes (or instructions, or tensors) than this run
/// on one thread.
pub(crate) const PARALLEL_MIN_NODES: usize = 1 << 14;
