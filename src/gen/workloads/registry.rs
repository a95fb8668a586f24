//! The command-line surface of the workloads: each parameter's key, meaning
//! and typed slot, and the parsing and printing of `psum gen KIND …` over
//! them.

use super::{GenError, Workload, WorkloadKind};

/// Where a parameter's value lives, typed.
enum Slot<'a> {
    Size(&'a mut u32),
    Seed(&'a mut u64),
    Pressure(&'a mut Option<f64>),
    Flag(&'a mut bool),
    Arch(&'a mut String),
}

/// One command-line parameter of a workload.
struct Param<'a> {
    key: &'static str,
    doc: &'static str,
    slot: Slot<'a>,
}

impl<'a> Param<'a> {
    fn new(key: &'static str, doc: &'static str, slot: Slot<'a>) -> Self {
        Param { key, doc, slot }
    }

    fn arch(arch: &'a mut String) -> Self {
        Param::new("arch", "architecture codename", Slot::Arch(arch))
    }

    /// The value as it would be written on the command line; `None` when
    /// the parameter is unset (an automatic pressure, a false flag).
    fn value(&self) -> Option<String> {
        match &self.slot {
            Slot::Size(v) => Some(v.to_string()),
            Slot::Seed(v) => Some(v.to_string()),
            Slot::Pressure(v) => v.map(|p| p.to_string()),
            Slot::Flag(v) => v.then(String::new),
            Slot::Arch(v) => Some(v.to_string()),
        }
    }

    fn set(&mut self, value: &str) -> Result<(), GenError> {
        let bad = |expected| GenError::BadValue {
            key: self.key,
            value: value.to_string(),
            expected,
        };
        match &mut self.slot {
            Slot::Size(v) => **v = value.parse().map_err(|_| bad("a non-negative integer"))?,
            Slot::Seed(v) => {
                **v = value
                    .parse()
                    .map_err(|_| bad("a 64-bit unsigned integer"))?
            }
            Slot::Pressure(v) => **v = Some(value.parse().map_err(|_| bad("a number"))?),
            Slot::Flag(v) => {
                **v = match value {
                    "" | "true" => true,
                    "false" => false,
                    _ => return Err(bad("true or false")),
                }
            }
            Slot::Arch(v) => **v = value.to_string(),
        }
        Ok(())
    }
}

impl Workload {
    fn params(&mut self) -> Vec<Param<'_>> {
        use Slot::{Flag, Pressure, Seed, Size};
        match self {
            Workload::Gemm(p) => vec![
                Param::new("m", "output rows (multiple of the M tile)", Size(&mut p.m)),
                Param::new("n", "output columns (multiple of 512)", Size(&mut p.n)),
                Param::new("k", "contraction size (multiple of 128)", Size(&mut p.k)),
                Param::arch(&mut p.arch),
            ],
            Workload::Attention(p) => attention_params(
                &mut p.seq_q,
                &mut p.seq_k,
                &mut p.d,
                "head dimension (at most 128)",
                &mut p.arch,
            ),
            Workload::AttentionBwd(p) => attention_params(
                &mut p.seq_q,
                &mut p.seq_k,
                &mut p.d,
                "head dimension (at most the M tile)",
                &mut p.arch,
            ),
            Workload::Qkv(p) => vec![
                Param::new(
                    "tokens",
                    "tokens (multiple of the M tile)",
                    Size(&mut p.tokens),
                ),
                Param::new(
                    "hidden",
                    "hidden size H (multiple of 128)",
                    Size(&mut p.hidden),
                ),
                Param::new(
                    "groups",
                    "512-column output groups (at most the bank count)",
                    Size(&mut p.groups),
                ),
                Param::arch(&mut p.arch),
            ],
            Workload::Conv1d(p) => vec![
                Param::new(
                    "c-in",
                    "input channels (multiple of 128)",
                    Size(&mut p.c_in),
                ),
                Param::new(
                    "c-out",
                    "output channels (multiple of the M tile)",
                    Size(&mut p.c_out),
                ),
                Param::new("taps", "filter taps", Size(&mut p.taps)),
                Param::new(
                    "length",
                    "output length (multiple of 512 x accumulators)",
                    Size(&mut p.length),
                ),
                Param::new(
                    "accumulators",
                    "PSUM accumulators (at most the bank count)",
                    Size(&mut p.accumulators),
                ),
                Param::arch(&mut p.arch),
            ],
            Workload::ColumnTiled(p) => vec![
                Param::new(
                    "cols",
                    "columns of one tile (below the PE column count)",
                    Size(&mut p.cols),
                ),
                Param::new("tiles", "column tiles side by side", Size(&mut p.tiles)),
                Param::new("n", "output columns (multiple of 512)", Size(&mut p.n)),
                Param::new("k", "contraction size (multiple of 128)", Size(&mut p.k)),
                Param::arch(&mut p.arch),
            ],
            Workload::Random(p) => vec![
                Param::new("tensors", "number of PSUM tensors", Size(&mut p.tensors)),
                Param::new(
                    "pressure",
                    "average live banks (default 1.5 x banks)",
                    Pressure(&mut p.pressure),
                ),
                Param::new("seed", "PRNG seed", Seed(&mut p.seed)),
                Param::new(
                    "multi-bank",
                    "mix 1-4-bank tensors",
                    Flag(&mut p.multi_bank),
                ),
                Param::new(
                    "loops",
                    "emit two-matmul chains as loops",
                    Flag(&mut p.loops),
                ),
                Param::new(
                    "rich",
                    "fresh operands, rich writes, second lives, loop shapes, blocks",
                    Flag(&mut p.rich),
                ),
                Param::arch(&mut p.arch),
            ],
        }
    }

    /// Sets one parameter by its command-line key (`seq-q`, `multi-bank`);
    /// a flag takes `""`, `true` or `false`.
    pub(crate) fn set(&mut self, key: &str, value: &str) -> Result<(), GenError> {
        let workload = self.kind().name();
        let mut params = self.params();
        let known = params.iter().map(|p| p.key).collect::<Vec<_>>().join(", ");
        match params.iter_mut().find(|p| p.key == key) {
            Some(p) => p.set(value),
            None => Err(GenError::UnknownParam {
                workload,
                key: key.to_string(),
                known,
            }),
        }
    }

    /// Parses `psum gen KIND ARGS…`: `--key value`, `--key=value`, bare
    /// `--flag`, and the kind's positional keys in order.
    pub fn from_args<S: AsRef<str>>(kind: WorkloadKind, args: &[S]) -> Result<Workload, GenError> {
        let mut w = Workload::defaults(kind);
        let mut positional = kind.positional().iter();
        let mut i = 0;
        while i < args.len() {
            let arg = args[i].as_ref();
            i += 1;
            let Some(flag) = arg.strip_prefix("--") else {
                let key = positional.next().ok_or_else(|| GenError::ExtraArg {
                    workload: kind.name(),
                    arg: arg.to_string(),
                })?;
                w.set(key, arg)?;
                continue;
            };
            if let Some((key, value)) = flag.split_once('=') {
                w.set(key, value)?;
            } else if w.is_flag(flag) {
                w.set(flag, "")?;
            } else {
                let value = args
                    .get(i)
                    .ok_or_else(|| GenError::MissingValue(flag.to_string()))?;
                i += 1;
                w.set(flag, value.as_ref())?;
            }
        }
        Ok(w)
    }

    fn is_flag(&mut self, key: &str) -> bool {
        self.params()
            .iter()
            .any(|p| p.key == key && matches!(p.slot, Slot::Flag(_)))
    }

    /// The `psum gen` command line that reproduces this workload, every
    /// set parameter spelled out (`psum gen gemm --m 256 … --arch trn1`).
    pub fn command_line(&self) -> String {
        let mut line = format!("psum gen {}", self.kind());
        for p in self.clone().params() {
            match p.value() {
                Some(v) if v.is_empty() => line += &format!(" --{}", p.key),
                Some(v) => line += &format!(" --{} {v}", p.key),
                None => {}
            }
        }
        line
    }

    /// One line per parameter, `--key  meaning (default: value)`, for `--help`.
    pub fn help(kind: WorkloadKind) -> String {
        let mut w = Workload::defaults(kind);
        let mut out = String::new();
        for p in w.params() {
            let default = match (&p.slot, p.value()) {
                (Slot::Flag(_), _) => "off".to_string(),
                (_, Some(v)) => v,
                (_, None) => "auto".to_string(),
            };
            out += &format!("  --{:<14}{} (default: {default})\n", p.key, p.doc);
        }
        out
    }
}

/// The parameters shared by [`attention`] and [`attention_bwd`]; `d_doc`
/// states the head dimension's limit.
fn attention_params<'a>(
    seq_q: &'a mut u32,
    seq_k: &'a mut u32,
    d: &'a mut u32,
    d_doc: &'static str,
    arch: &'a mut String,
) -> Vec<Param<'a>> {
    vec![
        Param::new(
            "seq-q",
            "query length (multiple of the M tile)",
            Slot::Size(seq_q),
        ),
        Param::new(
            "seq-k",
            "key/value length (multiple of 512)",
            Slot::Size(seq_k),
        ),
        Param::new("d", d_doc, Slot::Size(d)),
        Param::arch(arch),
    ]
}
