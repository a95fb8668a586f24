//! Malformed input gives errors, never panics (SPEC §2.6): empty input,
//! binary data, 10 MB of random tokens, a large valid program, deep
//! nesting, huge numbers, every truncation of every example.

use psum::gen::random::Rng;
use psum::source::load;

fn message(bytes: &[u8]) -> (Option<(usize, usize)>, String) {
    let d = load("t.psum", bytes).expect_err("input should be rejected");
    (d.position, d.message)
}

#[test]
fn empty_input() {
    assert_eq!(
        message(b""),
        (
            Some((1, 1)),
            "expected 'arch', found end of input".to_string()
        )
    );
    assert_eq!(
        message(b"# only a comment\n\n"),
        (
            Some((3, 1)),
            "expected 'arch', found end of input".to_string()
        )
    );
    assert_eq!(
        message(b"arch trn1\n"),
        (
            Some((2, 1)),
            "expected a declaration ('psum', 'sbuf', 'dram') or 'block', found end of input"
                .to_string()
        )
    );
}

#[test]
fn binary_input() {
    let mut rng = Rng::new(7);
    let bytes: Vec<u8> = (0..65536).map(|_| rng.next_u64() as u8).collect();
    let (_, msg) = message(&bytes);
    assert!(
        msg.starts_with("input is not UTF-8 text (invalid byte 0x"),
        "{msg}"
    );
    assert_eq!(
        message(b"arch trn1\n\x00\x01"),
        (Some((2, 1)), "unexpected character '\\0'".to_string())
    );
    assert_eq!(
        message(b"arch trn1\npsum a\xff"),
        (
            Some((2, 7)),
            "input is not UTF-8 text (invalid byte 0xff)".to_string()
        )
    );
}

#[test]
fn ten_megabytes_of_random_tokens() {
    const TOKENS: [&str; 34] = [
        "arch",
        "trn1",
        "psum",
        "sbuf",
        "dram",
        "block",
        "loop",
        "matmul",
        "copy",
        "memset",
        "act",
        "dma",
        "acc",
        "k",
        "0",
        "128",
        "2048",
        "-1",
        "1.5",
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        "=",
        "<-",
        "..",
        "+",
        "-",
        "*",
        "|",
        "%a:",
        "tile=128x64",
    ];
    let mut rng = Rng::new(42);
    let mut src = String::with_capacity(10 << 20);
    while src.len() < 10 << 20 {
        src.push_str(TOKENS[rng.index(TOKENS.len())]);
        src.push(if rng.chance(1, 8) { '\n' } else { ' ' });
    }
    assert!(load("t.psum", src.as_bytes()).is_err());
    // Also behind a valid header, so the parser gets past the first tokens.
    let valid = "arch trn1\npsum acc [128, 2048]\nblock main {\n  memset acc = 0\n";
    let deep = format!("{valid}{src}");
    assert!(load("t.psum", deep.as_bytes()).is_err());
}

#[test]
fn two_megabytes_of_a_valid_program() {
    let mut src =
        String::from("arch trn1\npsum acc [128, 2048]\nsbuf y [128, 2048]\nblock main {\n");
    let line =
        "  loop k 0..4 {\n    memset acc[0:128, k*512:k*512+512] = -1.5\n  }\n  act y <- acc\n";
    while src.len() < 2 << 20 {
        src.push_str(line);
    }
    src.push_str("}\n");
    let loaded = load("t.psum", src.as_bytes()).unwrap();
    assert_eq!(loaded.module.loops.len(), loaded.module.insts.len() / 2);
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let mut src = String::from("arch trn1\npsum acc [128, 2048]\nblock main {\n");
    for i in 0..100_000 {
        src.push_str(&format!("loop v{i} 0..1 {{\n"));
    }
    assert_eq!(
        message(src.as_bytes()),
        (Some((104, 1)), "loops nested deeper than 100".to_string())
    );
}

#[test]
fn huge_numbers_are_errors() {
    let src = "arch trn1\npsum a [99999999999, 4]\nblock main {\n}\n";
    assert_eq!(
        message(src.as_bytes()),
        (
            Some((2, 9)),
            "partition count 99999999999 is out of range".to_string()
        )
    );
    let src = "arch trn1\npsum a [1, 99999999999999999999999]\nblock main {\n}\n";
    assert_eq!(
        message(src.as_bytes()),
        (
            Some((2, 12)),
            "byte count must be a non-negative integer, got 99999999999999999999999".to_string()
        )
    );
    let src = "arch trn1\npsum a [1, 4]\nblock main {\n  loop k 0..2 {\n    memset a[0:1, k*9223372036854775807+9223372036854775807 : 4] = 0\n  }\n}\n";
    assert_eq!(
        message(src.as_bytes()),
        (
            Some((5, 19)),
            "constant 9223372036854775807 is out of range (magnitude at most 4294967296)"
                .to_string()
        )
    );
    let src = src.replace("+9223372036854775807", "+k*9223372036854775807");
    assert_eq!(
        message(src.as_bytes()),
        (Some((5, 19)), "integer overflow in expression".to_string())
    );
    let src = "arch trn1\npsum a [1, 4]\nblock main {\n  loop k 0..99999999 {\n  }\n}\n";
    assert_eq!(
        message(src.as_bytes()),
        (
            Some((4, 10)),
            "loop bound 99999999 is out of range (magnitude at most 16777216)".to_string()
        )
    );
}

#[test]
fn every_truncation_of_every_example_is_handled() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "psum") {
            continue; // examples/nki/ holds kernels
        }
        let src = std::fs::read(path).unwrap();
        let mut ok = 0;
        for cut in 0..src.len() {
            if load("t.psum", &src[..cut]).is_ok() {
                ok += 1;
            }
        }
        // Only cuts inside the final newline/comment leave a valid program.
        assert!(ok <= 1, "{ok} truncations parsed");
    }
}
