//! Integration tests of the bank timeline (SPEC §8).

mod alloc;
mod props;
#[path = "../support/props.rs"]
mod props_config;
mod render;
