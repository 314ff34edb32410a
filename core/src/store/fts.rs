//! Full-text search's text rules, the same on both backends: how text splits into words, how a word
//! is normalized, the query language, its rendering into SQLite FTS5 and PostgreSQL tsquery syntax,
//! and the snippets that mark what matched.
//!
//! The index never sees raw text: each block's text is split and normalized here, and the
//! database's own tokenizer only splits on the spaces between the normalized words (SQLite: FTS5's
//! `ascii` tokenizer, whose token characters are ASCII letters and digits and every non-ASCII
//! character; PostgreSQL: a `tsvector` written out lexeme by lexeme). So a query matches the same
//! blocks on either backend.
//!
//! Words: runs of letters, digits and combining marks; each CJK ideograph, kana and emoji is a word
//! of its own (CJK text has no spaces: "数据库" is searched as the phrase 数 据 库). Normalized:
//! lower case, accents removed (NFD without combining marks), so `Élan` finds `elan` and back.

use std::ops::Range;

use unicode_normalization::UnicodeNormalization;

use crate::error::{Error, Result};

/// A word of a text: where it is and what it is normalized to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Word {
    pub(crate) span: Range<usize>,
    pub(crate) norm: String,
}

/// What a character is to the word splitter.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Part of a word (letters, digits, combining marks after them).
    Word,
    /// A word by itself (CJK ideographs, kana, emoji and pictographs).
    Alone,
    /// Between words.
    Gap,
}

fn class(c: char) -> Class {
    let n = c as u32;
    let alone = matches!(n,
        0x3040..=0x30FF | 0x31F0..=0x31FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xFF66..=0xFF9F
        | 0x20000..=0x3FFFF
        | 0x2300..=0x23FF | 0x2600..=0x27BF | 0x2B00..=0x2BFF | 0x1F000..=0x1FAFF);
    if alone {
        Class::Alone
    } else if c.is_alphanumeric() || is_mark(c) {
        Class::Word
    } else {
        Class::Gap
    }
}

/// Combining marks (the blocks of them that Latin, Greek, Cyrillic and the symbols use).
fn is_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x064B..=0x065F | 0x0900..=0x0903 | 0x093A..=0x094F
        | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

/// A word in its normalized form: accents of the alphabets (combining marks of [`is_mark`])
/// dropped after canonical decomposition, recomposed (so that kana keep their voicing marks),
/// lower case.
pub(crate) fn normalize(word: &str) -> String {
    if word.is_ascii() {
        return word.to_ascii_lowercase();
    }
    let stripped: String = word.nfd().filter(|c| !is_mark(*c)).collect();
    stripped.nfc().flat_map(char::to_lowercase).collect()
}

/// The words of `text`, in order.
pub(crate) fn words(text: &str) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match class(c) {
            Class::Word => {
                // A mark with no word before it is not a word.
                if start.is_none() && !is_mark(c) {
                    start = Some(i);
                }
            }
            class => {
                if let Some(s) = start.take() {
                    out.push(word(text, s..i));
                }
                if class == Class::Alone {
                    out.push(word(text, i..i + c.len_utf8()));
                }
            }
        }
    }
    if let Some(s) = start {
        out.push(word(text, s..text.len()));
    }
    out.retain(|w| !w.norm.is_empty());
    out
}

fn word(text: &str, span: Range<usize>) -> Word {
    let norm = normalize(&text[span.clone()]);
    Word { span, norm }
}

/// The text an index holds for `text`: its normalized words, one space between each.
pub(crate) fn index_text(text: &str) -> String {
    if text.is_ascii() {
        // The common case, without a word list: ASCII letters and digits are the words.
        let mut out = String::with_capacity(text.len());
        let mut gap = false;
        for b in text.bytes() {
            if b.is_ascii_alphanumeric() {
                if gap && !out.is_empty() {
                    out.push(' ');
                }
                gap = false;
                out.push(b.to_ascii_lowercase() as char);
            } else {
                gap = true;
            }
        }
        return out;
    }
    let mut out = String::with_capacity(text.len());
    for w in words(text) {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&w.norm);
    }
    out
}

/// Most positions PostgreSQL keeps in a `tsvector`; later words share the last one.
const MAX_PG_POSITION: usize = 16_383;

/// `text` as a PostgreSQL `tsvector` literal (`'word':1 'other':2 …`), to be cast with `::tsvector`.
pub(crate) fn pg_tsvector(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for (i, w) in words(text).into_iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        pg_quote(&w.norm, &mut out);
        out.push(':');
        out.push_str(&(i + 1).min(MAX_PG_POSITION).to_string());
    }
    out
}

fn pg_quote(lexeme: &str, out: &mut String) {
    out.push('\'');
    for c in lexeme.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Query {
    /// Words in a row (one word, or a phrase); the last one a prefix when `prefix`.
    Term { words: Vec<String>, prefix: bool },
    And(Vec<Query>),
    Or(Vec<Query>),
    /// The left side without the right.
    Not(Box<Query>, Box<Query>),
}

/// A piece of query text.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Word { text: String, prefix: bool, at: usize },
    Phrase { text: String, prefix: bool, at: usize },
    And(usize),
    Or(usize),
    Not(usize),
    Open(usize),
    Close(usize),
}

fn bad(message: impl Into<String>) -> Error {
    Error::invalid_field("query", message)
}

fn pieces(query: &str) -> Result<Vec<Piece>> {
    let mut out = Vec::new();
    let mut chars = query.char_indices().peekable();
    while let Some(&(at, c)) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' => {
                chars.next();
                out.push(Piece::Open(at));
            }
            ')' => {
                chars.next();
                out.push(Piece::Close(at));
            }
            '"' => {
                chars.next();
                let mut text = String::new();
                let mut closed = false;
                for (_, c) in chars.by_ref() {
                    if c == '"' {
                        closed = true;
                        break;
                    }
                    text.push(c);
                }
                if !closed {
                    return Err(bad(format!("the phrase opened at character {} has no closing quote", query[..at].chars().count() + 1)));
                }
                let prefix = chars.peek().is_some_and(|&(_, c)| c == '*');
                if prefix {
                    chars.next();
                }
                out.push(Piece::Phrase { text, prefix, at });
            }
            _ => {
                let mut text = String::new();
                while let Some(&(_, c)) = chars.peek() {
                    if c.is_whitespace() || matches!(c, '(' | ')' | '"') {
                        break;
                    }
                    text.push(c);
                    chars.next();
                }
                let piece = match text.as_str() {
                    "AND" => Piece::And(at),
                    "OR" => Piece::Or(at),
                    "NOT" => Piece::Not(at),
                    _ => {
                        let prefix = text.ends_with('*');
                        Piece::Word { text: text.trim_end_matches('*').to_string(), prefix, at }
                    }
                };
                out.push(piece);
            }
        }
    }
    Ok(out)
}

/// Parses the query language: words, `"phrases"`, `prefix*`, `AND` (also implied between terms),
/// `OR`, `a NOT b` and parentheses; `AND`, `OR` and `NOT` in capitals are operators, in lower case
/// words. A malformed query is `INVALID_INPUT` on field `query`, saying what is wrong and where.
pub(crate) fn parse(query: &str) -> Result<Query> {
    let pieces = pieces(query)?;
    let mut parser = Parser { query, pieces, next: 0 };
    if parser.pieces.is_empty() {
        return Err(bad("the query is empty"));
    }
    let q = parser.or()?;
    if let Some(piece) = parser.pieces.get(parser.next) {
        return Err(match piece {
            Piece::Close(at) => bad(format!("the ')' at character {} closes no '('", parser.column(*at))),
            other => bad(format!("unexpected {} at character {}", parser.describe(other), parser.column(parser.at(other)))),
        });
    }
    q.ok_or_else(|| bad("the query holds no letters or digits to search for"))
}

struct Parser<'q> {
    query: &'q str,
    pieces: Vec<Piece>,
    next: usize,
}

impl Parser<'_> {
    fn column(&self, at: usize) -> usize {
        self.query[..at].chars().count() + 1
    }

    fn at(&self, piece: &Piece) -> usize {
        match piece {
            Piece::Word { at, .. } | Piece::Phrase { at, .. } => *at,
            Piece::And(at) | Piece::Or(at) | Piece::Not(at) | Piece::Open(at) | Piece::Close(at) => *at,
        }
    }

    fn describe(&self, piece: &Piece) -> String {
        match piece {
            Piece::Word { text, .. } => format!("word {text:?}"),
            Piece::Phrase { text, .. } => format!("phrase {text:?}"),
            Piece::And(_) => "AND".into(),
            Piece::Or(_) => "OR".into(),
            Piece::Not(_) => "NOT".into(),
            Piece::Open(_) => "'('".into(),
            Piece::Close(_) => "')'".into(),
        }
    }

    fn peek(&self) -> Option<&Piece> {
        self.pieces.get(self.next)
    }

    /// Terms without a letter or digit (`&`, `C++`'s `++`) search for nothing and drop out; an
    /// operator with nothing left on one side drops out with them.
    fn or(&mut self) -> Result<Option<Query>> {
        let mut parts: Vec<Query> = self.and()?.into_iter().collect();
        while let Some(Piece::Or(_)) = self.peek() {
            self.next += 1;
            parts.extend(self.and()?);
        }
        Ok(join(parts, Query::Or))
    }

    fn and(&mut self) -> Result<Option<Query>> {
        let mut parts: Vec<Query> = self.not()?.into_iter().collect();
        loop {
            match self.peek() {
                Some(Piece::And(_)) => {
                    self.next += 1;
                    // `a AND NOT b` is `a NOT b`.
                    if let Some(Piece::Not(at)) = self.peek().cloned() {
                        self.next += 1;
                        let right = self.primary("NOT")?;
                        let Some(left) = join(std::mem::take(&mut parts), Query::And) else {
                            return Err(bad(format!("NOT at character {} needs a term before it: write `a NOT b`", self.column(at))));
                        };
                        parts.push(match right {
                            Some(right) => Query::Not(Box::new(left), Box::new(right)),
                            None => left,
                        });
                        continue;
                    }
                    parts.extend(self.not()?);
                }
                Some(Piece::Word { .. } | Piece::Phrase { .. } | Piece::Open(_)) => parts.extend(self.not()?),
                _ => break,
            }
        }
        Ok(join(parts, Query::And))
    }

    fn not(&mut self) -> Result<Option<Query>> {
        let mut left = self.primary("")?;
        while let Some(Piece::Not(at)) = self.peek().cloned() {
            self.next += 1;
            let right = self.primary("NOT")?;
            left = match (left, right) {
                (Some(l), Some(r)) => Some(Query::Not(Box::new(l), Box::new(r))),
                (Some(l), None) => Some(l),
                (None, _) => return Err(bad(format!("NOT at character {} needs a term before it: write `a NOT b`", self.column(at)))),
            };
        }
        Ok(left)
    }

    fn primary(&mut self, after: &str) -> Result<Option<Query>> {
        let Some(piece) = self.peek().cloned() else {
            return Err(bad(if after.is_empty() { "the query ends where a word was expected".to_string() } else { format!("{after} at the end of the query needs a word after it") }));
        };
        self.next += 1;
        match piece {
            Piece::Word { text, prefix, .. } | Piece::Phrase { text, prefix, .. } => {
                let words: Vec<String> = words(&text).into_iter().map(|w| w.norm).collect();
                Ok((!words.is_empty()).then_some(Query::Term { words, prefix }))
            }
            Piece::Open(at) => {
                let inner = self.or()?;
                match self.peek() {
                    Some(Piece::Close(_)) => {
                        self.next += 1;
                        Ok(inner)
                    }
                    _ => Err(bad(format!("the '(' at character {} is not closed", self.column(at)))),
                }
            }
            Piece::Not(at) => Err(bad(format!("NOT at character {} needs a term before it: write `a NOT b`", self.column(at)))),
            other => Err(bad(format!("{} at character {} needs a term before it", self.describe(&other), self.column(self.at(&other))))),
        }
    }
}

/// One query of `parts`: none, the one, or `make` of them all.
fn join(mut parts: Vec<Query>, make: fn(Vec<Query>) -> Query) -> Option<Query> {
    match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(make(parts)),
    }
}

impl Query {
    /// The query in SQLite FTS5's syntax, over the index's `text` column.
    pub(crate) fn fts5(&self) -> String {
        match self {
            Query::Term { words, prefix } => format!("\"{}\"{}", words.join(" "), if *prefix { " *" } else { "" }),
            Query::And(parts) => parts.iter().map(|p| format!("({})", p.fts5())).collect::<Vec<_>>().join(" AND "),
            Query::Or(parts) => parts.iter().map(|p| format!("({})", p.fts5())).collect::<Vec<_>>().join(" OR "),
            Query::Not(left, right) => format!("({}) NOT ({})", left.fts5(), right.fts5()),
        }
    }

    /// The query as a PostgreSQL `tsquery` literal, to be cast with `::tsquery`.
    pub(crate) fn tsquery(&self) -> String {
        match self {
            Query::Term { words, prefix } => {
                let mut out = String::new();
                for (i, w) in words.iter().enumerate() {
                    if i > 0 {
                        out.push_str(" <-> ");
                    }
                    pg_quote(w, &mut out);
                    if *prefix && i + 1 == words.len() {
                        out.push_str(":*");
                    }
                }
                if words.len() > 1 {
                    format!("({out})")
                } else {
                    out
                }
            }
            Query::And(parts) => format!("({})", parts.iter().map(Query::tsquery).collect::<Vec<_>>().join(" & ")),
            Query::Or(parts) => format!("({})", parts.iter().map(Query::tsquery).collect::<Vec<_>>().join(" | ")),
            Query::Not(left, right) => format!("({} & !{})", left.tsquery(), right.tsquery()),
        }
    }

    /// The terms whose matches a snippet marks: every term not under the right side of a NOT.
    fn positive_terms<'a>(&'a self, out: &mut Vec<(&'a [String], bool)>) {
        match self {
            Query::Term { words, prefix } => out.push((words, *prefix)),
            Query::And(parts) | Query::Or(parts) => parts.iter().for_each(|p| p.positive_terms(out)),
            Query::Not(left, _) => left.positive_terms(out),
        }
    }

    /// The byte ranges of `text` that the query's terms match (a phrase: from its first word to its last).
    pub(crate) fn matches(&self, text: &str) -> Vec<Range<usize>> {
        let mut terms = Vec::new();
        self.positive_terms(&mut terms);
        let found = words(text);
        let mut out = Vec::new();
        for (i, _) in found.iter().enumerate() {
            for (term, prefix) in &terms {
                let n = term.len();
                if i + n > found.len() {
                    continue;
                }
                let hit = term.iter().enumerate().all(|(k, t)| {
                    let w = &found[i + k].norm;
                    if *prefix && k + 1 == n {
                        w.starts_with(t.as_str())
                    } else {
                        w == t
                    }
                });
                if hit {
                    out.push(found[i].span.start..found[i + n - 1].span.end);
                }
            }
        }
        out.sort_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
        // Overlapping matches become one.
        let mut merged: Vec<Range<usize>> = Vec::new();
        for r in out {
            match merged.last_mut() {
                Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
                _ => merged.push(r),
            }
        }
        merged
    }
}

/// Marks put around each match in a snippet.
pub const MATCH_START: &str = "\u{ab}";
/// See [`MATCH_START`].
pub const MATCH_END: &str = "\u{bb}";

/// Characters of context a snippet shows around its first match, on each side.
const CONTEXT_CHARS: usize = 80;

/// A piece of `text` around the first of `matches`, each match in it between [`MATCH_START`] and
/// [`MATCH_END`], with `…` where text is left out, on one line.
pub(crate) fn snippet(text: &str, matches: &[Range<usize>]) -> String {
    let first = matches.first().map_or(0..0, Clone::clone);
    let start = back_chars(text, first.start, CONTEXT_CHARS);
    let end = forward_chars(text, first.end, CONTEXT_CHARS + (CONTEXT_CHARS - text[start..first.start].chars().count()));
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let mut at = start;
    for m in matches.iter().filter(|m| m.start >= start && m.end <= end) {
        out.push_str(&text[at..m.start]);
        out.push_str(MATCH_START);
        out.push_str(&text[m.clone()]);
        out.push_str(MATCH_END);
        at = m.end;
    }
    out.push_str(&text[at..end]);
    if end < text.len() {
        out.push('…');
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn back_chars(text: &str, from: usize, n: usize) -> usize {
    text[..from].char_indices().rev().nth(n.saturating_sub(1)).map_or(0, |(i, _)| i)
}

fn forward_chars(text: &str, from: usize, n: usize) -> usize {
    text[from..].char_indices().nth(n).map_or(text.len(), |(i, _)| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norms(text: &str) -> Vec<String> {
        words(text).into_iter().map(|w| w.norm).collect()
    }

    #[test]
    fn words_are_letters_and_digits_cjk_and_emoji_alone_accents_gone() {
        assert_eq!(norms("Hello, wörld! snake_case 3.14"), ["hello", "world", "snake", "case", "3", "14"]);
        assert_eq!(norms("我们讨论数据库"), ["我", "们", "讨", "论", "数", "据", "库"]);
        assert_eq!(norms("カタカナとひらがな"), ["カ", "タ", "カ", "ナ", "と", "ひ", "ら", "が", "な"]);
        assert_eq!(norms("ship it 🚀🚀 now"), ["ship", "it", "🚀", "🚀", "now"]);
        assert_eq!(norms("Élan CAFÉ naïve"), ["elan", "cafe", "naive"]);
        assert_eq!(norms("e\u{301}te\u{301}"), ["ete"], "combining accents");
        assert_eq!(norms("한국어 텍스트"), ["한국어", "텍스트"]);
        assert_eq!(index_text("Ünïcode  rocks"), "unicode rocks");
        for text in ["  Hello, World!  x_y 3.14 ", "", "...", "a", "CamelCase_snake-kebab"] {
            let slow: Vec<String> = words(text).into_iter().map(|w| w.norm).collect();
            assert_eq!(index_text(text), slow.join(" "), "the ASCII path gives what the general one does: {text:?}");
        }
        let w = words("a Élan b");
        assert_eq!(&"a Élan b"[w[1].span.clone()], "Élan");
    }

    #[test]
    fn the_query_language_parses_and_renders_for_both_backends() {
        let q = parse("rust \"error handling\" pars* OR tokio NOT async").unwrap();
        assert_eq!(q.fts5(), "((\"rust\") AND (\"error handling\") AND (\"pars\" *)) OR ((\"tokio\") NOT (\"async\"))");
        assert_eq!(q.tsquery(), "(('rust' & ('error' <-> 'handling') & 'pars':*) | ('tokio' & !'async'))");
        assert_eq!(parse("数据库").unwrap(), Query::Term { words: vec!["数".into(), "据".into(), "库".into()], prefix: false });
        assert_eq!(parse("a AND NOT b").unwrap(), Query::Not(Box::new(Query::Term { words: vec!["a".into()], prefix: false }), Box::new(Query::Term { words: vec!["b".into()], prefix: false })));
        assert_eq!(parse("(a OR b) c").unwrap().fts5(), "((\"a\") OR (\"b\")) AND (\"c\")");
        assert_eq!(parse("and or not").unwrap().fts5(), "(\"and\") AND (\"or\") AND (\"not\")", "lower case is words");
        assert_eq!(parse("it's").unwrap().tsquery(), "('it' <-> 's')");
        assert_eq!(parse("C++ & Rust").unwrap().fts5(), "(\"c\") AND (\"rust\")", "terms without letters drop out");
        assert_eq!(parse("a NOT &").unwrap().fts5(), "\"a\"");
    }

    #[test]
    fn malformed_queries_say_what_and_where() {
        let cases = [
            ("", "the query is empty"),
            ("   ", "the query is empty"),
            ("\"open phrase", "the phrase opened at character 1 has no closing quote"),
            ("(a OR b", "the '(' at character 1 is not closed"),
            ("a)", "the ')' at character 2 closes no '('"),
            ("NOT a", "NOT at character 1 needs a term before it: write `a NOT b`"),
            ("a OR", "the query ends where a word was expected"),
            ("a NOT", "NOT at the end of the query needs a word after it"),
            ("AND a", "AND at character 1 needs a term before it"),
            ("!!! &&", "the query holds no letters or digits to search for"),
        ];
        for (query, message) in cases {
            let err = parse(query).unwrap_err();
            assert_eq!(err.location().unwrap().field.as_deref(), Some("query"), "{query}");
            assert!(err.to_string().contains(message), "{query:?}: {err}");
        }
    }

    #[test]
    fn snippets_mark_what_matched() {
        let q = parse("\"error handling\" pars*").unwrap();
        let text = "We discussed error   handling in the parser and Parsing of JSON.";
        let m = q.matches(text);
        assert_eq!(snippet(text, &m), "We discussed «error handling» in the «parser» and «Parsing» of JSON.");
        let long = format!("{} needle {}", "x ".repeat(200), "y ".repeat(200));
        let s = snippet(&long, &parse("needle").unwrap().matches(&long));
        assert!(s.starts_with('…') && s.ends_with('…') && s.contains("«needle»"), "{s}");
        assert!(s.chars().count() < 200, "{s}");
        assert_eq!(parse("Élan").unwrap().matches("an élan vital"), vec![3..8]);
    }

    #[test]
    fn tsvectors_quote_and_number_their_lexemes() {
        assert_eq!(pg_tsvector("It's a b"), "'it':1 's':2 'a':3 'b':4");
        assert_eq!(pg_tsvector(""), "");
    }
}
