//! Property test of the round trip (SPEC §2.5) on random valid modules:
//! the generator's modules validate, `parse(print(m)) == m`, printing is
//! stable, and the JSON form round-trips.

use proptest::prelude::*;
use psum::gen::random::{program, RandomConfig};
use psum::text::{parse, parse_json, parse_module, print, to_json};
use psum::validate::{validate, validate_source};

proptest! {
    #![proptest_config(crate::props_config::config(400, "tests/proptest-regressions/text/round_trip_props.txt"))]

    #[test]
    fn random_modules_round_trip(seed in any::<u64>(), size in 1u32..40) {
        let m = program(seed, &RandomConfig { tensors: size, ..RandomConfig::syntax() }).unwrap();
        prop_assert_eq!(validate(&m), Ok(()));
        let text = print(&m);
        let parsed = parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(validate_source(&parsed.module, parsed.source_map.tiles()), Ok(()));
        prop_assert_eq!(&parsed.module, &m, "parse(print(m)) != m for\n{}", text);
        let lean = parse_module(&text).unwrap();
        prop_assert_eq!(&lean.module, &m);
        prop_assert_eq!(&lean.tiles[..], parsed.source_map.tiles());
        prop_assert_eq!(print(&parsed.module), text);
        prop_assert_eq!(parse_json(&to_json(&m)).unwrap(), m);
    }
}

#[test]
fn generator_covers_every_construct() {
    let texts: String = (0..200)
        .map(|s| {
            print(
                &program(
                    s,
                    &RandomConfig {
                        tensors: 30,
                        ..RandomConfig::syntax()
                    },
                )
                .unwrap(),
            )
        })
        .collect();
    for needle in [
        "loop ",
        "matmul ",
        "matmul.sparse",
        "matmul.mx",
        "matmul.t ",
        "copy ",
        "memset ",
        "act ",
        "dma ",
        "%",
        "after=%",
        "flags=",
        "zr=",
        "pos=",
        "bank=",
        "addr=",
        " bf16",
        " fp8",
        "*",
        "-",
        "block b1",
        "core_v4",
        "inf1",
    ] {
        assert!(
            texts.contains(needle),
            "generator never produced {needle:?}"
        );
    }
}
