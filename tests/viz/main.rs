//! Integration tests of the bank timeline (SPEC §8).

mod alloc;
mod props;
mod render;
