//! One module per subcommand: its argument struct and its `run`.

pub(crate) mod alloc;
pub(crate) mod arch;
pub(crate) mod bound;
pub(crate) mod compile;
pub(crate) mod export;
pub(crate) mod fmt;
pub(crate) mod gen;
pub(crate) mod import;
pub(crate) mod legalize;
pub(crate) mod lint;
pub(crate) mod pass;
pub(crate) mod trace;
pub(crate) mod verify;
pub(crate) mod viz;
