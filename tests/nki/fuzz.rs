//! A bounded, seeded mutation smoke test of `psum trace` (SPEC §9.3): kernels
//! of our own (`tests/nki_kernels/fuzz_*.py`) are mutated deterministically —
//! a line deleted or duplicated, a number, a keyword, an operator, an API
//! or an attribute name changed, a line re-indented — and every mutant must
//! either trace to a program that validates, or fail with exit 1, one error
//! line (`FILE:LINE[:COL]: error: …`, or `FILE: error: …` for an error no
//! kernel line owns) last on stderr, no Python traceback, no internal error,
//! no object's address or bound method in a message, and no output file.

use super::kernels::{psum, text};
use psum::gen::random::Rng;

/// The seed kernels: file, the function to trace, its arguments.
const SEEDS: [(&str, &[&str]); 3] = [
    (
        "fuzz_matmul.py",
        &[
            "--arg",
            "a=bfloat16[256,256]",
            "--arg",
            "b=bfloat16[256,512]",
        ],
    ),
    (
        "fuzz_elementwise.py",
        &["--arg", "x=float32[200,64]", "--arg", "g=float32[64]"],
    ),
    (
        "fuzz_isa.py",
        &[
            "--arg",
            "q=bfloat16[128,256]",
            "--arg",
            "w=bfloat16[128,128]",
            "--arch",
            "trn2",
        ],
    ),
];

/// Mutants traced per seed kernel.
const MUTANTS: usize = 40;

const NUMBERS: [&str; 12] = [
    "0", "1", "2", "3", "-1", "64", "127", "129", "256", "513", "4096", "100000",
];
const KEYWORDS: [&str; 14] = [
    "dtype",
    "buffer",
    "mask",
    "axis",
    "op",
    "dst",
    "src",
    "data",
    "value",
    "accumulate",
    "transpose_x",
    "engine",
    "keepdims",
    "no_such_keyword",
];
const OPERATORS: [&str; 9] = [" + ", " - ", " * ", " // ", " / ", " < ", " >= ", ":", ", "];
const APIS: [&str; 18] = [
    "nl.load",
    "nl.store",
    "nl.exp",
    "nl.add",
    "nl.matmul",
    "nl.transpose",
    "nl.sum",
    "nl.copy",
    "nl.zeros",
    "nl.ndarray",
    "nl.affine_range",
    "nl.sequential_range",
    "nl.par_dim",
    "nisa.nc_matmul",
    "nisa.tensor_copy",
    "nisa.activation",
    "nisa.memset",
    "nisa.nc_transpose",
];

const ATTRIBUTES: [&str; 10] = [
    "shape",
    "dtype",
    "reshape",
    "broadcast_to",
    "view",
    "ap",
    "buffer",
    "astype",
    "T",
    "no_such_attribute",
];

/// Byte ranges of `line` where one of `tokens` occurs.
fn occurrences(line: &str, tokens: &[&str]) -> Vec<(usize, usize)> {
    let mut at = Vec::new();
    for t in tokens {
        at.extend(line.match_indices(t).map(|(i, m)| (i, i + m.len())));
    }
    at
}

/// Ranges of the digit runs of `line` (whole numbers and parts of decimals).
fn numbers(line: &str) -> Vec<(usize, usize)> {
    let b = line.as_bytes();
    let mut at = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit()
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            at.push((start, i));
        } else {
            i += 1;
        }
    }
    at
}

/// Ranges of the keyword names of `line` (`name=` that is not `==`).
fn keywords(line: &str) -> Vec<(usize, usize)> {
    let b = line.as_bytes();
    let mut at = Vec::new();
    for (i, _) in line.match_indices('=') {
        let prev = if i > 0 { b[i - 1] } else { b' ' };
        if b.get(i + 1) == Some(&b'=')
            || matches!(
                prev,
                b'=' | b'!' | b'<' | b'>' | b' ' | b'+' | b'-' | b'*' | b'/'
            )
        {
            continue;
        }
        let mut s = i;
        while s > 0 && (b[s - 1].is_ascii_alphanumeric() || b[s - 1] == b'_') {
            s -= 1;
        }
        if s < i {
            at.push((s, i));
        }
    }
    at
}

/// Ranges of the attribute names of `line` (`x.name`, not a module's `nl.name`
/// nor a number's fraction).
fn attributes(line: &str) -> Vec<(usize, usize)> {
    let b = line.as_bytes();
    let mut at = Vec::new();
    for (i, _) in line.match_indices('.') {
        let owner_end = i;
        let mut s = owner_end;
        while s > 0 && (b[s - 1].is_ascii_alphanumeric() || b[s - 1] == b'_') {
            s -= 1;
        }
        let owner = &line[s..owner_end];
        let attribute_of_value = (!owner.is_empty() && !owner.bytes().all(|c| c.is_ascii_digit()))
            || (i > 0 && matches!(b[i - 1], b']' | b')'));
        if !attribute_of_value || ["nl", "nisa", "nki", "np", "math"].contains(&owner) {
            continue;
        }
        let mut e = i + 1;
        while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
            e += 1;
        }
        if e > i + 1 {
            at.push((i + 1, e));
        }
    }
    at
}

/// One mutant of `src` and what was done, or None when the chosen mutation
/// does not apply to the chosen line.
fn mutate(src: &str, rng: &mut Rng) -> Option<(String, String)> {
    let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
    // Three mutants in four change the kernel's body, the rest any line.
    let body = lines
        .iter()
        .position(|l| l.starts_with("def "))
        .unwrap_or(0);
    let from = if rng.index(4) == 0 { 0 } else { body };
    let candidates: Vec<usize> = (from..lines.len())
        .filter(|&i| !lines[i].trim().is_empty())
        .collect();
    let i = candidates[rng.index(candidates.len())];
    let line = lines[i].clone();
    let replace =
        |(s, e): (usize, usize), with: &str| format!("{}{}{}", &line[..s], with, &line[e..]);
    let what = match rng.index(11) {
        0 => {
            lines.remove(i);
            format!("deleted line {}", i + 1)
        }
        1 => {
            lines.insert(i, line.clone());
            format!("duplicated line {}", i + 1)
        }
        2 | 3 => {
            let at = numbers(&line);
            let n = *rng.pick(&NUMBERS);
            lines[i] = replace(*at.get(rng.index(at.len().max(1)))?, n);
            format!("line {}: a number became {n}", i + 1)
        }
        4 | 5 => {
            let at = keywords(&line);
            let k = *rng.pick(&KEYWORDS);
            lines[i] = replace(*at.get(rng.index(at.len().max(1)))?, k);
            format!("line {}: a keyword became {k}", i + 1)
        }
        6 => {
            let at = occurrences(&line, &OPERATORS);
            let op = *rng.pick(&OPERATORS);
            lines[i] = replace(*at.get(rng.index(at.len().max(1)))?, op);
            format!("line {}: an operator became {op:?}", i + 1)
        }
        9 => {
            let at = attributes(&line);
            let name = *rng.pick(&ATTRIBUTES);
            lines[i] = replace(*at.get(rng.index(at.len().max(1)))?, name);
            format!("line {}: an attribute became .{name}", i + 1)
        }
        7 | 8 => {
            let at = occurrences(&line, &APIS);
            let api = *rng.pick(&APIS);
            lines[i] = replace(*at.get(rng.index(at.len().max(1)))?, api);
            format!("line {}: an API became {api}", i + 1)
        }
        _ => {
            let indent = line.len() - line.trim_start().len();
            let by = [-4i64, -2, 2, 4][rng.index(4)];
            let new = (indent as i64 + by).max(0) as usize;
            lines[i] = format!("{}{}", " ".repeat(new), line.trim_start());
            format!("line {}: indentation {indent} became {new}", i + 1)
        }
    };
    let mut out = lines.join("\n");
    out.push('\n');
    (out != src).then_some((out, what))
}

/// Whether `line` is `FILE[:LINE[:COL]]: error: …` for the kernel `file`.
fn is_error_line(line: &str, file: &str) -> bool {
    let Some(rest) = line.strip_prefix(file) else {
        return false;
    };
    let Some(at) = rest.find(": error: ") else {
        return false;
    };
    let place = &rest[..at];
    place.is_empty()
        || (place.starts_with(':')
            && place[1..].split(':').count() <= 2
            && place[1..]
                .split(':')
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
}

/// Traces one mutant and checks the outcome; the failure to report, if any.
fn check(
    dir: &std::path::Path,
    k: usize,
    seed: &str,
    args: &[&str],
    src: &str,
    what: &str,
) -> Option<String> {
    let file = dir.join(format!("m{k}_{seed}"));
    std::fs::write(&file, src).unwrap();
    let out = dir.join(format!("m{k}.psum"));
    let shown = file.to_str().unwrap();
    let mut all = vec!["trace", shown, "kernel", "--timeout", "20"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["-o", out.to_str().unwrap()]);
    let o = psum(&all);
    let stderr = text(&o.stderr);
    let fail = |why: &str| {
        Some(format!(
            "{seed}, {what}: {why}\n--- stderr\n{stderr}--- mutant\n{src}"
        ))
    };
    if [
        "Traceback",
        "internal error",
        "panicked",
        " at 0x",
        "<bound method",
    ]
    .iter()
    .any(|t| stderr.contains(t))
    {
        return fail("a traceback, an internal error, a panic or an object's repr");
    }
    match o.status.code() {
        Some(0) => {
            let Ok(program) = std::fs::read_to_string(&out) else {
                return fail("exit 0 without the output file");
            };
            let parsed = match psum::text::parse(&program) {
                Ok(p) => p,
                Err(e) => return fail(&format!("the written program does not parse: {e}")),
            };
            if let Err(e) = psum::validate::validate(&parsed.module) {
                return fail(&format!("the written program does not validate: {e}"));
            }
        }
        Some(1) => {
            if out.exists() {
                return fail("an output file was written on a failure");
            }
            let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error: ")).collect();
            if errors.len() != 1
                || stderr.lines().last() != Some(errors[0])
                || !is_error_line(errors[0], shown)
            {
                return fail("not exactly one `FILE:LINE[:COL]: error: …` line, last");
            }
        }
        code => return fail(&format!("exit status {code:?}")),
    }
    None
}

#[test]
fn mutated_kernels_trace_or_fail_with_one_located_error() {
    let dir = std::env::temp_dir().join(format!("psum-nki-fuzz-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut rng = Rng::new(0x5053_554D_4E4B_4931);
    let mut jobs = Vec::new();
    for (seed, args) in SEEDS {
        let src = std::fs::read_to_string(format!(
            "{}/tests/nki_kernels/{seed}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let mut made = 0;
        while made < MUTANTS {
            if let Some((mutant, what)) = mutate(&src, &mut rng) {
                jobs.push((jobs.len(), seed, args, mutant, what));
                made += 1;
            }
        }
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| loop {
                let j = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some((k, seed, args, mutant, what)) = jobs.get(j) else {
                    break;
                };
                if let Some(f) = check(&dir, *k, seed, args, mutant, what) {
                    failures.lock().unwrap().push(f);
                }
            });
        }
    });
    std::fs::remove_dir_all(&dir).unwrap();
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} mutants:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n\n")
    );
}
