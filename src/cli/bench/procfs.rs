//! What `psum bench` reads of its own process from `/proc` (Linux only):
//! CPU time and page faults ([`Usage`]) and the peak resident memory.

use crate::cli::io::Failure;

/// What one allocation used of the process beyond its time: CPU time of all
/// its threads, in user and kernel mode, and minor page faults (each a
/// fresh page of memory; on this machine's VM the kernel time is mostly
/// those). Read from `/proc/self/stat`, so Linux only.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Usage {
    pub(super) user_secs: f64,
    pub(super) sys_secs: f64,
    pub(super) faults: u64,
}

impl Usage {
    /// The process's counters so far, or `None` without `/proc`.
    pub(super) fn now() -> Option<Usage> {
        let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
        Usage::parse(&stat)
    }

    /// The counters of a `/proc/PID/stat` line: `minflt`, `utime` and
    /// `stime`, the 10th, 14th and 15th fields (counting from `pid`; the
    /// command name in parentheses may hold spaces, so fields are counted
    /// after its closing parenthesis). Times are in ticks of 1/100 s, the
    /// `USER_HZ` of Linux.
    fn parse(stat: &str) -> Option<Usage> {
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let num = |i: usize| fields.get(i)?.parse::<u64>().ok();
        let secs = |i: usize| num(i).map(|ticks| ticks as f64 / 100.0);
        Some(Usage {
            faults: num(7)?,
            user_secs: secs(11)?,
            sys_secs: secs(12)?,
        })
    }

    /// The counters spent since `before`.
    pub(super) fn since(self, before: Usage) -> Usage {
        Usage {
            user_secs: self.user_secs - before.user_secs,
            sys_secs: self.sys_secs - before.sys_secs,
            faults: self.faults - before.faults,
        }
    }
}

/// Peak resident memory is measured per pass: `5` written to
/// `/proc/self/clear_refs` resets `VmHWM` to the current resident size.
pub(super) fn reset_peak() {
    // Best effort: without it the peaks are cumulative, never too low.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// `VmHWM` of this process, KiB.
pub(super) fn peak_kib() -> Result<u64, Failure> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| Failure::Input("error: no VmHWM in /proc/self/status".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counters come from the 10th, 14th and 15th fields, counted
    /// past a command name with spaces and parentheses in it.
    #[test]
    fn usage_reads_faults_and_cpu_ticks() {
        let stat = "12379 (a (b) c) R 12375 12375 1183 0 -1 4194304 125 7 3 0 250 31 0 0 20 0 1 0";
        let want = Usage {
            user_secs: 2.5,
            sys_secs: 0.31,
            faults: 125,
        };
        assert_eq!(Usage::parse(stat), Some(want));
        assert_eq!(Usage::parse("12379 (cat) R 1 2"), None);
        let later = Usage {
            user_secs: 3.0,
            sys_secs: 0.5,
            faults: 200,
        };
        let spent = later.since(want);
        assert_eq!(spent.faults, 75);
        assert!((spent.user_secs - 0.5).abs() < 1e-9 && (spent.sys_secs - 0.19).abs() < 1e-9);
    }
}
