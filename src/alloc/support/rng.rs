//! The project's one PRNG: every generator, randomized test and mincost's
//! seeded restarts draw from it (re-exported as `gen::random::Rng`).

/// The project's PRNG (splitmix64, Steele, Lea, Flood 2014): small, fast and
/// seedable; every generator and randomized test draws from it.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A uniform index into a collection of `len > 0` elements.
    pub fn index(&mut self, len: usize) -> usize {
        self.below(len as u64) as usize
    }

    /// Uniform in `lo..=hi` (`lo <= hi`), for any integer type that fits `i64`.
    pub(crate) fn range<T: Copy + Into<i64> + TryFrom<i64>>(&mut self, lo: T, hi: T) -> T {
        let (l, h) = (lo.into(), hi.into());
        let v = l + self.below((h - l) as u64 + 1) as i64;
        // `lo <= v <= hi`, so the conversion back cannot fail.
        T::try_from(v).unwrap_or(lo)
    }

    /// True with probability `num/den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A uniformly chosen element.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.index(xs.len())]
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn rng_is_splitmix64_with_inclusive_ranges() {
        // The reference splitmix64 output for seed 0.
        assert_eq!(Rng::new(0).next_u64(), 0xe220_a839_7b1d_cdaf);
        let mut rng = Rng::new(1);
        let mut seen = [false; 5];
        for _ in 0..200 {
            let v: i64 = rng.range(-2, 2);
            seen[(v + 2) as usize] = true;
            assert!(rng.below(3) < 3);
            assert!((0.0..1.0).contains(&rng.unit()));
        }
        assert_eq!(seen, [true; 5]);
        assert_eq!(rng.range(7u32, 7), 7);
    }
}
