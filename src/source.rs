//! Reading a module from input bytes and reporting errors against the input
//! (SPEC §2.6): [`load`] parses text (or JSON, by the file name) and
//! validates ([`parse`] and [`Loaded::validate`] are its two halves); a
//! [`Diagnostic`] renders as `file:line:col: error: message` followed by the
//! source line and a caret under the offending span.

use crate::ir::{InstId, Loc, Module};
use crate::text::{self, line_col, SourceMap, Span, Tile};
use crate::validate;
use std::fmt;
use std::sync::OnceLock;

/// A validated module and where it came from.
#[derive(Clone, Debug)]
pub struct Loaded {
    /// The file name as given (for messages).
    pub file: String,
    /// The input text.
    pub text: String,
    /// The module.
    pub module: Module,
    /// Whether the input was JSON (else the text format).
    pub json: bool,
    /// The `tile=RxC` attributes of text input, as written.
    pub tiles: Vec<(InstId, Tile)>,
    /// Source positions of text input, made on first use.
    spans: OnceLock<SourceMap>,
}

impl Loaded {
    /// Source positions of text input; `None` for JSON. Only a diagnostic
    /// needs them, so they are made on first use, by parsing the text again.
    pub fn source_map(&self) -> Option<&SourceMap> {
        (!self.json).then(|| {
            self.spans.get_or_init(|| {
                text::parse(&self.text)
                    .map(|p| p.source_map)
                    .unwrap_or_default()
            })
        })
    }

    /// A diagnostic at `loc` of this input (with the source line when the
    /// input was text, else just the file name).
    pub fn diagnostic(&self, loc: Loc, message: impl Into<String>) -> Diagnostic {
        let span = self.source_map().and_then(|m| m.span(loc));
        Diagnostic::new(&self.file, &self.text, span, message)
    }

    /// [`Loaded::diagnostic`], with a note naming the kernel line of a
    /// traced tile when `loc` points at one (SPEC §2.3).
    pub fn located(&self, loc: Loc, message: impl Into<String>) -> Noted {
        let note = match loc {
            Loc::Tensor(t) => (self.module.tensor(t).loc.as_ref())
                .map(|kernel| format!("the tile is allocated at {kernel}")),
            _ => None,
        };
        Noted {
            diagnostic: self.diagnostic(loc, message),
            note,
        }
    }
}

/// A [`Diagnostic`] and a closing `= note:` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Noted {
    /// The diagnostic.
    pub diagnostic: Diagnostic,
    /// The note, when there is one.
    pub note: Option<String>,
}

impl fmt::Display for Noted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.diagnostic)?;
        if let Some(note) = &self.note {
            write!(f, "\n   = note: {note}")?;
        }
        Ok(())
    }
}

/// A rendered-on-demand error: file, position, message, source line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file name.
    pub file: String,
    /// The one-line message.
    pub message: String,
    /// 1-based line and column, when known.
    pub position: Option<(usize, usize)>,
    /// The source line, the caret's char offset in it and its width.
    pub snippet: Option<(String, usize, usize)>,
}

/// Longest source line shown in full; longer lines are cut around the caret.
const MAX_SHOWN: usize = 120;

impl Diagnostic {
    /// A diagnostic for `span` of `src` (no position when `span` is `None`).
    pub(crate) fn new(
        file: &str,
        src: &str,
        span: Option<Span>,
        message: impl Into<String>,
    ) -> Self {
        let mut d = Diagnostic {
            file: file.to_string(),
            message: message.into(),
            position: None,
            snippet: None,
        };
        if let Some(span) = span {
            let (line, col) = line_col(src, span.start);
            d.position = Some((line, col));
            let text = src.lines().nth(line - 1).unwrap_or("");
            let chars: Vec<char> = text
                .chars()
                .map(|c| if c == '\t' { ' ' } else { c })
                .collect();
            let caret = col - 1;
            let (end_line, end_col) = line_col(src, span.end.max(span.start));
            let end = if end_line == line {
                end_col - 1
            } else {
                chars.len()
            };
            let first = if chars.len() > MAX_SHOWN {
                caret.saturating_sub(MAX_SHOWN / 2)
            } else {
                0
            };
            let shown: String = chars.iter().skip(first).take(MAX_SHOWN).collect();
            let room = shown.chars().count().saturating_sub(caret - first).max(1);
            let width = end.saturating_sub(caret).clamp(1, room);
            d.snippet = Some((shown, caret - first, width));
        }
        d
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, col)) => write!(f, "{}:{line}:{col}: error: {}", self.file, self.message)?,
            None => write!(f, "{}: error: {}", self.file, self.message)?,
        }
        if let (Some((line, _)), Some((text, caret, width))) = (self.position, &self.snippet) {
            let gutter = " ".repeat(line.to_string().len());
            write!(
                f,
                "\n{gutter} |\n{line} | {text}\n{gutter} | {}{}",
                " ".repeat(*caret),
                "^".repeat(*width)
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// Parses and validates `bytes` read from `file`: JSON when the name ends in
/// `.json` (or when stdin, `-`, starts with `{`), else the text format.
/// Diagnostics name stdin `<stdin>`.
///
/// ```
/// let src = b"arch trn1\n\nsbuf x [128, 512]\n\nblock main {\n  act x <- y\n}\n";
/// let err = psum::source::load("k.psum", src).unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "k.psum:6:12: error: undefined tensor 'y'\n  |\n6 |   act x <- y\n  |            ^"
/// );
/// ```
pub fn load(file: &str, bytes: &[u8]) -> Result<Loaded, Diagnostic> {
    let loaded = parse(file, bytes.to_vec())?;
    loaded.validate()?;
    Ok(loaded)
}

/// [`load`] without the validation, taking the bytes (no copy): for a
/// caller that validates while it does other work ([`Loaded::validate`]).
///
/// ```
/// // Parsed but not validated: the read of PSUM nothing wrote is refused
/// // only by `Loaded::validate`.
/// let src = "arch trn1\n\npsum a [128, 512]\nsbuf y [128, 512]\n\nblock main {\n  act y <- a\n}\n";
/// let loaded = psum::source::parse("k.psum", src.as_bytes().to_vec())?;
/// assert_eq!(loaded.module.tensors.len(), 2);
/// assert_eq!(
///     loaded.validate().unwrap_err().to_string(),
///     "k.psum:7:12: error: read of PSUM tensor a before any write\n  |\n7 |   act y <- a\n  |            ^"
/// );
/// # Ok::<(), psum::source::Diagnostic>(())
/// ```
pub fn parse(file: &str, bytes: Vec<u8>) -> Result<Loaded, Diagnostic> {
    let stdin = file == "-";
    let file = if stdin { "<stdin>" } else { file };
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let bytes = e.as_bytes();
            let valid = e.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(bytes).into_owned();
            let at = String::from_utf8_lossy(&bytes[..valid]).len();
            let msg = format!(
                "input is not UTF-8 text (invalid byte 0x{:02x})",
                bytes[valid]
            );
            return Err(Diagnostic::new(
                file,
                &lossy,
                Some(Span::new(at, at + 1)),
                msg,
            ));
        }
    };
    let json = file.ends_with(".json") || (stdin && text.trim_start().starts_with('{'));
    let (module, tiles) = if json {
        let m = text::parse_json(&text)
            .map_err(|e| Diagnostic::new(file, &text, Some(e.span()), e.to_string()))?;
        // A JSON module names its parts by id: they are checked before
        // anything indexes by them, as the text parser checks names.
        validate::validate_structure(&m)
            .map_err(|e| Diagnostic::new(file, &text, None, e.to_string()))?;
        (m, Vec::new())
    } else {
        let p = text::parse_module(&text)
            .map_err(|e| Diagnostic::new(file, &text, Some(e.span()), e.to_string()))?;
        (p.module, p.tiles)
    };
    Ok(Loaded {
        file: file.to_string(),
        text,
        module,
        json,
        tiles,
        spans: OnceLock::new(),
    })
}

impl Loaded {
    /// Validates the module (SPEC §2), the error pointing into the input.
    pub fn validate(&self) -> Result<(), Diagnostic> {
        let checked = if self.json {
            validate::validate(&self.module)
        } else {
            validate::validate_source(&self.module, &self.tiles)
        };
        checked.map_err(|e| self.diagnostic(e.loc, e.to_string()))
    }
}
