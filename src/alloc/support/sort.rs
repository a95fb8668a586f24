//! Stable sorts of the allocator's large batches by integer keys: a radix
//! sort of (key, index) pairs, or a counting pass when the keys take few
//! values (simplify's initial `hi` keys, the nodes by def, the spill
//! code's insertion points). Large sorts by comparison miss a branch per
//! comparison.

/// Sorts smaller than this go by comparison.
pub(crate) const RADIX_MIN: usize = 1 << 14;

/// Reorders `items` stably by `key`, a radix sort of (key, index) pairs
/// ([`radix_sort`]) and one gather.
fn radix_sort_by<T: Copy>(items: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    let mut keys: Vec<(u64, u32)> = (items.iter().enumerate())
        .map(|(i, x)| (key(x), i as u32))
        .collect();
    radix_sort(&mut keys);
    *items = keys.iter().map(|&(_, i)| items[i as usize]).collect();
}

/// Sorts `items` stably by `key`: by [`radix_sort_by`] when there are
/// many and they are not in order already.
pub(crate) fn sort_by_u64<T: Copy>(items: &mut Vec<T>, key: impl Fn(&T) -> u64) {
    if items.is_sorted_by_key(&key) {
        return;
    }
    if items.len() < RADIX_MIN {
        items.sort_by_key(key);
    } else {
        radix_sort_by(items, key);
    }
}

/// A stable least-significant-digit radix sort of `keys` by their first
/// field, 16 bits a pass; a pass whose digit is the same everywhere is
/// skipped. Keys of a few distinct values go by [`sort_few`] instead.
pub(crate) fn radix_sort(keys: &mut Vec<(u64, u32)>) {
    if sort_few(keys) {
        return;
    }
    let mut other = vec![(0, 0); keys.len()];
    let mut count = vec![0usize; 1 << 16];
    for shift in (0..64).step_by(16) {
        let digit = |k: &(u64, u32)| ((k.0 >> shift) & 0xffff) as usize;
        count.fill(0);
        for k in keys.iter() {
            count[digit(k)] += 1;
        }
        if count.contains(&keys.len()) {
            continue;
        }
        let mut at = 0;
        for c in count.iter_mut() {
            let n = *c;
            *c = at;
            at += n;
        }
        for k in keys.iter() {
            let d = digit(k);
            other[count[d]] = *k;
            count[d] += 1;
        }
        std::mem::swap(keys, &mut other);
    }
}

/// Slots of [`sort_few`]'s table of distinct keys, a power of two; it
/// gives up at half full.
const FEW_SLOTS: usize = 1 << 12;

/// Sorts `keys` stably by their first field when it takes at most
/// `FEW_SLOTS / 2` distinct values (simplify's initial `hi` keys take a
/// few hundred among a million nodes): each key is counted in an
/// open-addressed table, the distinct ones are sorted, and one pass
/// places every pair. Returns false, `keys` untouched, on more values.
fn sort_few(keys: &mut Vec<(u64, u32)>) -> bool {
    const FREE: (u64, u32) = (0, 0);
    // (key, count); a count of 0 marks a free slot.
    let mut table = vec![FREE; FEW_SLOTS];
    let mut slot_of: Vec<u16> = Vec::with_capacity(keys.len());
    let mut distinct = 0;
    for &(k, _) in keys.iter() {
        let mut h =
            (k.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - FEW_SLOTS.trailing_zeros())) as usize;
        loop {
            let e = &mut table[h];
            if e.1 == 0 {
                distinct += 1;
                if distinct > FEW_SLOTS / 2 {
                    return false;
                }
                *e = (k, 1);
                break;
            }
            if e.0 == k {
                e.1 += 1;
                break;
            }
            h = (h + 1) % FEW_SLOTS;
        }
        slot_of.push(h as u16);
    }
    let mut used: Vec<usize> = (0..FEW_SLOTS).filter(|&h| table[h].1 > 0).collect();
    used.sort_unstable_by_key(|&h| table[h].0);
    // Each slot's count becomes where its next pair goes.
    let mut at = 0;
    for &h in &used {
        let n = table[h].1;
        table[h].1 = at;
        at += n;
    }
    let mut sorted = vec![(0, 0); keys.len()];
    for (&k, &h) in keys.iter().zip(&slot_of) {
        let next = &mut table[usize::from(h)].1;
        sorted[*next as usize] = k;
        *next += 1;
    }
    *keys = sorted;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The radix sort orders (key, index) pairs as a stable sort does,
    /// with keys of a few values (counted), of as many values as the
    /// counting table takes, of one more (a radix sort), and of all kinds.
    #[test]
    fn radix_sort_is_a_stable_sort() {
        let mut rng = crate::alloc::support::rng::Rng::new(13);
        for values in [1, 7, FEW_SLOTS / 2, FEW_SLOTS / 2 + 1, usize::MAX] {
            let n = 3 * FEW_SLOTS + rng.below(100) as usize;
            let pool: Vec<u64> = (0..values.min(n)).map(|_| rng.next_u64()).collect();
            let mut keys: Vec<(u64, u32)> = (0..n as u32)
                .map(|i| match values {
                    usize::MAX => (rng.next_u64() >> rng.below(64), i),
                    _ => (pool[i as usize % pool.len()], i),
                })
                .collect();
            let few = sort_few(&mut keys.clone());
            assert_eq!(few, values <= FEW_SLOTS / 2, "{values} values");
            let mut want = keys.clone();
            want.sort_by_key(|k| k.0);
            radix_sort(&mut keys);
            assert_eq!(keys, want, "{values} values");
        }
    }
}
