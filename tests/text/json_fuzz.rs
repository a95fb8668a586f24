//! A bounded, seeded run of the JSON and text fuzz properties
//! ([`psum::fuzzing::json::check_json`], [`psum::fuzzing::parse::check_text`],
//! SPEC §2.5, §2.6): JSON and text modules of generated programs, mutated
//! deterministically, byte by byte and (JSON) value by value (ids, bounds,
//! bodies), must each fail with a diagnostic or print and re-parse.

use psum::fuzzing::json::check_json;
use psum::fuzzing::parse::check_text;
use psum::gen::random::{program, Arches, RandomConfig, Rng};
use psum::text::to_json;
use serde_json::Value;

/// Numbers a mutation puts in place of a number of the module.
const NUMBERS: [i64; 10] = [0, 1, 2, 5, 7, 99, 101, 999, -1, 4_294_967_295];

/// Every number, array and object of `v`, as JSON pointers.
fn places(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Array(xs) => {
            out.push(at.clone());
            for (i, x) in xs.iter().enumerate() {
                places(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                places(x, format!("{at}/{k}"), out);
            }
        }
        Value::Number(_) => out.push(at),
        _ => {}
    }
}

/// One value-level mutation of `m`: a number replaced, an array element
/// removed or repeated, or a loop or instruction placed a second time.
fn mutate_value(m: &mut Value, rng: &mut Rng) {
    let mut at = Vec::new();
    places(m, String::new(), &mut at);
    let place = rng.pick(&at).clone();
    let target = m.pointer_mut(&place).expect("a place of the module");
    match target {
        Value::Array(xs) if !xs.is_empty() => {
            let i = rng.index(xs.len());
            if rng.chance(1, 2) {
                xs.remove(i);
            } else {
                let x = xs[i].clone();
                xs.insert(rng.index(xs.len() + 1), x);
            }
        }
        Value::Array(xs) => xs.push(serde_json::json!({"loop": 0})),
        _ => *target = Value::from(*rng.pick(&NUMBERS)),
    }
}

/// One byte-level mutation of `b`: a byte replaced, a range removed or repeated.
fn mutate_bytes(b: &mut Vec<u8>, rng: &mut Rng) {
    let i = rng.index(b.len());
    let n = (1 + rng.index(16)).min(b.len() - i);
    match rng.below(3) {
        0 => b[i] = *rng.pick(b"{}[],:\"0129-e.x "),
        1 => {
            b.drain(i..i + n);
        }
        _ => {
            let copy = b[i..i + n].to_vec();
            b.splice(i..i, copy);
        }
    }
}

#[test]
fn mutated_json_modules_fail_cleanly_or_round_trip() {
    let cfg = RandomConfig {
        arch: Arches::Generations,
        tensors: 4,
        ..RandomConfig::syntax()
    };
    let mut rng = Rng::new(47);
    let mut checked = 0;
    for seed in 0..40 {
        let m = program(seed, &cfg).unwrap();
        let json = to_json(&m);
        check_json(json.as_bytes());
        let value: Value = serde_json::from_str(&json).unwrap();
        for _ in 0..6 {
            let mut v = value.clone();
            for _ in 0..1 + rng.below(2) {
                mutate_value(&mut v, &mut rng);
            }
            check_json(v.to_string().as_bytes());
            let mut b = json.clone().into_bytes();
            mutate_bytes(&mut b, &mut rng);
            check_json(&b);
            checked += 2;
        }
    }
    assert_eq!(checked, 480);
}

#[test]
fn mutated_text_modules_fail_cleanly_or_round_trip() {
    let cfg = RandomConfig {
        arch: Arches::Generations,
        tensors: 4,
        ..RandomConfig::syntax()
    };
    let mut rng = Rng::new(46);
    let mut checked = 0;
    for seed in 0..40 {
        let text = psum::text::print(&program(seed, &cfg).unwrap());
        check_text(text.as_bytes());
        for _ in 0..6 {
            let mut b = text.clone().into_bytes();
            for _ in 0..1 + rng.below(3) {
                mutate_bytes(&mut b, &mut rng);
            }
            check_text(&b);
            checked += 1;
        }
    }
    assert_eq!(checked, 240);
}
