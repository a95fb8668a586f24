//! No import circle among the library's modules. The sources are parsed
//! with `syn`; a module depends on every module whose items it names, in a
//! `use` item, in a path of its code or in a macro call's tokens, and the
//! graph of those dependencies has no cycle.
//!
//! A name is followed through `pub use` re-exports to the module that
//! defines it, so a child that reaches a sibling's item through the
//! parent's re-export depends on the sibling. A module's own submodules
//! are what it is made of, so naming them is no dependency: a parent that
//! defines the types its children share and drives them (as regalloc2's
//! `lib.rs` runs `ion`, which names `crate::Function`) makes no circle,
//! while two siblings, or two modules of different parents, that name one
//! another do. Unit tests (`#[cfg(test)]` modules) and visibilities
//! (`pub(in crate::…)`) name nothing.

use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use syn::visit::{self, Visit};

/// A module's path from the crate root (`["alloc", "briggs", "select"]`).
type ModPath = Vec<String>;

/// What a module names: its `use` paths (whether each is public) and the
/// other paths of its code.
#[derive(Default)]
struct Names {
    uses: Vec<(bool, Vec<String>)>,
    paths: Vec<Vec<String>>,
}

impl Names {
    /// The names in the source text of a module.
    fn of(text: &str) -> Names {
        let file = syn::parse_file(text).expect("the library parses");
        let mut names = Names::default();
        names.visit_file(&file);
        names
    }
}

impl<'ast> Visit<'ast> for Names {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let public = !matches!(u.vis, syn::Visibility::Inherited);
        let mut paths = Vec::new();
        use_paths(&u.tree, &mut Vec::new(), &mut paths);
        self.uses.extend(paths.into_iter().map(|p| (public, p)));
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if !m.attrs.iter().any(is_cfg_test) {
            visit::visit_item_mod(self, m);
        }
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, p: &'ast syn::Path) {
        // One segment names a local item or a variable, not a module's.
        if p.segments.len() > 1 {
            self.paths
                .push(p.segments.iter().map(|s| s.ident.to_string()).collect());
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        macro_paths(m.tokens.clone(), &mut self.paths);
        visit::visit_macro(self, m);
    }
}

/// Whether an attribute is `#[cfg(test)]`.
fn is_cfg_test(a: &syn::Attribute) -> bool {
    a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
}

/// The paths a `use` tree names, each after `prefix`: `a::{b, c::{d, e as
/// f}}` gives `a::b`, `a::c::d` and `a::c::e`.
fn use_paths(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let with = |prefix: &[String], name: &syn::Ident| {
        let mut p = prefix.to_vec();
        if name != "self" {
            p.push(name.to_string());
        }
        p
    };
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_paths(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => out.push(with(prefix, &n.ident)),
        syn::UseTree::Rename(r) => out.push(with(prefix, &r.ident)),
        syn::UseTree::Glob(_) => out.push(prefix.clone()),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_paths(t, prefix, out);
            }
        }
    }
}

/// The `a::b::c` paths in a macro call's tokens (an `assert!` or a
/// `format!` argument), which `syn` leaves unparsed.
fn macro_paths(tokens: TokenStream, out: &mut Vec<Vec<String>>) {
    /// Ends the path being read.
    fn end(path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        if path.len() > 1 {
            out.push(path.clone());
        }
        path.clear();
    }
    let (mut path, mut colons) = (Vec::new(), 0);
    for t in tokens {
        match t {
            TokenTree::Ident(i) => {
                if colons != 2 {
                    end(&mut path, out);
                }
                path.push(i.to_string());
                colons = 0;
            }
            TokenTree::Punct(p) if p.as_char() == ':' && !path.is_empty() && colons < 2 => {
                colons += 1;
            }
            TokenTree::Group(g) => {
                end(&mut path, out);
                colons = 0;
                macro_paths(g.stream(), out);
            }
            TokenTree::Punct(_) | TokenTree::Literal(_) => {
                end(&mut path, out);
                colons = 0;
            }
        }
    }
    end(&mut path, out);
}

/// Every module of the library under `src/` and what it names (`main.rs`,
/// the binary's crate, is not one).
fn modules(src: &Path) -> BTreeMap<ModPath, Names> {
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
                out.insert(m, Names::of(&std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out
}

/// The crate-absolute form of `path` as written in module `m`, if it names
/// something of this crate.
fn absolute(modules: &BTreeMap<ModPath, Names>, m: &ModPath, path: &[String]) -> Option<ModPath> {
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
fn resolve(modules: &BTreeMap<ModPath, Names>, re: &Reexports, path: &[String]) -> Option<ModPath> {
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
fn graph(modules: &BTreeMap<ModPath, Names>) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
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
    for (m, names) in modules {
        let mut out = BTreeSet::new();
        let named = (absolute_uses(m).into_iter().map(|(_, p)| p))
            .chain(names.paths.iter().filter_map(|p| absolute(modules, m, p)));
        for p in named {
            // The module itself and its submodules are no dependency.
            out.extend(resolve(modules, &re, &p).filter(|r| !r.starts_with(m)));
        }
        edges.insert(m.clone(), out);
    }
    edges
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

/// What the graph counts: a sibling named directly, through the parent's
/// re-export, in code or in a macro call, and the parent's own items named
/// by a child; and what it does not: the parent naming its children, a
/// visibility path, comments, unit tests.
#[test]
fn edges_follow_reexports_and_skip_submodules() {
    let path = |s: &str| -> ModPath {
        s.split("::")
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    };
    let crate_of = |files: &[(&str, &str)]| -> BTreeMap<ModPath, Names> {
        (files.iter())
            .map(|(m, text)| (path(m), Names::of(text)))
            .collect()
    };
    let names = |edges: &BTreeMap<ModPath, BTreeSet<ModPath>>, m: &str| -> Vec<String> {
        edges[&path(m)].iter().map(name).collect()
    };
    let mut files = vec![
        ("", "mod a;\npub use a::Tool;\n"),
        (
            "a",
            "mod b;\nmod c;\nmod d;\npub use b::Tool;\npub use c::Helper;\n\
             pub struct Local;\nfn run() { c::helper(); }\n\
             #[cfg(test)]\nmod tests {\n    use crate::x::y;\n}\n",
        ),
        (
            "a::b",
            "use crate::Tool as T;\nuse super::Local;\n// use super::c::x;\n",
        ),
        (
            "a::c",
            "pub(super) use super::Tool;\npub(in crate::a) fn f() { super::b::go(); }\n",
        ),
        ("a::d", "fn g() { assert!(super::c::f() == 1); }\n"),
    ];
    let edges = graph(&crate_of(&files));
    assert_eq!(names(&edges, ""), Vec::<String>::new());
    assert_eq!(names(&edges, "a"), Vec::<String>::new());
    assert_eq!(names(&edges, "a::b"), ["a"]);
    assert_eq!(names(&edges, "a::c"), ["a::b"]);
    assert_eq!(names(&edges, "a::d"), ["a::c"]);
    assert_eq!(cycle(&edges), None);
    files[2].1 = "use super::Helper;\n";
    let edges = graph(&crate_of(&files));
    assert_eq!(names(&edges, "a::b"), ["a::c"]);
    let found = cycle(&edges).map(|c| c.iter().map(name).collect::<Vec<_>>());
    assert_eq!(
        found,
        Some(vec!["a::b".into(), "a::c".into(), "a::b".into()])
    );
}
