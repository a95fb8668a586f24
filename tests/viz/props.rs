//! Property tests of the bank timeline renderers (SPEC §8): any timeline,
//! including inconsistent ones (bars past the last point or bank, reversed
//! ranges, missing pressure values), renders without panicking to
//! well-formed SVG and HTML, byte-identical on every run.

use proptest::prelude::*;
use psum::viz::{
    html, svg, BarRole, BlockSpan, ClusterBox, LoopSpan, ReuseArrow, SpillKind, SpillMark,
    TensorBar, Timeline,
};

fn name() -> impl Strategy<Value = String> {
    "[a-z<>&\"' .0-9]{0,12}"
}

fn bar() -> impl Strategy<Value = TensorBar> {
    (name(), 0u32..10, 0u32..4, 0u32..5000, 0u32..5000, 0u8..3).prop_map(
        |(name, bank, banks, start, len, role)| TensorBar {
            role: match role {
                0 => BarRole::Normal,
                1 => BarRole::Spilled,
                _ => BarRole::Reload { of: name.clone() },
            },
            name,
            bank,
            banks,
            start,
            end: start.saturating_add(len).saturating_sub(len % 7),
            loc: None,
        },
    )
}

fn timeline() -> impl Strategy<Value = Timeline> {
    (
        (name(), 0u32..10, 0u32..6000),
        prop::collection::vec(bar(), 0..40),
        prop::collection::vec(
            (0u32..6000, any::<bool>(), name(), 0u32..10, 0u32..3),
            0..20,
        ),
        prop::collection::vec((name(), 0u32..10, 0u32..10, 0u32..6000, 0u32..6000), 0..10),
        prop::collection::vec((name(), 0u32..6000, 0u32..6000, 0u32..8), 0..10),
        prop::collection::vec(0u32..20, 0..100),
        prop::collection::vec((name(), 0u32..6000, 0u32..6000), 0..3),
        prop::collection::vec((0u32..10, 0u32..6000, 0u32..6000, any::<bool>()), 0..10),
    )
        .prop_map(
            |(
                (title, num_banks, num_points),
                tensors,
                spills,
                clusters,
                loops,
                pres,
                blocks,
                reuse,
            )| {
                Timeline {
                    arch: title.clone(),
                    title,
                    num_banks,
                    num_points,
                    blocks: blocks
                        .into_iter()
                        .map(|(name, start, end)| BlockSpan { name, start, end })
                        .collect(),
                    loops: loops
                        .into_iter()
                        .map(|(label, header, end, depth)| LoopSpan {
                            label,
                            header,
                            end,
                            depth,
                        })
                        .collect(),
                    tensors,
                    spills: spills
                        .into_iter()
                        .map(|(point, save, tensor, bank, banks)| SpillMark {
                            point,
                            kind: if save {
                                SpillKind::Save
                            } else {
                                SpillKind::Reload
                            },
                            slot: format!("{tensor}_SpillTensorCopy0"),
                            tensor,
                            bank,
                            banks,
                        })
                        .collect(),
                    clusters: clusters
                        .into_iter()
                        .map(|(label, bank_lo, bank_hi, start, end)| ClusterBox {
                            label,
                            bank_lo,
                            bank_hi,
                            start,
                            end,
                        })
                        .collect(),
                    reuse: reuse
                        .into_iter()
                        .map(|(bank, from, to, avoidable)| ReuseArrow {
                            bank,
                            from,
                            to,
                            avoidable,
                            edges: 1,
                            slack: 0,
                        })
                        .collect(),
                    pressure_before: pres.iter().map(|v| v / 2).collect(),
                    pressure_after: pres,
                    summary: vec![("k<&>".into(), "v\"'".into())],
                }
            },
        )
}

fn well_formed(doc: &str) -> Result<String, String> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    roxmltree::Document::parse_with_options(doc, opts)
        .map(|d| d.root_element().tag_name().name().to_string())
        .map_err(|e| e.to_string())
}

proptest! {
    #![proptest_config(crate::props_config::config(64, "tests/proptest-regressions/viz/props.txt"))]

    #[test]
    fn any_timeline_renders_well_formed_and_stable(t in timeline()) {
        let s = svg(&t);
        prop_assert_eq!(well_formed(&s), Ok("svg".to_string()));
        prop_assert_eq!(&s, &svg(&t));
        let h = html(&t);
        prop_assert_eq!(well_formed(&h), Ok("html".to_string()));
        prop_assert!(h.contains(&s));
    }
}
