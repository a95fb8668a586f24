//! psum's benchmarks live under `benches/`; this crate has no library code.
