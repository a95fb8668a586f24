//! `psum::export`: MiniMalloc CSV out, solutions back in.

use psum::alloc::{Buffer, Interval};
use psum::export::{import_minimalloc, to_minimalloc_csv, ImportError};

fn buf(id: &str, start: u32, end: u32, banks: u32) -> Buffer {
    Buffer {
        id: id.to_string(),
        interval: Interval { start, end, banks },
    }
}

fn problem() -> Vec<Buffer> {
    vec![
        buf("acc.0", 0, 3, 1),
        buf("acc.1", 4, 9, 2),
        buf("big", 2, 6, 4),
    ]
}

#[test]
fn export_is_half_open_in_points_and_banks() {
    assert_eq!(
        to_minimalloc_csv(&problem()),
        "id,lower,upper,size\nacc.0,0,4,1\nacc.1,4,10,2\nbig,2,7,4\n"
    );
}

#[test]
fn valid_solution_reads_back_as_banks() {
    let sol = "id,lower,upper,size,offset\nacc.0,0,4,1,5\nacc.1,4,10,2,6\nbig,2,7,4,0\n";
    let r = import_minimalloc(&problem(), sol, 8).unwrap();
    let banks: Vec<(u64, u32)> = r.placements.iter().map(|p| (p.bank, p.alignment)).collect();
    assert_eq!(banks, vec![(5, 1), (6, 2), (0, 4)]);
    assert!(r.all_aligned());
    assert!(r.is_valid());
    assert_eq!(
        r.render(),
        "3 nodes: every offset respects the bank alignment\nvalid PSUM allocation\n"
    );
}

#[test]
fn misaligned_out_of_range_and_conflicting_offsets_are_reported() {
    // Rows in any order, extra columns ignored.
    let sol = "offset,id,alignment\n1,big,1\n8,acc.0,1\n3,acc.1,1\n";
    let r = import_minimalloc(&problem(), sol, 8).unwrap();
    assert_eq!(r.misaligned, vec!["acc.1", "big"]);
    assert_eq!(r.out_of_range, vec!["acc.0"]);
    assert_eq!(r.conflicts, vec![("acc.1".to_string(), "big".to_string())]);
    assert!(!r.all_aligned());
    assert_eq!(
        r.render(),
        "acc.1: bank 3 is not a multiple of its alignment 2 (2 banks)\n\
         big: bank 1 is not a multiple of its alignment 4 (4 banks)\n\
         acc.0: extends past bank 7\n\
         acc.1 and big are live together and share a bank\n\
         3 nodes: some offsets break the bank alignment\n\
         not a valid PSUM allocation\n"
    );
}

#[test]
fn malformed_solutions_are_errors() {
    let p = problem();
    let cases: Vec<(&str, ImportError)> = vec![
        ("", ImportError::Empty),
        ("id,lower\nacc.0,0\n", ImportError::MissingColumn("offset")),
        ("offset\n0\n", ImportError::MissingColumn("id")),
        (
            "id,offset\nacc.0\n",
            ImportError::FieldCount {
                line: 2,
                expected: 2,
                found: 1,
            },
        ),
        (
            "id,offset\nacc.0,-1\n",
            ImportError::BadInteger {
                line: 2,
                column: "offset",
                value: "-1".into(),
            },
        ),
        (
            "id,offset\nnope,0\n",
            ImportError::UnknownId {
                line: 2,
                id: "nope".into(),
            },
        ),
        (
            "id,offset\nacc.0,0\nacc.0,1\n",
            ImportError::DuplicateId {
                line: 3,
                id: "acc.0".into(),
            },
        ),
        (
            "id,offset\nacc.0,0\nbig,4\n",
            ImportError::MissingId("acc.1".into()),
        ),
        (
            "id,lower,upper,size,offset\nacc.0,0,3,1,0\n",
            ImportError::Mismatch {
                line: 2,
                id: "acc.0".into(),
                column: "upper",
                expected: 4,
                found: 3,
            },
        ),
    ];
    for (csv, want) in cases {
        assert_eq!(import_minimalloc(&p, csv, 8), Err(want), "input {csv:?}");
    }
}

#[test]
fn export_then_import_round_trips() {
    let p = problem();
    let mut sol = String::new();
    for (line, off) in to_minimalloc_csv(&p).lines().zip(["offset", "2", "0", "4"]) {
        sol.push_str(&format!("{line},{off}\n"));
    }
    let r = import_minimalloc(&p, &sol, 8).unwrap();
    assert!(r.is_valid());
    let ids: Vec<&str> = r.placements.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, vec!["acc.0", "acc.1", "big"]);
}

#[test]
fn example_module_exports_one_row_per_node() {
    let m = psum::text::parse(include_str!("../../examples/01_three_tensors.psum"))
        .unwrap()
        .module;
    let p = psum::alloc::problem(&m, &psum::alloc::AllocOptions::default()).unwrap();
    assert_eq!(p.num_banks, 8);
    assert_eq!(
        to_minimalloc_csv(&p.buffers),
        "id,lower,upper,size\na,0,5,1\nb,1,5,1\nc,2,6,2\n"
    );
    // MiniMalloc's answer at capacity 8 (c needs an even base bank).
    let sol = "id,lower,upper,size,offset\na,0,5,1,2\nb,1,5,1,3\nc,2,6,2,0\n";
    assert!(import_minimalloc(&p.buffers, sol, p.num_banks)
        .unwrap()
        .is_valid());
    let odd = "id,lower,upper,size,offset\na,0,5,1,1\nb,1,5,1,3\nc,2,6,2,1\n";
    let r = import_minimalloc(&p.buffers, odd, p.num_banks).unwrap();
    assert_eq!(r.misaligned, vec!["c"]);
    assert_eq!(r.conflicts, vec![("a".to_string(), "c".to_string())]);
}
