//! The bank timeline from the command line (SPEC §6, §8): `psum viz` to SVG
//! or HTML by extension, and `psum compile --report html=FILE`.

use crate::cli::{psum, scratch, stderr, stdout};

fn read(p: &std::path::Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Parses an SVG or HTML document as XML; the names of every `<title>`.
fn titles(doc: &str) -> Vec<String> {
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let d = roxmltree::Document::parse_with_options(doc, opts).unwrap();
    d.descendants()
        .filter(|n| {
            n.has_tag_name("title") || n.has_tag_name(("http://www.w3.org/2000/svg", "title"))
        })
        .filter_map(|n| n.text())
        .map(|t| t.lines().next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn viz_writes_svg_and_html_by_extension() {
    let d = scratch("ext");
    let (svg, html) = (d.join("t.svg"), d.join("t.html"));
    for out in [&svg, &html] {
        let o = psum(&[
            "viz",
            "examples/02_one_spill.psum",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(o.stdout.is_empty());
    }
    let (svg, html) = (read(&svg), read(&html));
    assert!(svg.starts_with("<svg "));
    assert!(html.starts_with("<!DOCTYPE html>"));
    for doc in [&svg, &html] {
        let t = titles(doc);
        for line in [
            "t0 (spilled: drawn up to its save)",
            "t0_ReloadTensorCopy1 (reload of t0)",
            "save t0 to t0_SpillTensorCopy0 at point 1",
        ] {
            assert!(t.iter().any(|l| l == line), "{line} in {t:?}");
        }
    }
}

#[test]
fn viz_without_output_writes_svg_to_stdout_with_clusters() {
    let o = psum(&["viz", "examples/03_column_tiles.psum"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert!(out.contains(">03_column_tiles.psum</text>"));
    let t = titles(&out);
    let clusters: Vec<&String> = t.iter().filter(|l| l.starts_with("cluster ")).collect();
    assert_eq!(
        clusters,
        [
            "cluster 0: 1 group, 2 matmuls, partitions 0-63",
            "cluster 1: 1 group, 2 matmuls, partitions 64-127"
        ]
    );
    assert!(t.iter().any(|l| l == "acc"));
}

#[test]
fn viz_rejects_other_extensions_and_bad_input() {
    let d = scratch("bad");
    let png = d.join("t.png");
    let o = psum(&[
        "viz",
        "examples/04_gemm_k_loop.psum",
        "-o",
        png.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!png.exists());
    let o = psum(&["viz", "examples/no_such_file.psum"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn compile_report_html_writes_the_page_and_the_program() {
    let d = scratch("compile");
    let page = d.join("c.html");
    let report = format!("html={}", page.to_str().unwrap());
    let o = psum(&[
        "compile",
        "examples/04_gemm_k_loop.psum",
        "--report",
        &report,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let program = stdout(&o);
    assert!(program.starts_with("arch trn1\n"), "{program}");
    let html = read(&page);
    let t = titles(&html);
    assert_eq!(t[0], "psum: 04_gemm_k_loop.psum");
    assert!(t.iter().any(|l| l == "acc"));
    assert!(t
        .iter()
        .any(|l| l == "cluster 0: 1 group, 4 matmuls, partitions 0-127"));
    let v = psum(&[
        "viz",
        "examples/04_gemm_k_loop.psum",
        "-o",
        d.join("v.html").to_str().unwrap(),
    ]);
    assert_eq!(v.status.code(), Some(0));
    assert_eq!(read(&d.join("v.html")), html);
}

#[test]
fn compile_report_json_is_unchanged_and_bad_kinds_are_usage_errors() {
    let o = psum(&[
        "compile",
        "examples/04_gemm_k_loop.psum",
        "--report",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["arch"], "trn1");
    for (bad, says) in [
        (
            &["--report", "html"][..],
            "--report html needs its file: write --report html=FILE",
        ),
        (
            &["--report", "html", "x.html"],
            "--report html needs its file: write --report html=FILE",
        ),
        (
            &["--report", "json", "x.html"],
            "unexpected argument 'x.html'",
        ),
        (
            &["--report", "xml"],
            "`xml` is not a report (json[=FILE] or html=FILE)",
        ),
        (&["--report", "html="], "`html=` names no file"),
    ] {
        let mut args = vec!["compile", "examples/04_gemm_k_loop.psum"];
        args.extend_from_slice(bad);
        let o = psum(&args);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{bad:?}: {err}");
    }
}
