//! The two-thread parse of a large module (SPEC §2.5 allows any parse
//! that gives the one-thread result): while one parser reads the
//! declarations and the first blocks, a second thread finds a statement
//! boundary past the middle of the text and parses from there to the end;
//! the first stops at that boundary ([`StopAt`]) and the halves are joined,
//! the second's ids renumbered after the first's.

use super::{Names, PResult, Parser};
use crate::ir::{InstId, LoopId, Module, Stmt, VarId};
use crate::text::lexer::Lexer;
use crate::text::{Parsed, Tile};
use std::sync::{Arc, OnceLock};

/// Where the first of two parsers stops: past byte `target`, a block's
/// body ends at the token that starts at the `boundary` the second parser
/// starts from; `stopped` once it has.
pub(super) struct StopAt {
    target: usize,
    boundary: Arc<OnceLock<Option<usize>>>,
    stopped: bool,
}

/// Sets its cell to `None` when dropped, unless it was set: a thread that
/// unwinds leaves nothing waiting on a cell it was to set.
struct Unblock<'c, T>(&'c OnceLock<Option<T>>);

impl<T> Drop for Unblock<'_, T> {
    fn drop(&mut self) {
        let _ = self.0.set(None);
    }
}

/// What the first of two parsers read: up to the boundary, or everything.
enum Head<'a> {
    Stopped(Parser<'a>),
    Whole(Parsed),
}

/// Below this many bytes of text, a parse stays on one thread.
const SPLIT_BYTES: usize = 4 << 20;

/// What the second of two parsers read: the rest of the block the split
/// falls in, and the blocks after it, in a module of its own.
struct Tail {
    module: Module,
    rest: Vec<Stmt>,
    tiles: Vec<(InstId, Tile)>,
}

impl<'a> Parser<'a> {
    /// The whole module; without spans, a large one on two threads. While
    /// this parser reads the declarations, a second thread finds a
    /// statement boundary a little past the middle of the text, then reads
    /// from there to the end; this one stops there, and the halves are
    /// joined, their ids renumbered. The result is the one-thread parse's;
    /// on any error, or if the halves do not meet, the text is parsed again
    /// on one thread for its error.
    pub(in crate::text) fn module_split(self) -> PResult<Parsed> {
        let len = self.lex.len();
        if self.spans || len < SPLIT_BYTES {
            return self.module();
        }
        // The first thread also reads the declarations, the second also
        // scans for the boundary.
        self.module_in_two(len / 2 + len / 32)
    }

    /// [`Parser::module_split`] with the boundary at the first statement
    /// line at or after byte `target`.
    fn module_in_two(self, target: usize) -> PResult<Parsed> {
        let src = self.lex.src();
        self.halves(target)
            .unwrap_or_else(|| Parser::new(src, false).module())
    }

    /// The two halves of [`Parser::module_in_two`], joined; `None` when they
    /// cannot stand for the one-thread parse (an error, or halves that do
    /// not meet).
    fn halves(mut self, target: usize) -> Option<PResult<Parsed>> {
        let src = self.lex.src();
        let boundary = Arc::new(OnceLock::new());
        let names: OnceLock<Option<Names<'a>>> = OnceLock::new();
        let (head, tail) = std::thread::scope(|s| {
            let tail = s.spawn(|| {
                // Should this thread fail, the other must not wait for it.
                let _unblock = Unblock(&*boundary);
                let split = Lexer::new(src).statement_boundary(target);
                let _ = boundary.set(split);
                let mut second = Parser::new(src, false);
                second.tensors = names.wait().clone()?;
                second.lex.seek(split?);
                Some(second.tail())
            });
            let _unblock = Unblock(&names);
            self.stop = Some(StopAt {
                target,
                boundary: Arc::clone(&boundary),
                stopped: false,
            });
            let header = self.header();
            let _ = names.set(header.is_ok().then(|| self.tensors.clone()));
            let head = header.and_then(|()| self.head());
            (head, tail.join())
        });
        match (head, tail) {
            (_, Err(panic)) => std::panic::resume_unwind(panic),
            (Ok(Head::Whole(parsed)), _) => Some(Ok(parsed)),
            (Ok(Head::Stopped(head)), Ok(Some(Ok(tail)))) => Some(Ok(head.join(tail))),
            _ => None,
        }
    }

    /// The blocks up to the boundary, or to the end when there is none.
    fn head(mut self) -> PResult<Head<'a>> {
        if !self.at_ident("block") {
            return self.blocks().map(Head::Whole);
        }
        while !self.stopped() && self.at_ident("block") {
            self.block()?;
        }
        if self.stopped() {
            Ok(Head::Stopped(self))
        } else {
            self.more_blocks().map(Head::Whole)
        }
    }

    /// Whether a block's body ends here, at the boundary of a split parse
    /// (waiting for the boundary once past the target).
    pub(super) fn at_boundary(&mut self) -> PResult<bool> {
        let start = self.span.start;
        let Some(stop) = self.stop.as_mut() else {
            return Ok(false);
        };
        if start < stop.target {
            return Ok(false);
        }
        match *stop.boundary.wait() {
            Some(at) if start == at => {
                stop.stopped = true;
                Ok(true)
            }
            Some(at) if start > at => {
                Self::invalid(self.span, "the halves of a split parse do not meet")
            }
            Some(_) => Ok(false),
            None => {
                self.stop = None;
                Ok(false)
            }
        }
    }

    /// Whether this first half has reached the boundary.
    fn stopped(&self) -> bool {
        self.stop.as_ref().is_some_and(|s| s.stopped)
    }

    /// From the boundary (the cursor) to the end: the rest of a block's body, its
    /// `}`, and the blocks after it.
    fn tail(mut self) -> PResult<Tail> {
        self.bump()?;
        let rest = self.body("block", "", self.span)?;
        let parsed = self.more_blocks()?;
        Ok(Tail {
            module: parsed.module,
            rest,
            tiles: parsed.source_map.tiles,
        })
    }

    /// This first half with `tail` after it, as one parse would have made them.
    fn join(self, tail: Tail) -> Parsed {
        let mut module = self.module;
        let Tail {
            module: mut second,
            mut rest,
            tiles,
        } = tail;
        let offsets = (module.insts.len(), module.loops.len());
        let vars = module.vars.len() as u32;
        let shift = |body: &mut Vec<Stmt>| {
            for s in body {
                *s = match *s {
                    Stmt::Inst(i) => Stmt::Inst(InstId::new(i.index() + offsets.0)),
                    Stmt::Loop(l) => Stmt::Loop(LoopId::new(l.index() + offsets.1)),
                };
            }
        };
        for inst in &mut second.insts {
            inst.kind.dst_mut().offset_vars(vars);
            inst.kind.for_each_src_mut(|a| a.offset_vars(vars));
        }
        for l in &mut second.loops {
            l.var = VarId::new(l.var.index() + vars as usize);
            shift(&mut l.body);
        }
        shift(&mut rest);
        for b in &mut second.blocks {
            shift(&mut b.body);
        }
        if let Some(b) = module.blocks.last_mut() {
            b.body.append(&mut rest);
        }
        module.insts.append(&mut second.insts);
        module.loops.append(&mut second.loops);
        module.vars.append(&mut second.vars);
        module.blocks.append(&mut second.blocks);
        let mut map = self.map;
        map.tiles.extend(
            tiles
                .into_iter()
                .map(|(i, t)| (InstId::new(i.index() + offsets.0), t)),
        );
        Parsed {
            module,
            source_map: map,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gen::random::{program_text, RandomConfig};
    use crate::text::lexer::Lexer;

    /// Parses `src` on one thread and on two, with the boundary at each of
    /// several targets, and checks that every result is the same; returns
    /// how many of the two-thread parses were joined from two halves.
    fn same_in_two(src: &str) -> usize {
        let one = Parser::new(src, false).module();
        let step = (src.len() / 40).max(1);
        let mut joined = 0;
        for target in (0..src.len() + 2).step_by(step) {
            let two = Parser::new(src, false).module_in_two(target);
            assert_eq!(two, one, "target {target} of\n{src}");
            let split = Lexer::new(src).statement_boundary(target).is_some();
            if split && one.is_ok() {
                let halves = Parser::new(src, false).halves(target);
                assert_eq!(halves, Some(one.clone()), "target {target} of\n{src}");
                joined += 1;
            }
        }
        joined
    }

    #[test]
    fn two_threads_read_what_one_reads() {
        for seed in 0..60 {
            let cfg = RandomConfig {
                tensors: 12,
                ..RandomConfig::syntax()
            };
            let text = program_text(seed, &cfg).unwrap();
            assert!(same_in_two(&text) >= 10, "{text}");
            // Braces the lexer does not read as braces.
            let noisy = text
                .replace("block ", "# {{ } a comment\nblock ")
                .replacen("loc=\"", "loc=\"{", 3);
            assert!(same_in_two(&noisy) >= 10, "{noisy}");
        }
    }

    #[test]
    fn two_threads_report_what_one_reports() {
        let cfg = RandomConfig {
            tensors: 12,
            ..RandomConfig::syntax()
        };
        let text = program_text(3, &cfg).unwrap();
        let last = text.rfind('}').unwrap();
        let mid = text[text.len() / 2..].find("\n  ").unwrap() + text.len() / 2 + 1;
        let broken = [
            format!("{}{}", &text[..last], &text[last + 1..]),
            format!("{}matmul nowhere <- a, b\n{}", &text[..mid], &text[mid..]),
            format!("{}}}\n{}", &text[..mid], &text[mid..]),
            format!("{}loop i 0..2 {{\n{}", &text[..mid], &text[mid..]),
            format!("{}\"\n{}", &text[..mid], &text[mid..]),
            text.replacen("block ", "blok ", 1),
        ];
        for src in &broken {
            let one = Parser::new(src, false).module();
            assert!(one.is_err(), "{src}");
            same_in_two(src);
        }
    }
}
