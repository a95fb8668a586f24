//! Integration tests of the verifier and the compile pipeline under it (SPEC §5, §6).

mod generator;
mod mutations;
mod oracle;
mod pipeline_stages;
mod property;
mod verify_fixtures;
