//! Allocator benchmarks (SPEC §3.10): reference vs fast mode on
//! the small scaling programs, fast mode alone on the large ones. The
//! programs are `psum::gen::scaling::params` — the same as `psum bench`,
//! which adds peak memory, growth ratios and the output comparison. The
//! timed region is `allocate_owned` on a fresh copy of the program.
//!
//! `cargo bench --bench alloc` (a few minutes; `-- fast/100000` filters).
//! Sample counts are criterion's minimum (10), the large sizes' too.

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion};
use psum::alloc::{allocate_owned, AllocOptions, Allocator};
use psum::gen::scaling;
use psum::gen::workloads::random;
use std::time::Duration;

fn bench(c: &mut Criterion, group: &str, sizes: &[u32], modes: &[Allocator]) {
    let mut g = c.benchmark_group(group);
    g.sample_size(10).warm_up_time(Duration::from_millis(500));
    for &n in sizes {
        let m = random(&scaling::params(n)).expect("scaling program");
        for &mode in modes {
            let opts = AllocOptions {
                allocator: mode,
                ..AllocOptions::default()
            };
            let name = if mode == Allocator::Briggs {
                "fast"
            } else {
                "reference"
            };
            g.bench_with_input(BenchmarkId::new(name, n), &m, |b, m| {
                b.iter_batched(
                    || m.clone(),
                    |m| allocate_owned(m, &opts).expect("allocates"),
                    BatchSize::PerIteration,
                )
            });
        }
    }
    g.finish();
}

/// Reference vs fast at 1k and 5k tensors (20k reference takes minutes per
/// run; `psum bench` measures it once).
fn compare(c: &mut Criterion) {
    bench(
        c,
        "compare",
        &scaling::COMPARE_SIZES[..2],
        &[Allocator::BriggsReference, Allocator::Briggs],
    );
}

/// Fast mode at 20k and 100k tensors (300k and 1M: `psum bench`).
fn scale(c: &mut Criterion) {
    let sizes = [scaling::COMPARE_SIZES[2], scaling::FAST_SIZES[0]];
    bench(c, "fast", &sizes, &[Allocator::Briggs]);
}

criterion_group!(benches, compare, scale);
criterion_main!(benches);
