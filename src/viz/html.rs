//! HTML page of a [`Timeline`] (SPEC §8): the SVG picture inline, a legend
//! explaining each mark, the summary table (SPEC §6 report keys) and a table
//! of the PSUM tensors (the first [`MAX_TABLE_ROWS`]).
//!
//! The page is well-formed XML as well as HTML, so the tests parse it.

use super::svg::{render, swatch};
use super::{escape, range_text, BarRole, Timeline};
use std::fmt::Write;

/// Rows of the tensor table at most; the rest are counted below it.
const MAX_TABLE_ROWS: usize = 1000;

/// Page style: readable on a laptop screen, the picture scrolls sideways.
const PAGE_STYLE: &str = "body{font-family:'DejaVu Sans',Helvetica,Arial,sans-serif;margin:20px;color:#1a1a1a}\
h2{font-size:16px;margin:22px 0 8px}\
.sub{color:#555;margin:0 0 12px}.pic{overflow-x:auto;border:1px solid #ccc;display:inline-block;max-width:100%}\
.pic>svg{display:block}table{border-collapse:collapse;font-size:13px}\
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f0f0f0}\
td.n{text-align:right;font-variant-numeric:tabular-nums}\
.legend td{border:none;padding:3px 8px 3px 0;vertical-align:top}.legend td:nth-child(2){font-weight:bold;white-space:nowrap}";

/// Renders the timeline as a self-contained HTML page.
pub fn html(t: &Timeline) -> String {
    let (picture, keys) = render(t);
    let mut o = String::with_capacity(picture.len() + 16 * 1024);
    let title = escape(&t.title);
    put!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>psum: {title}</title>\n<style>{PAGE_STYLE}</style>\n</head>\n<body>\n"
    );
    o.push_str("<p class=\"sub\">Hover over a rectangle or mark for details.</p>\n");
    put!(o, "<div class=\"pic\">\n{picture}</div>\n");

    o.push_str("<h2>Legend</h2>\n<table class=\"legend\">\n");
    for k in keys {
        o.push_str("<tr><td><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"24\" height=\"14\" viewBox=\"0 0 24 14\">");
        swatch(&mut o, k, 0.0, 0.0);
        put!(
            o,
            "</svg></td><td>{}</td><td>{}</td></tr>\n",
            escape(k.text()),
            escape(k.explain())
        );
    }
    o.push_str("</table>\n");

    if !t.summary.is_empty() {
        o.push_str("<h2>Summary</h2>\n<table class=\"summary\">\n");
        for (k, v) in &t.summary {
            put!(o, "<tr><th>{}</th><td>{}</td></tr>\n", escape(k), escape(v));
        }
        o.push_str("</table>\n");
    }

    o.push_str("<h2>PSUM tensors</h2>\n<table class=\"tensors\">\n<tr><th>name</th><th>banks</th><th>interval</th><th>length</th><th>role</th></tr>\n");
    for b in t.tensors.iter().take(MAX_TABLE_ROWS) {
        let role = match &b.role {
            BarRole::Normal => String::new(),
            BarRole::Spilled => "spilled (range up to its save)".to_string(),
            BarRole::Reload { of } => format!("reload of {}", escape(of)),
        };
        put!(
            o,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">[{}, {}]</td><td class=\"n\">{}</td><td>{role}</td></tr>\n",
            escape(&b.name),
            range_text(b.bank, b.bank.saturating_add(b.banks.max(1) - 1)),
            b.start,
            b.end,
            u64::from(b.end.saturating_sub(b.start)) + 1
        );
    }
    o.push_str("</table>\n");
    if t.tensors.len() > MAX_TABLE_ROWS {
        put!(
            o,
            "<p class=\"sub\">and {} more tensors, not listed.</p>\n",
            t.tensors.len() - MAX_TABLE_ROWS
        );
    }
    o.push_str("</body>\n</html>\n");
    o
}
