//! Passes that take an allocated program refuse, at the line, what no
//! allocation produces; an unused PSUM tensor compiles, allocates and
//! verifies under every allocator; validation refuses a read of unwritten
//! PSUM cells at the read; `verify` refuses programs above its limits
//! before running (SPEC §2.4, §3.3, §4.3, §5.3, §5.4).

use crate::cli::{psum, stderr, stdout};
use std::process::Output;

/// Writes `text` to a fresh file `name` of a scratch directory of its own
/// and returns its path.
fn file(test: &str, name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("psum-robust-{}-{test}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// The first line of stderr, after checking the exit code.
fn refusal(o: &Output) -> String {
    assert_eq!(o.status.code(), Some(1), "{}", stderr(o));
    stderr(o).lines().next().unwrap_or_default().to_string()
}

const OPERANDS: &str = "sbuf w [128, 256] bf16\nsbuf x [128, 1024] bf16\nsbuf y [128, 2048]\n";

/// An allocated program: `acc` at `BANK`, one matmul with `FLAGS`.
fn allocated(bank: &str, flags: &str) -> String {
    format!(
        "arch trn1\n\npsum acc [128, 2048]{bank}\n{OPERANDS}dram out [128, 2048]\n\nblock main {{\n  \
         matmul acc <- w, x{flags}\n  act y <- acc\n  dma out <- y\n}}\n"
    )
}

#[test]
fn unused_psum_tensors_compile_and_verify_under_every_allocator() {
    let programs = [
        (
            "spare",
            format!(
                "arch trn1\n\npsum acc [128, 2048]\npsum spare [128, 2048]\n{OPERANDS}\n\
                 block main {{\n  matmul acc <- w, x\n  copy y <- acc\n}}\n"
            ),
        ),
        (
            "banked",
            "arch trn1\n\npsum acc_b1 [128, 2048] bank=1\n\nblock main {\n}\n".to_string(),
        ),
    ];
    for (name, text) in programs {
        let input = file("unused", &format!("{name}.psum"), &text);
        for allocator in ["briggs", "briggs-reference", "mincost", "exact"] {
            for cmd in ["alloc", "compile"] {
                let out = file("unused", &format!("{name}-{allocator}-{cmd}.psum"), "");
                let o = psum(&[cmd, &input, "--allocator", allocator, "-o", &out]);
                assert_eq!(
                    o.status.code(),
                    Some(0),
                    "{cmd} {allocator}: {}",
                    stderr(&o)
                );
                let unused = if name == "spare" { "spare" } else { "acc_b1" };
                let warning = format!("unused PSUM tensor {unused}");
                assert!(stderr(&o).contains(&warning), "{}", stderr(&o));
                let result = std::fs::read_to_string(&out).unwrap();
                // The unused tensor gets no bank (SPEC §3.3).
                let decl = format!("psum {unused} [128, 2048]\n");
                assert!(result.contains(&decl), "{result}");
                let v = psum(&["verify", &input, &out]);
                assert_eq!(
                    (v.status.code(), stdout(&v)),
                    (Some(0), "ok\n".to_string()),
                    "{cmd} {allocator}: {}",
                    stderr(&v)
                );
            }
        }
    }
}

#[test]
fn kept_unused_tiles_keep_a_bank_that_fits() {
    let text = |spare: &str| {
        format!(
            "arch trn1\n\npsum acc [128, 2048] bank=0\npsum spare [128, 2048]{spare}\n{OPERANDS}\n\
             block main {{\n  matmul acc <- w, x\n  copy y <- acc\n}}\n"
        )
    };
    let ok = file("kept", "ok.psum", &text(""));
    let o = psum(&["compile", "--keep-banks", &ok]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ok = file("kept", "ok3.psum", &text(" bank=3"));
    let o = psum(&["compile", "--keep-banks", &ok]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for bank in ["8", "4294967295"] {
        let bad = file("kept", "bad.psum", &text(&format!(" bank={bank}")));
        assert_eq!(
            refusal(&psum(&["compile", "--keep-banks", &bad])),
            format!(
                "error: PSUM tile spare at bank {bank} needs 1 banks, past the 8 banks of PSUM"
            )
        );
    }
}

#[test]
fn legalize_refuses_what_no_allocation_produces() {
    let cases = [
        (
            allocated(" bank=8192", ""),
            "3:6: error: PSUM tensor acc at bank 8192 needs 1 bank(s) but trn1 has 8",
        ),
        (
            allocated("", ""),
            "3:6: error: PSUM tensor acc has no bank",
        ),
        (
            allocated(" bank=0", " flags=none"),
            "10:3: error: %0: flags=none: cluster head has neither start nor an init to accumulate onto",
        ),
        (
            allocated(" bank=0", " flags=start|stop zr=4294967295"),
            "10:3: error: %0: zr=4294967295 but §4.3.5 gives zr=2 (cluster head, quadrant span 4)",
        ),
        (
            allocated(" bank=0", " flags=start"),
            "10:3: error: %0: flags=start: the tail of its accumulation cluster lacks stop",
        ),
        (
            allocated(" bank=0", " flags=acc|stop zr=2"),
            "10:3: error: %0: flags=acc|stop: cluster head has neither start nor an init to accumulate onto",
        ),
        (
            "arch trn1\n\npsum acc [128, 4096] bank=1\n".to_string()
                + "sbuf w [128, 256] bf16\nsbuf x [128, 1024] bf16\nsbuf y [128, 2048]\n\nblock main {\n  \
                   matmul acc[0:128, 0:2048] <- w, x\n  act y <- acc[0:128, 0:2048]\n}\n",
            "3:6: error: PSUM tensor acc occupies 2 banks from bank 1, which is not a multiple of its alignment 2",
        ),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let input = file("legalize", &format!("{i}.psum"), text);
        let out = file("legalize", &format!("{i}-out.psum"), "before");
        let o = psum(&["legalize", &input, "-o", &out]);
        assert_eq!(refusal(&o), format!("{input}:{want}"));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "before");
    }
    // The same explicit cluster, legal, is kept and its zr computed.
    let input = file(
        "legalize",
        "kept.psum",
        &allocated(" bank=0", " flags=start|stop"),
    );
    let o = psum(&["legalize", &input]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("  %0: matmul acc <- w, x flags=start|stop zr=2\n"),
        "{}",
        stdout(&o)
    );
}

/// `c`, written in part by matmuls, then read.
fn partial(body: &str) -> String {
    format!(
        "arch trn1\n\npsum c [128, 4096]\nsbuf w [128, 256] bf16\nsbuf x [128, 4096] bf16\n\
         sbuf z [128, 2048]\n\nblock main {{\n{body}}}\n"
    )
}

#[test]
fn reads_of_unwritten_psum_cells_are_refused_at_the_read() {
    let refused = [
        // The other half only.
        (
            "  matmul c[0:128, 2048:4096] <- w, x[0:128, 3072:4096]\n  \
             act z <- c[0:128, 0:2048], c[0:128, 2048:4096]\n",
            "10:12",
        ),
        // Half the partitions of the half that is read.
        (
            "  matmul c[0:64, 2048:4096] <- w[0:128, 0:128], x[0:128, 3072:4096]\n  \
             act z <- c[0:128, 2048:4096]\n",
            "10:12",
        ),
        // Written only in a later iteration.
        (
            "  loop k 0..2 {\n    matmul c[0:128, k*2048:k*2048+2048] <- w, x[0:128, 3072:4096]\n    \
             act z <- c[0:128, 2048:4096]\n  }\n",
            "11:14",
        ),
        // Read at the top of the body before the first write.
        (
            "  loop k 0..2 {\n    act z <- c[0:128, 0:2048]\n    \
             matmul c[0:128, 0:2048] <- w, x[0:128, 3072:4096]\n  }\n",
            "10:14",
        ),
    ];
    for (i, (body, at)) in refused.iter().enumerate() {
        let input = file("reads", &format!("r{i}.psum"), &partial(body));
        for cmd in ["alloc", "legalize", "compile"] {
            assert_eq!(
                refusal(&psum(&[cmd, &input])),
                format!("{input}:{at}: error: read of PSUM tensor c before any write"),
                "{cmd}"
            );
        }
    }
    let accepted = [
        // Each iteration reads what the one before wrote.
        "  matmul c[0:128, 0:2048] <- w, x[0:128, 3072:4096]\n  loop k 1..2 {\n    \
         act z <- c[0:128, k*2048-2048:k*2048]\n    \
         matmul c[0:128, k*2048:k*2048+2048] <- w, x[0:128, 3072:4096]\n  }\n  \
         act z <- c[0:128, 2048:4096]\n",
        // Both halves written by one loop, then the whole read.
        "  loop k 0..2 {\n    matmul c[0:128, k*2048:k*2048+2048] <- w, x[0:128, 3072:4096]\n  }\n  \
         act z <- c[0:128, 0:2048], c[0:128, 2048:4096]\n",
    ];
    for (i, body) in accepted.iter().enumerate() {
        let input = file("reads", &format!("a{i}.psum"), &partial(body));
        let o = psum(&["compile", &input]);
        assert_eq!(o.status.code(), Some(0), "{body}: {}", stderr(&o));
    }
}

#[test]
fn verify_refuses_above_its_limits_before_running() {
    let looped = |trips: &str| {
        format!(
            "arch trn1\n\npsum acc [128, 2048]\n{OPERANDS}dram out [128, 2048]\n\nblock main {{\n  \
             matmul acc <- w, x\n  act y <- acc\n  loop i 0..4 {{\n    loop q 0..{trips} {{\n      \
             dma out <- y\n    }}\n  }}\n}}\n"
        )
    };
    let input = file("limits", "huge.psum", &looped("16777216"));
    let result = file("limits", "huge-out.psum", "");
    let o = psum(&["alloc", &input, "-o", &result]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let compiled = psum(&["compile", &input]);
    let want =
        "error: unrolling would produce 67108866 instructions, more than the limit of 10000000";
    assert_eq!(refusal(&compiled), format!("{input}: {want}"));
    assert_eq!(
        refusal(&psum(&["verify", &input, &result])),
        format!("{input}: {want}")
    );

    // Stored: 278,528 elements of the original, 2,310,144 of the result
    // (its PSUM tensor in the 8 × 128 × 2048 cells of physical PSUM); run,
    // each: 128·128·512 multiply-adds, 128·512 for the act, 12 × 128·512
    // for the DMAs.
    let input = file("limits", "small.psum", &looped("3"));
    let result = file("limits", "small-out.psum", "");
    assert_eq!(
        psum(&["alloc", &input, "-o", &result]).status.code(),
        Some(0)
    );
    let o = psum(&["verify", "--exact", &input, &result]);
    assert_eq!((o.status.code(), stdout(&o)), (Some(0), "ok\n".to_string()));
    let o = psum(&[
        "verify",
        "--exact",
        "--exact-limit",
        "1000",
        &input,
        &result,
    ]);
    assert_eq!(
        refusal(&o),
        "error: the exact simulator would take 21069824 element operations (multiply-adds, \
         element moves and stored elements of both programs), more than the limit of 1000 \
         (raise it with --exact-limit N)"
    );
    let o = psum(&[
        "verify",
        "--exact",
        "--exact-limit",
        "21069824",
        &input,
        &result,
    ]);
    assert_eq!((o.status.code(), stdout(&o)), (Some(0), "ok\n".to_string()));

    let big = format!(
        "arch trn1\n\npsum acc [128, 2048]\n{OPERANDS}dram big [128, 4000000000] bf16\n\nblock main {{\n  \
         dma x <- big[0:128, 0:1024]\n  matmul acc <- w, x\n  copy y <- acc\n  \
         dma big[0:128, 0:1024] <- y\n}}\n"
    );
    let input = file("limits", "big.psum", &big);
    let result = file("limits", "big-out.psum", "");
    let o = psum(&["compile", &input, "-o", &result]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = psum(&["verify", &input, &result]);
    assert_eq!((o.status.code(), stdout(&o)), (Some(0), "ok\n".to_string()));
    assert_eq!(
        refusal(&psum(&["verify", "--exact", &input, &result])),
        "error: the exact simulator would store 512002457600 elements of the two programs' \
         tensors, more than the limit of 268435456"
    );
    let help = stdout(&psum(&["verify", "--help"]));
    assert!(help.contains("--exact-limit <N>"), "{help}");
    assert!(help.contains("[default: 10000000000]"), "{help}");
}
