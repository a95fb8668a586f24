//! The allocator's log (SPEC §3.9): the `-v` lines, and the `-vv` stream
//! with the trace lines interleaved, collected as the allocator runs.

/// Collects the log, and the trace when `tracing`.
pub(crate) struct Log {
    /// The `-v` lines.
    pub log: Vec<String>,
    /// The `-vv` stream (empty unless `tracing`).
    pub trace: Vec<String>,
    tracing: bool,
}

impl Log {
    /// An empty log that collects the trace too when `tracing`.
    pub fn new(tracing: bool) -> Log {
        Log {
            log: Vec::new(),
            trace: Vec::new(),
            tracing,
        }
    }

    /// Adds a `-v` line (to the trace too).
    pub fn v(&mut self, line: String) {
        if self.tracing {
            self.trace.push(line.clone());
        }
        self.log.push(line);
    }

    /// Adds a trace line, built only when tracing.
    pub fn vv(&mut self, line: impl FnOnce() -> String) {
        if self.tracing {
            self.trace.push(line());
        }
    }
}

/// `100 × part / whole` in hundredths, rounded half up.
pub(crate) fn hundredths(part: u64, whole: u32) -> u64 {
    let whole = u64::from(whole);
    (10_000 * part + whole / 2) / whole
}

/// Hundredths as a percentage with two decimals (`12.34`).
pub(crate) fn pct_text(h: u64) -> String {
    format!("{}.{:02}", h / 100, h % 100)
}
