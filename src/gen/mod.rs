//! Program generators (SPEC §7): the named workloads of [`workloads`].

pub mod workloads;
