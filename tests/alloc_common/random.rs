//! Random valid programs for allocator property tests.
