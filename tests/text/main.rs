//! Integration tests of the text format: syntax, round trip, validation errors, robustness (SPEC §2).

mod json_fuzz;
#[path = "../support/props.rs"]
mod props_config;
mod robustness;
mod round_trip_props;
mod roundtrip;
mod syntax;
mod validate_errors;
