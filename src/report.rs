//! Reports (SPEC §6): the `--report json` object of `alloc`, `legalize` and
//! `compile`, and the one-screen text summary `compile` prints.
//!
//! The JSON keys follow SPEC §6 in its order: `arch`, `num_banks`,
//! `tensors`, `spilled`, `spill_cost_cycles`, `iterations`, `best_heuristic`,
//! `demand_pct`, `utilization_pct`, then the matmul keys (`ordered_edges`,
//! `flags`, `isa_acc_byte`, `memsets_inserted`, …), `psum_reuse` (SPEC
//! §10), `estimated_cycles` and `engine_busy_cycles` (SPEC §11), `verify`
//! and `timings_ms`. Everything but `timings_ms` is deterministic.

use crate::alloc::AllocReport;
use crate::estimate;
use crate::matmul::MatmulReport;
use crate::pipeline::Compiled;
use crate::reuse;
use crate::verify::VerifyReport;
use serde_json::{Map, Value};
use std::fmt::Write as _;
use std::time::Duration;

/// The allocator's part of the report.
pub(crate) fn alloc_json(r: &AllocReport) -> Map<String, Value> {
    serde_json::to_value(r)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

/// Appends the matmul passes' keys to `o`.
fn add_matmul(o: &mut Map<String, Value>, r: &MatmulReport) {
    if let Value::Object(m) = r.to_json() {
        o.extend(m);
    }
}

/// `timings_ms`: pass name → milliseconds (three decimals).
fn timings_json(timings: &[(&'static str, Duration)]) -> Value {
    timings
        .iter()
        .map(|(name, d)| {
            let ms = (d.as_secs_f64() * 1e6).round() / 1e3;
            (name.to_string(), Value::from(ms))
        })
        .collect::<Map<_, _>>()
        .into()
}

/// The report of `psum alloc --report json`.
pub fn alloc_report(r: &AllocReport, elapsed: Duration) -> Value {
    let mut o = alloc_json(r);
    o.insert("timings_ms".into(), timings_json(&[("alloc", elapsed)]));
    o.into()
}

/// The report of `psum legalize --report json`.
pub fn legalize_report(arch: &str, num_banks: u32, r: &MatmulReport, elapsed: Duration) -> Value {
    let mut o = Map::new();
    o.insert("arch".into(), arch.into());
    o.insert("num_banks".into(), num_banks.into());
    add_matmul(&mut o, r);
    o.insert("timings_ms".into(), timings_json(&[("legalize", elapsed)]));
    o.into()
}

/// The verifier's verdict as the `verify` key (`"skipped"` entries when it did not run).
fn verify_json(v: Option<&VerifyReport>) -> Value {
    match v {
        Some(r) => serde_json::to_value(r).unwrap_or(Value::Null),
        None => serde_json::json!({"checker": "skipped", "simulator": "skipped"}),
    }
}

/// The report of `psum compile --report json`.
pub fn compile_report(c: &Compiled) -> Value {
    let mut o = alloc_json(&c.alloc.report);
    add_matmul(&mut o, &c.matmul);
    let reuse = reuse::analyze(&c.module, c.alloc.report.num_banks).summary();
    o.insert(
        "psum_reuse".into(),
        serde_json::to_value(reuse).unwrap_or(Value::Null),
    );
    let estimated = estimate::estimate(&c.module).ok();
    if let Some(Ok(Value::Object(e))) = estimated.map(serde_json::to_value) {
        o.extend(e);
    }
    o.insert("verify".into(), verify_json(c.verify.as_ref()));
    o.insert("timings_ms".into(), timings_json(&c.timings));
    o.into()
}

/// The one-screen summary `psum compile` prints on stderr: banks, spills,
/// reuse edges (SPEC §10), groups, clusters, memsets, flags and time per pass.
pub fn compile_summary(c: &Compiled) -> String {
    let r = &c.alloc.report;
    let m = &c.matmul;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "psum compile: arch {}, {} PSUM banks, {} instructions after unrolling",
        r.arch,
        r.num_banks,
        c.module.insts_in_order().len()
    );
    let placed: Vec<String> = r
        .tensors
        .iter()
        .filter_map(|t| {
            let bank = t.bank?;
            let range = if t.banks > 1 {
                format!("{}-{}", bank, bank + t.banks - 1)
            } else {
                bank.to_string()
            };
            Some(format!(
                "{}={range}{}",
                t.name,
                if t.spilled { "*" } else { "" }
            ))
        })
        .collect();
    let _ = writeln!(s, "  banks     {}", elide(&placed, 12));
    let _ = writeln!(
        s,
        "  demand    {:.2}% before spilling, {:.2}% utilization after, {} iteration{}, best heuristic H{}",
        r.demand_pct,
        r.utilization_pct,
        r.iterations,
        plural(r.iterations as usize),
        r.best_heuristic
    );
    let _ = writeln!(
        s,
        "  spills    {} tensor{} ({}), about {} cycles",
        r.spilled.len(),
        plural(r.spilled.len()),
        if r.spilled.is_empty() {
            "none".to_string()
        } else {
            elide(&r.spilled, 8)
        },
        r.spill_cost_cycles
    );
    let reuse = reuse::analyze(&c.module, r.num_banks).summary();
    let _ = writeln!(s, "  reuse     {reuse}");
    let _ = writeln!(
        s,
        "  matmuls   {} accumulation group{}, {} cluster{}, {} memset{} inserted, {} ordered edge{}",
        m.groups,
        plural(m.groups),
        m.clusters.len(),
        plural(m.clusters.len()),
        m.memsets_inserted,
        plural(m.memsets_inserted),
        m.ordered_edges.len(),
        plural(m.ordered_edges.len())
    );
    let mut counts: Vec<(String, usize)> = Vec::new();
    for (_, f) in &m.flags {
        let key = f.to_string();
        match counts.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1,
            None => counts.push((key, 1)),
        }
    }
    let flags: Vec<String> = counts.iter().map(|(k, n)| format!("{n}× {k}")).collect();
    let _ = writeln!(s, "  flags     {}", elide(&flags, 8));
    let verdict = match &c.verify {
        None => "skipped (--no-verify)".to_string(),
        Some(v) => v.first_error().unwrap_or_else(|| "ok".to_string()),
    };
    let _ = writeln!(s, "  verify    {verdict}");
    let times: Vec<String> = c
        .timings
        .iter()
        .map(|(n, d)| format!("{n} {:.2} ms", d.as_secs_f64() * 1e3))
        .collect();
    let _ = writeln!(s, "  time      {}", times.join(", "));
    for w in c.alloc.warnings.iter().chain(&m.warnings) {
        let _ = writeln!(s, "  warning   {w}");
    }
    s
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Joins at most `max` items, then says how many more there are.
fn elide(items: &[String], max: usize) -> String {
    let mut s = items
        .iter()
        .take(max)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > max {
        let _ = write!(s, ", … ({} more)", items.len() - max);
    }
    s
}
