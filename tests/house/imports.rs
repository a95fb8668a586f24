//! No import circle among the library's modules: the modules of `src/`,
//! with an edge from a module to every module whose items it names in a
//! `use` item or in a `crate::…`/`super::…` path, form no cycle.
//!
//! A name is followed through `pub use` re-exports to the module that
//! defines it, so a parent that re-exports a child's items (a facade) does
//! not depend on the child by that alone, and a child that reaches a
//! sibling's item through the parent depends on the sibling. A child that
//! implements a type of its parent (`impl Parent { … }`) depends on the
//! parent; the parent calls those methods without naming the child, as
//! regalloc2's `ion` does.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// A module's path from the crate root (`["alloc", "briggs", "select"]`).
type ModPath = Vec<String>;

/// A module's code: its `use` items (whether each is public, and the paths
/// it names) and the rest of its code.
struct Code {
    uses: Vec<(bool, Vec<String>)>,
    rest: String,
}

/// Every module of the library under `src/` and its code (`main.rs`, the
/// binary's crate, is not one).
fn modules(src: &Path) -> BTreeMap<ModPath, Code> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") && path != src.join("main.rs") {
                let rel = path.strip_prefix(src).unwrap().with_extension("");
                let mut m: ModPath = (rel.iter())
                    .map(|c| c.to_string_lossy().into_owned())
                    .collect();
                if matches!(m.last().map(String::as_str), Some("mod" | "lib")) {
                    m.pop();
                }
                out.insert(m, code_of(&std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out
}

/// The code of a source file, less its comments and its unit tests.
fn code_of(text: &str) -> Code {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) if !l[..i].contains('"') => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let (mut uses, mut rest) = (Vec::new(), String::new());
    let mut tail = code.as_str();
    while let Some(i) = use_keyword(tail) {
        let Some(end) = tail[i..].find(';').map(|e| i + e) else {
            break;
        };
        let line_start = tail[..i].rfind(['\n', ';', '{', '}']).map_or(0, |s| s + 1);
        let public = tail[line_start..i].trim_start().starts_with("pub");
        let tree = tail[i + 3..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        uses.extend(expand(&tree).into_iter().map(|p| (public, p)));
        rest.push_str(&tail[..line_start]);
        tail = &tail[end + 1..];
    }
    rest.push_str(tail);
    Code { uses, rest }
}

/// Where the next `use` keyword starts: the word `use`, at the start of a
/// line after whitespace, visibility or an attribute.
fn use_keyword(s: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = s[from..].find("use ").map(|i| i + from) {
        from = i + 4;
        let line = &s[s[..i].rfind('\n').map_or(0, |n| n + 1)..i];
        let head = line.trim();
        if head.is_empty() || head.starts_with("pub") && head.ends_with(['b', ')']) {
            return Some(i);
        }
    }
    None
}

/// The paths a `use` tree names: `a::{b, c::{d, e as f}}` gives `a::b`,
/// `a::c::d` and `a::c::e`.
fn expand(tree: &str) -> Vec<Vec<String>> {
    let segments = |p: &str| -> Vec<String> {
        (p.split("::").map(str::trim))
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        return vec![segments(tree.split(" as ").next().unwrap_or(tree))];
    };
    let prefix = segments(&tree[..open]);
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut out = Vec::new();
    for part in parts.into_iter().map(str::trim).filter(|p| !p.is_empty()) {
        if part == "self" {
            out.push(prefix.clone());
        } else {
            out.extend(
                expand(part)
                    .into_iter()
                    .map(|t| [prefix.clone(), t].concat()),
            );
        }
    }
    out
}

/// The crate-absolute form of `path` as written in module `m`, if it names
/// something of this crate.
fn absolute(modules: &BTreeMap<ModPath, Code>, m: &ModPath, path: &[String]) -> Option<ModPath> {
    let first = path.first()?;
    match first.as_str() {
        "crate" => Some(path[1..].to_vec()),
        "self" => Some([m.as_slice(), &path[1..]].concat()),
        "super" => {
            let ups = path.iter().take_while(|s| *s == "super").count();
            let base = &m[..m.len().checked_sub(ups)?];
            Some([base, &path[ups..]].concat())
        }
        _ => {
            let child = [m.as_slice(), &path[..1]].concat();
            (modules.contains_key(&child)).then(|| [m.as_slice(), path].concat())
        }
    }
}

/// Each module's public re-exports: the name it gives and the path it names.
type Reexports = BTreeMap<ModPath, BTreeMap<String, ModPath>>;

/// The module that defines what the absolute `path` names: its longest
/// module prefix, followed through that module's re-export of the next
/// segment.
fn resolve(modules: &BTreeMap<ModPath, Code>, re: &Reexports, path: &[String]) -> Option<ModPath> {
    let mut path = path.to_vec();
    for _ in 0..16 {
        let k = (0..=path.len())
            .rev()
            .find(|&k| modules.contains_key(&path[..k]))?;
        match path.get(k).and_then(|name| re[&path[..k]].get(name)) {
            Some(target) if target[..] != path[..=k] => {
                path = [target.as_slice(), &path[k + 1..]].concat();
            }
            _ => return Some(path[..k].to_vec()),
        }
    }
    None
}

/// The import graph: the modules each module depends on.
fn graph(modules: &BTreeMap<ModPath, Code>) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let absolute_uses = |m: &ModPath| -> Vec<(bool, ModPath)> {
        (modules[m].uses.iter())
            .filter_map(|(public, p)| Some((*public, absolute(modules, m, p)?)))
            .collect()
    };
    let re: Reexports = (modules.keys())
        .map(|m| {
            let names = (absolute_uses(m).into_iter())
                .filter(|(public, p)| *public && !p.is_empty())
                .map(|(_, p)| (p[p.len() - 1].clone(), p))
                .collect();
            (m.clone(), names)
        })
        .collect();
    let mut edges = BTreeMap::new();
    for (m, code) in modules {
        let mut out = BTreeSet::new();
        for (public, p) in absolute_uses(m) {
            let Some(r) = resolve(modules, &re, &p) else {
                continue;
            };
            let facade = public && r.len() > m.len() && r.starts_with(m);
            if r != *m && !facade {
                out.insert(r);
            }
        }
        for p in inline_paths(&code.rest) {
            let found = absolute(modules, m, &p).and_then(|a| resolve(modules, &re, &a));
            out.extend(found.filter(|r| r != m));
        }
        edges.insert(m.clone(), out);
    }
    edges
}

/// The `crate::…` and `super::…` paths written in code outside `use` items
/// and visibilities.
fn inline_paths(code: &str) -> Vec<Vec<String>> {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let mut out = Vec::new();
    for start in ["crate::", "super::"] {
        for (i, _) in code.match_indices(start) {
            let before = code[..i].trim_end();
            // A visibility, `pub(in crate::…)`, names no item.
            if code[..i].chars().last().is_some_and(ident) || before.ends_with("(in") {
                continue;
            }
            let end = code[i..]
                .find(|c: char| !ident(c))
                .map_or(code.len(), |e| i + e);
            out.push(
                code[i..end]
                    .split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect(),
            );
        }
    }
    out
}

/// A cycle of `edges`, if there is one: the modules along it, the first
/// again at the end.
fn cycle(edges: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Option<Vec<ModPath>> {
    /// Depth-first from `v`; `on` holds the path from the root, `done`
    /// the modules fully explored.
    fn visit(
        v: &ModPath,
        edges: &BTreeMap<ModPath, BTreeSet<ModPath>>,
        on: &mut Vec<ModPath>,
        done: &mut BTreeSet<ModPath>,
    ) -> Option<Vec<ModPath>> {
        on.push(v.clone());
        for w in edges.get(v).into_iter().flatten() {
            if let Some(at) = on.iter().position(|u| u == w) {
                return Some([&on[at..], std::slice::from_ref(w)].concat());
            }
            if !done.contains(w) {
                if let Some(c) = visit(w, edges, on, done) {
                    return Some(c);
                }
            }
        }
        on.pop();
        done.insert(v.clone());
        None
    }
    let mut done = BTreeSet::new();
    for v in edges.keys() {
        if !done.contains(v) {
            if let Some(c) = visit(v, edges, &mut Vec::new(), &mut done) {
                return Some(c);
            }
        }
    }
    None
}

/// A module path as Rust writes it.
fn name(m: &ModPath) -> String {
    if m.is_empty() {
        "crate".into()
    } else {
        m.join("::")
    }
}

#[test]
fn the_library_has_no_import_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let modules = modules(&src);
    assert!(modules.len() > 100, "{} modules", modules.len());
    let edges = graph(&modules);
    assert!(edges.values().map(BTreeSet::len).sum::<usize>() > 300);
    let found = cycle(&edges).map(|c| c.iter().map(name).collect::<Vec<_>>().join(" -> "));
    assert_eq!(found, None);
}

/// What the graph counts: a child named by its parent, a sibling through
/// the parent's re-export or a `super::` path in code, a parent's own item
/// named by its child; and what it does not: a facade's re-export, a
/// visibility path, comments.
#[test]
fn edges_follow_reexports_and_skip_facades() {
    let path = |s: &str| -> ModPath {
        s.split("::")
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    };
    let crate_of = |files: &[(&str, &str)]| -> BTreeMap<ModPath, Code> {
        files
            .iter()
            .map(|(m, text)| (path(m), code_of(text)))
            .collect()
    };
    let names = |edges: &BTreeMap<ModPath, BTreeSet<ModPath>>, m: &str| -> Vec<String> {
        edges[&path(m)].iter().map(name).collect()
    };
    let mut files = vec![
        ("", "mod a;\npub use a::Tool;\n"),
        ("a", "mod b;\nmod c;\npub use b::Tool;\nuse c::helper;\n"),
        ("a::b", "use crate::Tool as T;\n// use super::c::x;\n"),
        (
            "a::c",
            "pub(super) use super::Tool;\npub(in crate::a) fn f() { super::b::go(); }\n",
        ),
    ];
    let edges = graph(&crate_of(&files));
    assert_eq!(names(&edges, ""), Vec::<String>::new());
    assert_eq!(names(&edges, "a"), ["a::c"]);
    assert_eq!(names(&edges, "a::b"), Vec::<String>::new());
    assert_eq!(names(&edges, "a::c"), ["a::b"]);
    assert_eq!(cycle(&edges), None);
    files[2].1 = "use super::Local;\n";
    let edges = graph(&crate_of(&files));
    assert_eq!(names(&edges, "a::b"), ["a"]);
    let found = cycle(&edges).map(|c| c.iter().map(name).collect::<Vec<_>>());
    assert_eq!(
        found,
        Some(vec!["a".into(), "a::c".into(), "a::b".into(), "a".into()])
    );
}
