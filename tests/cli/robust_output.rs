//! Outputs written only when a command succeeds, and never through a
//! replaced FIFO, device, symlink or mode (SPEC §6); JSON input checked
//! before use (SPEC §2.6); sizes refused by number; `--report KIND[=FILE]`.

use crate::cli::{psum, text};
use serde_json::{json, Value};
use std::fs;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Output;

/// One matmul group read out to DRAM: compiles and verifies.
const GOOD: &str = "arch trn1

psum acc [128, 2048]
sbuf w [128, 256] bf16
sbuf x [128, 1024] bf16
sbuf y [128, 2048]
dram out [128, 2048]

block main {
  matmul acc <- w, x
  act y <- acc
  dma out <- y
}
";

/// A kept `flags=none` on a group head: compile refuses it (§4.3, §5.3).
const FAILS: &str = "arch trn1

psum acc [128, 2048]
sbuf w [128, 256] bf16
sbuf x [128, 1024] bf16
sbuf y [128, 2048]

block main {
  matmul acc <- w, x flags=none
  act y <- acc
}
";

/// The first line of compile's refusal of FAILS, after the file's path.
const REFUSAL: &str = ":9:3: error: %0: flags=none: \
                       cluster head has neither start nor an init to accumulate onto";

/// A fresh scratch directory holding `in.psum` (GOOD) and `bad.psum` (FAILS).
fn scratch(name: &str) -> PathBuf {
    let d = crate::cli::scratch(&format!("robust-{name}"));
    fs::write(d.join("in.psum"), GOOD).unwrap();
    fs::write(d.join("bad.psum"), FAILS).unwrap();
    d
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn path(d: &Path, name: &str) -> String {
    d.join(name).to_str().unwrap().to_string()
}

fn first_line(o: &Output) -> String {
    text(&o.stderr).lines().next().unwrap_or("").to_string()
}

/// What `psum ARGS` prints on stdout when it succeeds.
fn stdout_of(args: &[&str]) -> String {
    let o = psum(args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    text(&o.stdout)
}

#[test]
fn a_failing_compile_writes_nothing() {
    let d = scratch("verify");
    let bad = path(&d, "bad.psum");
    fs::write(d.join("out.psum"), "previous\n").unwrap();
    let before = listing(&d);
    for args in [
        vec!["-o", "out.psum"],
        vec!["-o", "new.psum"],
        vec!["--report", "json", "-o", "out.psum"],
        vec!["--report", "json=r.json", "-o", "new.psum"],
        vec!["--report", "html=r.html", "-o", "new.psum"],
        vec!["--report", "html=out.psum"],
    ] {
        let args: Vec<String> = args
            .iter()
            .map(|a| match *a {
                "out.psum" | "new.psum" => path(&d, a),
                _ => match a.split_once('=') {
                    Some((kind, file)) => format!("{kind}={}", path(&d, file)),
                    None => a.to_string(),
                },
            })
            .collect();
        let mut all = vec!["compile", bad.as_str()];
        all.extend(args.iter().map(String::as_str));
        let o = psum(&all);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        assert_eq!(first_line(&o), format!("{bad}{REFUSAL}"), "{args:?}");
        assert_eq!(text(&o.stdout), "", "{args:?}");
        assert_eq!(listing(&d), before, "{args:?}");
        assert_eq!(
            fs::read_to_string(d.join("out.psum")).unwrap(),
            "previous\n"
        );
    }
}

#[test]
fn a_successful_compile_writes_the_program_and_the_report_together() {
    let d = scratch("report");
    let input = path(&d, "in.psum");
    let program = stdout_of(&["compile", &input]);
    let report = format!("json={}", path(&d, "r.json"));
    let o = psum(&[
        "compile",
        &input,
        "--report",
        &report,
        "-o",
        &path(&d, "o.psum"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "");
    assert_eq!(fs::read_to_string(d.join("o.psum")).unwrap(), program);
    let v: Value = serde_json::from_str(&fs::read_to_string(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(
        v["verify"],
        json!({"checker": "ok", "simulator": "ok", "statics": "ok"})
    );
    // Without -o the program goes to stdout beside the report file.
    let o = psum(&["compile", &input, "--report", &report]);
    assert_eq!(text(&o.stdout), program);
    assert_eq!(
        listing(&d),
        ["bad.psum", "in.psum", "o.psum", "r.json"].map(String::from)
    );
}

#[test]
fn report_takes_one_value_and_the_input_stays_the_input() {
    let d = scratch("onevalue");
    let input = path(&d, "in.psum");
    for args in [
        &["compile", "--report", "json", &input][..],
        &["compile", "-v", "--report", "json", &input],
        &["alloc", "--report", "json", &input],
        &["bound", "--report", "json", &input],
    ] {
        let o = psum(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v.is_object(), "{args:?}");
    }
    let html = path(&d, "r.html");
    for (args, says) in [
        (
            &["compile", &input, "--report", "html", &html][..],
            "error: --report html needs its file: write --report html=FILE",
        ),
        (
            &["compile", "--report", "html", &html, &input],
            "error: --report html needs its file: write --report html=FILE",
        ),
        (
            &["alloc", &input, "--report", &format!("html={html}")],
            "error: --report html is compile's; this command writes --report json[=FILE]",
        ),
    ] {
        let o = psum(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(text(&o.stderr).lines().next(), Some(says), "{args:?}");
    }
    assert_eq!(listing(&d), ["bad.psum", "in.psum"].map(String::from));
}

/// Runs `psum ARGS` with `-o` (or a report) naming the FIFO `fifo`, read
/// on a thread; returns what the reader got.
fn through_fifo(fifo: &Path, args: &[&str]) -> String {
    let reader = {
        let fifo = fifo.to_path_buf();
        std::thread::spawn(move || fs::read_to_string(fifo).unwrap())
    };
    let o = psum(args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    let got = reader.join().unwrap();
    assert!(fs::symlink_metadata(fifo).unwrap().file_type().is_fifo());
    got
}

#[test]
fn a_fifo_is_written_through() {
    let d = scratch("fifo");
    let fifo = d.join("out.psum");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let (input, f) = (path(&d, "in.psum"), fifo.to_str().unwrap());
    for args in [
        &["fmt", &input][..],
        &["compile", &input],
        &["alloc", &input],
        &["gen", "gemm", "256", "512", "256"],
        &["export", "--minimalloc", &input],
    ] {
        let mut with_o = args.to_vec();
        with_o.extend(["-o", f]);
        assert_eq!(through_fifo(&fifo, &with_o), stdout_of(args), "{args:?}");
    }
    let page = through_fifo(
        &fifo,
        &["compile", &input, "--report", &format!("html={f}")],
    );
    assert!(page.starts_with("<!DOCTYPE html>"), "{}", &page[..40]);
    assert_eq!(
        listing(&d),
        ["bad.psum", "in.psum", "out.psum"].map(String::from)
    );
}

#[test]
fn a_character_device_is_written_through() {
    let d = scratch("chardev");
    let dev = d.join("null.svg");
    let made = std::process::Command::new("mknod")
        .args([dev.to_str().unwrap(), "c", "1", "3"])
        .stderr(std::process::Stdio::null())
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("skip: mknod is not allowed here");
        return;
    }
    let (input, f) = (path(&d, "in.psum"), dev.to_str().unwrap());
    for args in [
        &["compile", &input, "-o", f][..],
        &["fmt", &input, "--emit", "json", "-o", f],
        &["viz", &input, "-o", f],
        &["compile", &input, "--report", &format!("html={f}")],
    ] {
        let o = psum(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
        let kind = fs::symlink_metadata(&dev).unwrap().file_type();
        assert!(kind.is_char_device(), "{args:?}");
    }
    assert_eq!(
        listing(&d),
        ["bad.psum", "in.psum", "null.svg"].map(String::from)
    );
}

#[test]
fn a_symlink_is_followed_and_stays_a_link() {
    let d = scratch("symlink");
    fs::create_dir(d.join("real")).unwrap();
    fs::write(d.join("real/out.psum"), "previous\n").unwrap();
    std::os::unix::fs::symlink("real/out.psum", d.join("link.psum")).unwrap();
    let input = path(&d, "in.psum");
    let o = psum(&["fmt", &input, "-o", &path(&d, "link.psum")]);
    assert_eq!(o.status.code(), Some(0));
    let link = fs::symlink_metadata(d.join("link.psum")).unwrap();
    assert!(link.file_type().is_symlink());
    assert_eq!(fs::read_to_string(d.join("real/out.psum")).unwrap(), GOOD);
    assert_eq!(listing(&d.join("real")), ["out.psum"].map(String::from));
    assert_eq!(
        listing(&d),
        ["bad.psum", "in.psum", "link.psum", "real"].map(String::from)
    );
}

#[test]
fn a_replaced_file_keeps_its_mode() {
    let d = scratch("mode");
    let out = d.join("out.psum");
    fs::write(&out, "previous\n").unwrap();
    fs::set_permissions(&out, fs::Permissions::from_mode(0o600)).unwrap();
    let input = path(&d, "in.psum");
    let o = psum(&["compile", &input, "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let meta = fs::metadata(&out).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(
        fs::read_to_string(&out).unwrap(),
        stdout_of(&["compile", &input])
    );
    assert_eq!(
        listing(&d),
        ["bad.psum", "in.psum", "out.psum"].map(String::from)
    );
}

/// A whole-tensor access of tensor `t` with `p` partitions and `b` bytes.
fn whole(t: u32, p: i64, b: i64) -> Value {
    let c = |v: i64| json!({"terms": [], "constant": v});
    json!({"tensor": t, "p0": c(0), "p1": c(p), "b0": c(0), "b1": c(b)})
}

/// A JSON module: a PSUM tensor `acc` and an SBUF tensor `y`, a memset of
/// acc (inst 0) and a copy of it to y (inst 1), the given loops and vars,
/// and one block `main` with `body`.
fn module(loops: Value, vars: Value, body: Value) -> Value {
    json!({
        "arch": "trn1",
        "tensors": [
            {"name": "acc", "mem": "psum", "partitions": 128, "bytes": 2048, "dtype": "f32"},
            {"name": "y", "mem": "sbuf", "partitions": 128, "bytes": 2048, "dtype": "f32"}
        ],
        "vars": vars,
        "insts": [
            {"kind": {"memset": {"dst": whole(0, 128, 2048), "value": 0.0}}},
            {"kind": {"copy": {"dst": whole(1, 128, 2048), "src": whole(0, 128, 2048)}}}
        ],
        "loops": loops,
        "blocks": [{"name": "main", "body": body}]
    })
}

#[test]
fn malformed_json_is_refused_before_anything_uses_it() {
    let d = scratch("json");
    let good = module(json!([]), json!([]), json!([{"inst": 0}, {"inst": 1}]));
    let mut bad_tensor = good.clone();
    bad_tensor["insts"][1]["kind"]["copy"]["src"]["tensor"] = json!(999);
    let mut bad_var = good.clone();
    bad_var["insts"][0]["kind"]["memset"]["dst"]["p0"]["terms"] = json!([[7, 1]]);
    let cycle = module(
        json!([{"var": 0, "lo": 0, "hi": 2, "body": [{"inst": 0}, {"loop": 0}]}]),
        json!([{"name": "k"}]),
        json!([{"loop": 0}, {"inst": 1}]),
    );
    // 150 one-trip loops, each holding the next; the innermost the memset.
    let depth = 150;
    let deep = module(
        Value::Array(
            (0..depth)
                .map(|l| {
                    let body = if l + 1 < depth {
                        json!([{"loop": l + 1}])
                    } else {
                        json!([{"inst": 0}])
                    };
                    json!({"var": l, "lo": 0, "hi": 1, "body": body})
                })
                .collect(),
        ),
        Value::Array(
            (0..depth)
                .map(|l| json!({"name": format!("k{l}")}))
                .collect(),
        ),
        json!([{"loop": 0}, {"inst": 1}]),
    );
    let cases = [
        (bad_tensor, "malformed module: tensor t999 is out of range"),
        (
            module(json!([]), json!([]), json!([{"inst": 0}, {"inst": 999}])),
            "malformed module: instruction %999 is out of range or placed twice",
        ),
        (
            module(
                json!([]),
                json!([]),
                json!([{"inst": 0}, {"loop": 5}, {"inst": 1}]),
            ),
            "malformed module: loop5 is out of range or placed twice",
        ),
        (
            bad_var,
            "malformed module: bound p0 uses v7, which no enclosing loop binds",
        ),
        (
            cycle,
            "malformed module: loop0 is out of range or placed twice",
        ),
        (deep, "malformed module: loops nested deeper than 100"),
        (
            module(json!([]), json!([]), json!([{"inst": 1}])),
            "malformed module: instruction %0 is never placed",
        ),
        (
            module(
                json!([]),
                json!([{"name": "k"}]),
                json!([{"inst": 0}, {"inst": 1}]),
            ),
            "malformed module: loop variable v0 is bound by no loop",
        ),
    ];
    fs::write(d.join("good.json"), good.to_string()).unwrap();
    assert_eq!(
        stdout_of(&["fmt", &path(&d, "good.json")]),
        "arch trn1\n\npsum acc [128, 2048]\nsbuf y [128, 2048]\n\nblock main {\n  memset acc = 0\n  copy y <- acc\n}\n"
    );
    for (m, says) in cases {
        let file = path(&d, "m.json");
        fs::write(&file, m.to_string()).unwrap();
        let before = listing(&d);
        for args in [
            vec!["fmt", &file],
            vec!["fmt", &file, "-o", "out.psum"],
            vec!["fmt", &file, "--emit", "json", "-o", "out.psum"],
            vec!["compile", &file, "-o", "out.psum"],
            vec!["lint", &file],
        ] {
            let out = path(&d, "out.psum");
            let args: Vec<&str> = (args.iter())
                .map(|a| if *a == "out.psum" { out.as_str() } else { a })
                .collect();
            let o = psum(&args);
            assert_eq!(o.status.code(), Some(1), "{args:?}");
            assert_eq!(
                text(&o.stderr),
                format!("{file}: error: {says}\n"),
                "{args:?}"
            );
            assert_eq!(text(&o.stdout), "", "{args:?}");
            assert_eq!(listing(&d), before, "{args:?}");
        }
    }
}

#[test]
fn gen_random_refuses_more_tensors_than_it_can_make() {
    let o = psum(&["gen", "random", "--tensors", "4294967295"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stderr),
        "error: tensors = 4294967295 is out of range 1..=1000000 (a program needs a PSUM \
         tensor, and is built in memory, up to 2.5 KB a tensor)\n"
    );
    assert_eq!(text(&o.stdout), "");
}

#[test]
fn import_refuses_an_offset_past_every_bank() {
    let d = scratch("import");
    let input = d.join("two.psum");
    fs::write(
        &input,
        "arch trn1\n\npsum a [128, 2048]\npsum b [128, 2048]\nsbuf w [128, 256] bf16\n\
         sbuf x [128, 1024] bf16\nsbuf y [128, 2048]\n\nblock main {\n  matmul a <- w, x\n  \
         matmul b <- w, x\n  act y <- a, b\n}\n",
    )
    .unwrap();
    fs::write(
        d.join("sol.csv"),
        "id,offset\na,18446744073709551615\nb,1\n",
    )
    .unwrap();
    let o = psum(&[
        "import",
        "--minimalloc",
        input.to_str().unwrap(),
        &path(&d, "sol.csv"),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        text(&o.stdout),
        "a: extends past bank 7\n2 nodes: every offset respects the bank alignment\nnot a valid PSUM allocation\n"
    );
}
