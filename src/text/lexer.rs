//! Tokenizer for the text format (SPEC §2): identifiers, numbers, labels and
//! punctuation, with byte spans. Whitespace and `#` comments are skipped;
//! newlines carry no meaning.

use super::{ParseError, Span};

/// A token. Text payloads borrow from the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok<'a> {
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
    pub fn describe(&self) -> String {
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
pub struct Lexer<'a> {
    src: &'a str,
    pos: usize,
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.'
}

/// Whether `s` is a valid name (`[A-Za-z_][A-Za-z0-9_.]*`).
pub fn is_name(s: &str) -> bool {
    s.bytes().next().is_some_and(is_name_start) && s.bytes().all(is_name_char)
}

/// Whether `s` is a valid label name (`[A-Za-z0-9_.]+`, after the `%`).
pub fn is_label(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_name_char)
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    pub fn new(src: &'a str) -> Self {
        Lexer { src, pos: 0 }
    }

    fn peek_byte(&self, off: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + off).copied()
    }

    fn skip_trivia(&mut self) {
        while let Some(b) = self.peek_byte(0) {
            if b.is_ascii_whitespace() {
                self.pos += 1;
            } else if b == b'#' {
                let rest = &self.src[self.pos..];
                self.pos += rest.find('\n').unwrap_or(rest.len());
            } else {
                break;
            }
        }
    }

    fn take_while(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek_byte(0).is_some_and(&f) {
            self.pos += 1;
        }
    }

    /// The next token and its span.
    pub fn next_token(&mut self) -> Result<(Tok<'a>, Span), ParseError> {
        self.skip_trivia();
        let start = self.pos;
        let Some(b) = self.peek_byte(0) else {
            return Ok((Tok::Eof, Span::new(start, start)));
        };
        let tok = if is_name_start(b) {
            self.take_while(is_name_char);
            Tok::Ident(&self.src[start..self.pos])
        } else if b.is_ascii_digit() {
            self.lex_number();
            Tok::Num(&self.src[start..self.pos])
        } else if b == b'%' {
            self.pos += 1;
            self.take_while(is_name_char);
            if self.pos == start + 1 {
                return Err(ParseError::Lex {
                    span: Span::new(start, start + 1),
                    message: "expected a label name after '%'".to_string(),
                });
            }
            Tok::Label(&self.src[start + 1..self.pos])
        } else if b == b'"' {
            let rest = &self.src[start + 1..];
            let Some(len) = rest
                .find(['"', '\n'])
                .filter(|&i| rest.as_bytes()[i] == b'"')
            else {
                return Err(ParseError::Lex {
                    span: Span::new(start, start + 1),
                    message: "unterminated string (a '\"' before the end of the line)".to_string(),
                });
            };
            self.pos = start + len + 2;
            Tok::Str(&rest[..len])
        } else {
            let two = (b, self.peek_byte(1));
            let (tok, len) = match two {
                (b'<', Some(b'-')) => (Tok::Arrow, 2),
                (b'.', Some(b'.')) => (Tok::DotDot, 2),
                (b'[', _) => (Tok::LBracket, 1),
                (b']', _) => (Tok::RBracket, 1),
                (b'{', _) => (Tok::LBrace, 1),
                (b'}', _) => (Tok::RBrace, 1),
                (b',', _) => (Tok::Comma, 1),
                (b':', _) => (Tok::Colon, 1),
                (b'=', _) => (Tok::Eq, 1),
                (b'+', _) => (Tok::Plus, 1),
                (b'-', _) => (Tok::Minus, 1),
                (b'*', _) => (Tok::Star, 1),
                (b'|', _) => (Tok::Pipe, 1),
                _ => {
                    let ch = self.src[start..].chars().next().unwrap_or('?');
                    return Err(ParseError::Lex {
                        span: Span::new(start, start + ch.len_utf8()),
                        message: format!("unexpected character {ch:?}"),
                    });
                }
            };
            self.pos += len;
            tok
        };
        Ok((tok, Span::new(start, self.pos)))
    }

    /// Digits, an optional `.digits` fraction and an optional exponent. A `.`
    /// not followed by a digit is left alone so that `0..4` lexes as a range.
    fn lex_number(&mut self) {
        self.take_while(|b| b.is_ascii_digit());
        if self.peek_byte(0) == Some(b'.') && self.peek_byte(1).is_some_and(|b| b.is_ascii_digit())
        {
            self.pos += 1;
            self.take_while(|b| b.is_ascii_digit());
        }
        if matches!(self.peek_byte(0), Some(b'e' | b'E')) {
            let sign = usize::from(matches!(self.peek_byte(1), Some(b'+' | b'-')));
            if self.peek_byte(1 + sign).is_some_and(|b| b.is_ascii_digit()) {
                self.pos += 1 + sign;
                self.take_while(|b| b.is_ascii_digit());
            }
        }
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
