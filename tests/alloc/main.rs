//! Integration tests of the PSUM allocator, its bounds and the peer problems (SPEC §3).

mod alloc_common;
mod bound;
mod examples;
mod export;
mod lp;
mod mincost;
mod peers;
mod programs;
mod props;
#[path = "../support/props.rs"]
mod props_config;
mod rotation;
