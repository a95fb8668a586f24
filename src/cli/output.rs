//! The outputs of a command, written only when it has succeeded (SPEC §2.6,
//! §6). A command stages each output ([`Outputs::file`], [`Outputs::stream`],
//! [`Outputs::stdout`]) while it works and [`Outputs::commit`]s them all at
//! its end; an error or a panic before the commit drops the [`Outputs`],
//! which removes every temporary file and leaves every target as it was.
//!
//! A target that is a regular file, or does not exist yet, is written to a
//! temporary file beside it, which takes the old file's permission mode and
//! is renamed over it on commit. A symlink is followed: its final target is
//! replaced, the link stays. A target that is not a regular file (a FIFO, a
//! device) or is reached through `/proc` (`/dev/stdout`, `/dev/fd/N`) is
//! never replaced: its content is held until the commit and then written
//! through (appended, as to an inherited stream).

use super::io::Failure;
use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Symlinks followed before a target counts as a loop (Linux's own limit).
const MAX_LINKS: usize = 40;

/// The staged outputs of one command, in the order they are committed.
#[derive(Default)]
pub(crate) struct Outputs {
    staged: Vec<Staged>,
}

/// One staged output.
enum Staged {
    /// Text for stdout.
    Stdout(String),
    /// A written temporary file, renamed over `target` on commit.
    Replace {
        temp: TempFile,
        target: PathBuf,
        shown: PathBuf,
    },
    /// Bytes written through to a FIFO, a device or a stream on commit.
    Through { path: PathBuf, bytes: Vec<u8> },
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

impl Outputs {
    /// No outputs yet.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Stages `content` for `path`, or for stdout when `path` is `None`.
    pub(crate) fn add(&mut self, path: Option<&Path>, content: &str) -> Result<(), Failure> {
        match path {
            Some(path) => self.stream(path, |w| w.write_all(content.as_bytes())),
            None => {
                self.stdout(content.to_string());
                Ok(())
            }
        }
    }

    /// Stages a report and the main output of a command (SPEC §6): the
    /// report to `file` and the main output to `main_to` (stdout when
    /// `None`); without a report file, the report on stdout and the main
    /// output to `main_to` only.
    pub(crate) fn add_report(
        &mut self,
        file: Option<&Path>,
        main_to: Option<&Path>,
        report: &str,
        main: &str,
    ) -> Result<(), Failure> {
        if file.is_some() || main_to.is_some() {
            self.add(main_to, main)?;
        }
        self.add(file, report)
    }

    /// Stages `content` for stdout.
    pub(crate) fn stdout(&mut self, content: String) {
        self.staged.push(Staged::Stdout(content));
    }

    /// Stages what `write` produces for `path`: streamed into a temporary
    /// file when `path` is (or will be) a regular file, else held.
    pub(crate) fn stream(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), Failure> {
        let failed = |e: io::Error| Failure::Input(format!("{}: error: {e}", path.display()));
        let r = resolve(path).map_err(failed)?;
        if r.meta.as_ref().is_some_and(Metadata::is_dir) {
            return Err(failed(io::ErrorKind::IsADirectory.into()));
        }
        let regular = r.meta.as_ref().is_none_or(Metadata::is_file);
        if r.stream || !regular {
            let mut bytes = Vec::new();
            write(&mut bytes).map_err(failed)?;
            self.staged.push(Staged::Through {
                path: path.to_path_buf(),
                bytes,
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
                Staged::Stdout(text) => io::stdout().write_all(text.as_bytes())?,
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
                Staged::Through { path, bytes } => OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .and_then(|mut f| f.write_all(&bytes))
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

/// Writes `content` to `path` (stdout when `None`): one staged output, committed.
pub(crate) fn emit(path: Option<&Path>, content: &str) -> Result<(), Failure> {
    emit_with(path, |w| w.write_all(content.as_bytes()))
}

/// Writes what `write` produces to `path` (one staged output, committed),
/// or straight to stdout when `None`: for a command's one output, made
/// when nothing else can fail, without holding it whole.
pub(crate) fn emit_with(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), Failure> {
    match path {
        Some(path) => {
            let mut out = Outputs::new();
            out.stream(path, write)?;
            out.commit()
        }
        None => {
            let mut w = io::BufWriter::new(io::stdout().lock());
            write(&mut w)?;
            w.flush()?;
            Ok(())
        }
    }
}
