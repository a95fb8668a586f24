//! The allocator's log (SPEC §3.9): the `-v` lines, and the `-vv` stream
//! with the trace lines interleaved, collected as the allocator runs, as
//! much as the [`LogLevel`] asks for.

use super::LogLevel;

/// Collects the log, and the trace at [`LogLevel::Trace`].
pub(crate) struct Log {
    /// The `-v` lines (none at [`LogLevel::Quiet`]).
    pub log: Vec<String>,
    /// The `-vv` stream (empty unless tracing).
    pub trace: Vec<String>,
    level: LogLevel,
}

impl Log {
    /// An empty log that collects what `level` asks for.
    pub(crate) fn new(level: LogLevel) -> Log {
        Log {
            log: Vec::new(),
            trace: Vec::new(),
            level,
        }
    }

    /// Adds a `-v` line (to the trace too).
    pub(crate) fn v(&mut self, line: String) {
        match self.level {
            LogLevel::Quiet => {}
            LogLevel::Log => self.log.push(line),
            LogLevel::Trace => {
                self.trace.push(line.clone());
                self.log.push(line);
            }
        }
    }

    /// Adds a trace line, built only when tracing.
    pub(crate) fn vv(&mut self, line: impl FnOnce() -> String) {
        if self.level == LogLevel::Trace {
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
