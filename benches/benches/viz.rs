//! Picture benchmarks (SPEC §8): the bank timeline of the scaling program
//! at 100k tensors, from its allocation to the SVG and the HTML page. The
//! timed regions are `Timeline::from_alloc`, `svg` and `html`, each on its
//! own; the allocation is made once, outside them.
//!
//! `cargo bench --manifest-path benches/Cargo.toml --bench viz`.

use criterion::{criterion_group, criterion_main, Criterion};
use psum::alloc::{allocate, AllocOptions};
use psum::gen::scaling;
use psum::gen::workloads::random;
use psum::viz::{html, svg, Timeline};
use std::time::Duration;

fn pictures(c: &mut Criterion) {
    let n = scaling::FAST_SIZES[0];
    let m = random(&scaling::params(n)).expect("scaling program");
    let out = allocate(&m, &AllocOptions::default()).expect("allocates");
    let t = Timeline::from_alloc("scaling", &m, &out);
    let mut g = c.benchmark_group(format!("viz/{n}"));
    g.sample_size(10).warm_up_time(Duration::from_millis(500));
    g.bench_function("timeline", |b| {
        b.iter(|| Timeline::from_alloc("scaling", &m, &out))
    });
    g.bench_function("svg", |b| b.iter(|| svg(&t)));
    g.bench_function("html", |b| b.iter(|| html(&t)));
    g.finish();
}

criterion_group!(benches, pictures);
criterion_main!(benches);
