//! The outputs of a command, written only when it has succeeded (SPEC §2.6,
//! §6). A command stages each output ([`Outputs::add`], [`Outputs::stream`],
//! [`Outputs::add_report`]; [`emit`] for a command's only output) while it
//! works and [`Outputs::commit`]s them all at its end; an error or a panic
//! before the commit drops the [`Outputs`], which removes every temporary
//! file and leaves every target as it was.
//!
//! A target that is a regular file, or does not exist yet, is written at
//! once to a temporary file beside it, which takes the old file's
//! permission mode and is renamed over it on commit. A symlink is followed:
//! its final target is replaced, the link stays. Stdout, and a target that
//! is not a regular file (a FIFO, a device) or is reached through `/proc`
//! (`/dev/stdout`, `/dev/fd/N`), is never replaced: its writer runs at the
//! commit and writes through (appending, as to an inherited stream).

use super::io::Failure;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Symlinks followed before a target counts as a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// A writer of one output, run when it is staged or committed.
type Writer<'a> = Box<dyn FnOnce(&mut dyn Write) -> io::Result<()> + 'a>;

/// The staged outputs of one command, in the order they are committed.
#[derive(Default)]
pub(crate) struct Outputs<'a> {
    staged: Vec<Staged<'a>>,
}

/// One staged output.
enum Staged<'a> {
    /// A written temporary file, renamed over `target` on commit.
    Replace {
        temp: TempFile,
        target: PathBuf,
        shown: PathBuf,
    },
    /// A writer run on commit, into stdout (`None`) or through a FIFO, a
    /// device or a stream.
    Through {
        path: Option<PathBuf>,
        write: Writer<'a>,
    },
}

/// A temporary file that is removed when dropped, unless it was renamed.
struct TempFile(Option<PathBuf>);

impl Drop for TempFile {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            // Best effort: nothing is left to report a failure on.
            let _ = fs::remove_file(path);
        }
    }
}

/// Where an output path leads.
struct Resolved {
    /// The path after following symlinks.
    path: PathBuf,
    /// Its metadata, when it exists.
    meta: Option<Metadata>,
    /// Some link led into `/proc` (`/dev/stdout` and the like).
    stream: bool,
}

/// Follows the symlinks of `path` to the file it names.
fn resolve(path: &Path) -> io::Result<Resolved> {
    let mut p = path.to_path_buf();
    let mut stream = path.starts_with("/proc");
    for _ in 0..MAX_LINKS {
        let meta = match fs::symlink_metadata(&p) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Resolved {
                    path: p,
                    meta: None,
                    stream,
                })
            }
            Err(e) => return Err(e),
        };
        if !meta.file_type().is_symlink() || stream {
            return Ok(Resolved {
                path: p,
                meta: Some(meta),
                stream,
            });
        }
        let link = fs::read_link(&p)?;
        p = match p.parent() {
            Some(dir) => dir.join(&link),
            None => link,
        };
        stream |= p.starts_with("/proc");
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

impl<'a> Outputs<'a> {
    /// No outputs yet.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Stages `content` for `path`, or for stdout when `path` is `None`.
    pub(crate) fn add(&mut self, path: Option<&Path>, content: String) -> Result<(), Failure> {
        self.stream(path, move |w| w.write_all(content.as_bytes()))
    }

    /// Stages a report and the main output of a command (SPEC §6): the
    /// report to `file` and the main output to `main_to` (stdout when
    /// `None`); without a report file, the report on stdout and the main
    /// output to `main_to` only.
    pub(crate) fn add_report(
        &mut self,
        file: Option<&Path>,
        main_to: Option<&Path>,
        report: String,
        main: impl FnOnce(&mut dyn Write) -> io::Result<()> + 'a,
    ) -> Result<(), Failure> {
        if file.is_some() || main_to.is_some() {
            self.stream(main_to, main)?;
        }
        self.add(file, report)
    }

    /// Stages what `write` produces for `path` (stdout when `None`): run at
    /// once into a temporary file when `path` is (or will be) a regular
    /// file, else at the commit.
    pub(crate) fn stream(
        &mut self,
        path: Option<&Path>,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()> + 'a,
    ) -> Result<(), Failure> {
        let Some(path) = path else {
            self.staged.push(Staged::Through {
                path: None,
                write: Box::new(write),
            });
            return Ok(());
        };
        let failed = |e: io::Error| Failure::Input(format!("{}: error: {e}", path.display()));
        let r = resolve(path).map_err(failed)?;
        if r.meta.as_ref().is_some_and(Metadata::is_dir) {
            return Err(failed(io::ErrorKind::IsADirectory.into()));
        }
        let regular = r.meta.as_ref().is_none_or(Metadata::is_file);
        if r.stream || !regular {
            self.staged.push(Staged::Through {
                path: Some(path.to_path_buf()),
                write: Box::new(write),
            });
            return Ok(());
        }
        let (temp, file) = create_temp(&r.path).map_err(failed)?;
        let mut w = io::BufWriter::new(file);
        write(&mut w).map_err(failed)?;
        let file = w.into_inner().map_err(|e| failed(e.into_error()))?;
        if let Some(meta) = &r.meta {
            file.set_permissions(meta.permissions()).map_err(failed)?;
        }
        self.staged.push(Staged::Replace {
            temp,
            target: r.path,
            shown: path.to_path_buf(),
        });
        Ok(())
    }

    /// Writes every staged output, in the order staged.
    pub(crate) fn commit(self) -> Result<(), Failure> {
        for s in self.staged {
            match s {
                Staged::Replace {
                    mut temp,
                    target,
                    shown,
                } => {
                    let from = temp.0.as_ref().expect("a staged temporary file");
                    fs::rename(from, &target)
                        .map_err(|e| Failure::Input(format!("{}: error: {e}", shown.display())))?;
                    temp.0 = None;
                }
                Staged::Through { path: None, write } => {
                    let mut w = io::BufWriter::new(io::stdout().lock());
                    write(&mut w).and_then(|()| w.flush())?;
                }
                Staged::Through {
                    path: Some(path),
                    write,
                } => OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .and_then(|f| {
                        let mut w = io::BufWriter::new(f);
                        write(&mut w).and_then(|()| w.flush())
                    })
                    .map_err(|e| Failure::Input(format!("{}: error: {e}", path.display())))?,
            }
        }
        Ok(())
    }
}

/// Creates a new temporary file beside `target`, `.NAME.PID-N.tmp`.
fn create_temp(target: &Path) -> io::Result<(TempFile, File)> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = target.with_file_name(format!(".{name}.{}-{n}.tmp", std::process::id()));
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)?;
    Ok((TempFile(Some(path)), file))
}

/// Writes what `write` produces to `path` (stdout when `None`): one staged
/// output, committed.
pub(crate) fn emit(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), Failure> {
    let mut out = Outputs::new();
    out.stream(path, write)?;
    out.commit()
}

/// [`emit`] of a text made whole.
pub(crate) fn emit_str(path: Option<&Path>, content: &str) -> Result<(), Failure> {
    emit(path, |w| w.write_all(content.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory holding `out.psum` = "previous".
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("psum-output-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("out.psum"), "previous").unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn staged_outputs_are_dropped_without_a_trace() {
        let d = scratch("drop");
        let mut out = Outputs::new();
        out.add(Some(&d.join("out.psum")), "new".into()).unwrap();
        out.add(Some(&d.join("other.psum")), "other".into())
            .unwrap();
        assert_eq!(names(&d).len(), 3, "two staged temporary files");
        drop(out);
        assert_eq!(names(&d), ["out.psum"]);
        assert_eq!(fs::read_to_string(d.join("out.psum")).unwrap(), "previous");
    }

    #[test]
    fn a_panic_while_staging_leaves_no_temporary_file() {
        let d = scratch("panic");
        let target = d.join("out.psum");
        let r = std::panic::catch_unwind(|| {
            let mut out = Outputs::new();
            out.add(Some(&d.join("first.psum")), "first".into())
                .unwrap();
            let _ = out.stream(Some(&target), |w| {
                w.write_all(b"half")?;
                panic!("the printer failed");
            });
        });
        assert!(r.is_err());
        assert_eq!(names(&d), ["out.psum"]);
        assert_eq!(fs::read_to_string(&target).unwrap(), "previous");
    }

    #[test]
    fn a_failed_write_is_reported_and_cleaned_up() {
        let d = scratch("fail");
        let target = d.join("out.psum");
        let mut out = Outputs::new();
        let e = out.stream(Some(&target), |_| Err(io::Error::other("disk full")));
        let Err(Failure::Input(msg)) = e else {
            panic!("expected an input failure");
        };
        assert_eq!(msg, format!("{}: error: disk full", target.display()));
        assert_eq!(names(&d), ["out.psum"]);
        out.commit().unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "previous");
    }

    #[test]
    fn commit_replaces_in_order_and_a_directory_is_refused() {
        let d = scratch("commit");
        let mut out = Outputs::new();
        out.add(Some(&d.join("out.psum")), "new".into()).unwrap();
        out.add(Some(&d.join("made.psum")), "made".into()).unwrap();
        let Err(Failure::Input(msg)) = out.add(Some(&d), "x".into()) else {
            panic!("a directory is no output");
        };
        assert_eq!(msg, format!("{}: error: is a directory", d.display()));
        out.commit().unwrap();
        assert_eq!(names(&d), ["made.psum", "out.psum"]);
        assert_eq!(fs::read_to_string(d.join("out.psum")).unwrap(), "new");
        assert_eq!(fs::read_to_string(d.join("made.psum")).unwrap(), "made");
    }
}
