//! Support code of the allocator's passes: threads ([`threads`]), sorts
//! ([`sort`]), an id set ([`idset`]), a range-add max tree
//! ([`max_add_tree`]), the PRNG ([`rng`]), cache hints and buffers reused from one iteration to the
//! next (a fresh buffer of a million-node program costs a page fault per
//! 4 KiB every iteration).

pub(crate) mod idset;
pub(crate) mod max_add_tree;
pub(crate) mod rng;
pub(crate) mod sort;
pub(crate) mod threads;

/// Hints the CPU to bring `s[i]` into the cache (no-op when `i` is out of
/// range or off x86-64). The allocator's picks jump across million-node
/// arrays in an order it knows a few steps ahead.
#[inline]
pub(crate) fn prefetch<T>(s: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = s.get(i) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing and cannot fault; the address
        // is that of a live element.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((x as *const T).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, i);
}

/// Makes `v` hold `len` items for a caller that overwrites every one of
/// them: the items already there stay as they are, and only the growth
/// (fitted exactly) is filled with `x`, so a reused buffer is not written
/// twice.
pub(crate) fn resize_to_overwrite<T: Clone>(v: &mut Vec<T>, len: usize, x: T) {
    v.truncate(len);
    v.reserve_exact(len - v.len());
    v.resize(len, x);
}
