//! Tokenizer for the text format (SPEC §2): identifiers, numbers, labels and
//! punctuation, with byte spans. Whitespace and `#` comments are skipped;
//! newlines carry no meaning.

use super::{ParseError, Span};

/// A token. Text payloads borrow from the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tok<'a> {
    /// `[A-Za-z_][A-Za-z0-9_.]*`: names, keywords, mnemonics.
    Ident(&'a str),
    /// An unsigned number as written (`128`, `0.5`, `1e-3`).
    Num(&'a str),
    /// `%NAME` (the text after `%`).
    Label(&'a str),
    /// `"TEXT"` (the text between the quotes; no escapes, no newline).
    Str(&'a str),
    /// `[`
    LBracket,
    /// `]`
    RBracket,
    /// `{`
    LBrace,
    /// `}`
    RBrace,
    /// `,`
    Comma,
    /// `:`
    Colon,
    /// `=`
    Eq,
    /// `<-`
    Arrow,
    /// `..`
    DotDot,
    /// `+`
    Plus,
    /// `-`
    Minus,
    /// `*`
    Star,
    /// `|`
    Pipe,
    /// End of input.
    Eof,
}

impl Tok<'_> {
    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        let p = |s: &str| format!("'{s}'");
        match self {
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Num(s) => format!("number {s}"),
            Tok::Label(s) => format!("label '%{s}'"),
            Tok::Str(s) => format!("string {s:?}"),
            Tok::LBracket => p("["),
            Tok::RBracket => p("]"),
            Tok::LBrace => p("{"),
            Tok::RBrace => p("}"),
            Tok::Comma => p(","),
            Tok::Colon => p(":"),
            Tok::Eq => p("="),
            Tok::Arrow => p("<-"),
            Tok::DotDot => p(".."),
            Tok::Plus => p("+"),
            Tok::Minus => p("-"),
            Tok::Star => p("*"),
            Tok::Pipe => p("|"),
            Tok::Eof => "end of input".to_string(),
        }
    }
}

/// A cursor over the source; cheap to copy for lookahead.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lexer<'a> {
    src: &'a str,
    pos: usize,
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.'
}

/// The value of `digits` when they are 1 to 18 ASCII digits (so that no
/// value overflows); `None` otherwise, for the general path to read.
pub(crate) fn small_int(digits: &[u8]) -> Option<i64> {
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    digits.iter().try_fold(0i64, |v, &b| {
        b.is_ascii_digit().then(|| v * 10 + i64::from(b - b'0'))
    })
}

/// Whether `s` is a valid name (`[A-Za-z_][A-Za-z0-9_.]*`).
pub(crate) fn is_name(s: &str) -> bool {
    s.bytes().next().is_some_and(is_name_start) && s.bytes().all(is_name_char)
}

/// Whether `s` is a valid label name (`[A-Za-z0-9_.]+`, after the `%`).
pub(crate) fn is_label(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_name_char)
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub(crate) fn new(src: &'a str) -> Self {
        Lexer { src, pos: 0 }
    }

    /// The source text.
    pub(crate) fn src(&self) -> &'a str {
        self.src
    }

    /// Where a second parser could start, for a parse on two threads: the
    /// first token of the first line at or after byte `target` that begins
    /// inside a block and outside every loop, counting braces from the
    /// cursor (which must be outside every block) as the lexer reads them —
    /// not in comments or strings. `None` when no such line follows. On
    /// text that does not lex, the answer may be wrong; the parsers then
    /// disagree, and the caller parses again on one thread.
    pub(crate) fn statement_boundary(&self, target: usize) -> Option<usize> {
        /// The bytes the scan stops at.
        const SPECIAL: [bool; 256] = {
            let mut t = [false; 256];
            let mut k = 0;
            while k < 5 {
                t[b"{}#\"\n"[k] as usize] = true;
                k += 1;
            }
            t
        };
        let bytes = self.src.as_bytes();
        let mut depth = 0usize;
        let mut i = self.pos;
        loop {
            i += bytes[i..].iter().position(|&b| SPECIAL[usize::from(b)])?;
            match bytes[i] {
                b'{' => depth += 1,
                b'}' => depth = depth.saturating_sub(1),
                b'#' => i += bytes[i..].iter().position(|&c| c == b'\n')?,
                b'"' => {
                    i += 1;
                    i += bytes[i..].iter().position(|&c| c == b'"' || c == b'\n')?;
                    if bytes[i] == b'\n' {
                        continue;
                    }
                }
                _ if i >= target && depth == 1 => {
                    let start = self.skip_trivia(i + 1);
                    return (start < bytes.len()).then_some(start);
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The first position at or after `pos` that is not whitespace or part of a comment.
    fn skip_trivia(&self, mut pos: usize) -> usize {
        let bytes = self.src.as_bytes();
        while let Some(&b) = bytes.get(pos) {
            match b {
                b' ' | b'\n' | b'\t' | b'\r' | b'\x0C' => pos += 1,
                b'#' => {
                    pos += bytes[pos..]
                        .iter()
                        .position(|&c| c == b'\n')
                        .unwrap_or(bytes.len() - pos)
                }
                _ => break,
            }
        }
        pos
    }

    /// The four bounds `INT:INT, INT:INT]` that follow an access's `[` at
    /// the cursor, with the spans of the numbers and of the `]`, when they
    /// are written plainly: unsigned integers of at most 18 digits with only
    /// spaces or tabs around the separators. Most accesses are; `None` sends
    /// the parser down its general path, which reads the same text the same
    /// way.
    pub(crate) fn constant_bounds(&self) -> Option<([i64; 4], [Span; 4], Span)> {
        let bytes = self.src.as_bytes();
        let mut values = [0i64; 4];
        let mut spans = [Span::default(); 4];
        let mut pos = self.pos;
        let mut i = 0;
        loop {
            while let Some(b' ' | b'\t') = bytes.get(pos) {
                pos += 1;
            }
            let start = pos;
            while let Some(b'0'..=b'9') = bytes.get(pos) {
                pos += 1;
            }
            values[i] = small_int(&bytes[start..pos])?;
            spans[i] = Span::new(start, pos);
            while let Some(b' ' | b'\t') = bytes.get(pos) {
                pos += 1;
            }
            let sep = [b':', b',', b':', b']'][i];
            if bytes.get(pos) != Some(&sep) {
                return None;
            }
            pos += 1;
            i += 1;
            if i == 4 {
                return Some((values, spans, Span::new(pos - 1, pos)));
            }
        }
    }

    /// Moves the cursor to byte `pos` (after a token the caller read itself).
    pub(crate) fn seek(&mut self, pos: usize) {
        self.pos = pos;
    }

    /// The length of the source in bytes.
    pub(crate) fn len(&self) -> usize {
        self.src.len()
    }

    /// The first byte of the next token, without lexing it (`=` after a
    /// name starts an attribute).
    pub(crate) fn next_byte(&self) -> Option<u8> {
        self.src.as_bytes().get(self.skip_trivia(self.pos)).copied()
    }

    /// The end of the run of bytes satisfying `f` from `pos`.
    fn run(&self, mut pos: usize, f: impl Fn(u8) -> bool) -> usize {
        let bytes = self.src.as_bytes();
        while bytes.get(pos).is_some_and(|&b| f(b)) {
            pos += 1;
        }
        pos
    }

    /// The next token and its span.
    #[inline]
    pub(crate) fn next_token(&mut self) -> Result<(Tok<'a>, Span), ParseError> {
        let start = self.skip_trivia(self.pos);
        let bytes = self.src.as_bytes();
        let Some(&b) = bytes.get(start) else {
            self.pos = start;
            return Ok((Tok::Eof, Span::new(start, start)));
        };
        let (tok, end) = match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let end = self.run(start + 1, is_name_char);
                (Tok::Ident(&self.src[start..end]), end)
            }
            b'0'..=b'9' => {
                let end = self.number_end(start);
                (Tok::Num(&self.src[start..end]), end)
            }
            b'[' => (Tok::LBracket, start + 1),
            b']' => (Tok::RBracket, start + 1),
            b',' => (Tok::Comma, start + 1),
            b':' => (Tok::Colon, start + 1),
            b'+' => (Tok::Plus, start + 1),
            b'*' => (Tok::Star, start + 1),
            b'{' => (Tok::LBrace, start + 1),
            b'}' => (Tok::RBrace, start + 1),
            b'=' => (Tok::Eq, start + 1),
            b'|' => (Tok::Pipe, start + 1),
            b'-' => (Tok::Minus, start + 1),
            b'<' if bytes.get(start + 1) == Some(&b'-') => (Tok::Arrow, start + 2),
            b'.' if bytes.get(start + 1) == Some(&b'.') => (Tok::DotDot, start + 2),
            _ => self.rare_token(start)?,
        };
        self.pos = end;
        Ok((tok, Span::new(start, end)))
    }

    /// A label, a string, or the error for a character that starts no token.
    #[cold]
    fn rare_token(&self, start: usize) -> Result<(Tok<'a>, usize), ParseError> {
        match self.src.as_bytes()[start] {
            b'%' => {
                let end = self.run(start + 1, is_name_char);
                if end == start + 1 {
                    return Err(ParseError::Lex {
                        span: Span::new(start, start + 1),
                        message: "expected a label name after '%'".to_string(),
                    });
                }
                Ok((Tok::Label(&self.src[start + 1..end]), end))
            }
            b'"' => {
                let rest = &self.src[start + 1..];
                let Some(len) = rest
                    .find(['"', '\n'])
                    .filter(|&i| rest.as_bytes()[i] == b'"')
                else {
                    return Err(ParseError::Lex {
                        span: Span::new(start, start + 1),
                        message: "unterminated string (a '\"' before the end of the line)"
                            .to_string(),
                    });
                };
                Ok((Tok::Str(&rest[..len]), start + len + 2))
            }
            _ => {
                let ch = self.src[start..].chars().next().unwrap_or('?');
                Err(ParseError::Lex {
                    span: Span::new(start, start + ch.len_utf8()),
                    message: format!("unexpected character {ch:?}"),
                })
            }
        }
    }

    /// The end of the number at `start`: digits, an optional `.digits`
    /// fraction and an optional exponent. A `.` not followed by a digit is
    /// left alone so that `0..4` lexes as a range.
    fn number_end(&self, start: usize) -> usize {
        let digit = |b: u8| b.is_ascii_digit();
        let mut end = self.run(start, digit);
        let at = |i: usize| self.src.as_bytes().get(i).copied();
        if at(end) == Some(b'.') && at(end + 1).is_some_and(digit) {
            end = self.run(end + 1, digit);
        }
        if matches!(at(end), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(at(end + 1), Some(b'+' | b'-')));
            if at(end + 1 + sign).is_some_and(digit) {
                end = self.run(end + 1 + sign, digit);
            }
        }
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok<'_>> {
        let mut l = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let (t, _) = l.next_token().unwrap();
            if t == Tok::Eof {
                return out;
            }
            out.push(t);
        }
    }

    #[test]
    fn ranges_numbers_labels_and_comments() {
        assert_eq!(
            toks("loop k 0..4 { # c\n %a.0: memset t.1 = -1.5e-3 }"),
            vec![
                Tok::Ident("loop"),
                Tok::Ident("k"),
                Tok::Num("0"),
                Tok::DotDot,
                Tok::Num("4"),
                Tok::LBrace,
                Tok::Label("a.0"),
                Tok::Colon,
                Tok::Ident("memset"),
                Tok::Ident("t.1"),
                Tok::Eq,
                Tok::Minus,
                Tok::Num("1.5e-3"),
                Tok::RBrace,
            ]
        );
        assert_eq!(
            toks("tile=128x64 acc<-w"),
            vec![
                Tok::Ident("tile"),
                Tok::Eq,
                Tok::Num("128"),
                Tok::Ident("x64"),
                Tok::Ident("acc"),
                Tok::Arrow,
                Tok::Ident("w"),
            ]
        );
    }

    #[test]
    fn strings_end_at_the_quote_on_their_line() {
        assert_eq!(
            toks(r#"loc="k/a-b.py:7" x"#),
            vec![
                Tok::Ident("loc"),
                Tok::Eq,
                Tok::Str("k/a-b.py:7"),
                Tok::Ident("x")
            ]
        );
        for src in ["\"abc", "\"ab\nc\""] {
            match Lexer::new(src).next_token() {
                Err(ParseError::Lex { span, .. }) => assert_eq!(span, Span::new(0, 1)),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn bad_characters_have_spans() {
        let mut l = Lexer::new("  é");
        match l.next_token() {
            Err(ParseError::Lex { span, message }) => {
                assert_eq!(span, Span::new(2, 4));
                assert_eq!(message, "unexpected character 'é'");
            }
            other => panic!("{other:?}"),
        }
        let mut l = Lexer::new("% x");
        assert!(matches!(l.next_token(), Err(ParseError::Lex { .. })));
    }
}
