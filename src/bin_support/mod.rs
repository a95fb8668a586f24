//! Support code of the `psum` binary that is too large for `main.rs`: each
//! submodule holds one subcommand's arguments and its `cmd_*` function.

pub mod bench;
pub mod quality;
