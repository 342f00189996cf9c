//! A cheap, linear check of YAML (and JSON) text before it goes to the parser: how deeply its
//! collections nest and how many tokens it has.
//!
//! Why: `serde_yaml` parses with libyaml (`unsafe-libyaml`), whose scanner checks every open
//! flow level's simple key on every token, so `x: [[[…]]]` nested `n` deep costs `n²` steps
//! (100,000 deep: 41 s of CPU), and every token becomes an event held in memory before the
//! document is deserialized (a 4 MiB `- - - …` chain: 2 million levels, 600 MB). Neither is
//! bounded by the size cap of the file or by serde's recursion limit, which apply too late.
//!
//! The check runs libyaml's scanner rules (`yaml_parser_fetch_next_token` and the scalar
//! scanners of libyaml 0.2.5, which `unsafe-libyaml` translates) far enough to know where each
//! token starts and ends: the flow level, the stack of block indentation (`roll_indent`,
//! `unroll_indent`), simple keys (a key's column opens a block mapping), plain-scalar
//! continuation lines, quoted scalars, block scalars (`|`, `>`) with their indentation rules,
//! comments, anchors, tags and document markers. It keeps no token, only counters, so it is
//! linear in the text and allocates at most one entry per open flow level (bounded by the
//! limit). The depth it reports is libyaml's: open flow collections plus open block
//! collections. Where libyaml would stop with an error the check goes on (what follows an error
//! is never parsed, so counting it can only refuse a file that would not parse anyway).

/// What the text holds, as far as the check looked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape {
    /// The deepest nesting of collections (flow and block together).
    pub depth: usize,
    /// Tokens seen (scalars, indicators, collection starts and ends, properties).
    pub tokens: usize,
}

/// Why the text is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// Collections nested deeper than the limit.
    #[error(
        "its collections nest deeper than {limit} levels (at line {line}); such nesting costs \
         the YAML parser time that grows with the square of the depth, so it is not parsed"
    )]
    TooDeep {
        /// The limit.
        limit: usize,
        /// The 1-based line where the limit was passed.
        line: usize,
    },
    /// More tokens than the limit.
    #[error(
        "it has more than {limit} YAML tokens (at line {line}); each becomes an event held in \
         memory while the file is parsed, so it is not parsed"
    )]
    TooManyTokens {
        /// The limit.
        limit: usize,
        /// The 1-based line where the limit was passed.
        line: usize,
    },
}

/// The limits of [`check`].
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The deepest nesting accepted.
    pub depth: usize,
    /// The most tokens accepted.
    pub tokens: usize,
}

#[derive(Debug, Clone, Copy, Default)]
struct SimpleKey {
    possible: bool,
    line: usize,
    index: usize,
    column: isize,
}

struct Scanner<'a> {
    b: &'a [u8],
    /// Byte offset.
    i: usize,
    /// libyaml's mark: character index, line, column (characters).
    index: usize,
    line: usize,
    column: isize,
    flow: usize,
    indent: isize,
    indents: Vec<isize>,
    /// One simple key per flow level (the block level first).
    keys: Vec<SimpleKey>,
    key_allowed: bool,
    limits: Limits,
    shape: Shape,
}

/// Checks `text` against `limits`.
///
/// # Errors
///
/// The nesting or the token count is past its limit.
pub fn check(text: &str, limits: Limits) -> Result<Shape, Refused> {
    let mut s = Scanner {
        b: text.as_bytes(),
        i: 0,
        index: 0,
        line: 0,
        column: 0,
        flow: 0,
        indent: -1,
        indents: Vec::new(),
        keys: vec![SimpleKey::default()],
        key_allowed: true,
        limits,
        shape: Shape::default(),
    };
    s.run()?;
    Ok(s.shape)
}

fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

fn is_alpha(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// Characters of a tag's handle or suffix (libyaml's `yaml_parser_scan_tag_uri` without its
/// `uri_char` extras).
fn is_tag_char(c: u8) -> bool {
    is_alpha(c) || b";/?:@&=+$.%!~*'()".contains(&c)
}

impl Scanner<'_> {
    fn at(&self, k: usize) -> Option<u8> {
        self.b.get(self.i + k).copied()
    }

    fn cur(&self) -> Option<u8> {
        self.at(0)
    }

    /// The length in bytes of a line break at byte offset `at` (CR LF, CR, LF, NEL, LS, PS), or
    /// 0.
    fn break_len_at(&self, at: usize) -> usize {
        match self.b.get(at..).unwrap_or_default() {
            [b'\r', b'\n', ..] => 2,
            [b'\r' | b'\n', ..] => 1,
            [0xC2, 0x85, ..] => 2,
            [0xE2, 0x80, 0xA8 | 0xA9, ..] => 3,
            _ => 0,
        }
    }

    fn is_break_at(&self, k: usize) -> bool {
        self.break_len_at(self.i + k) > 0
    }

    fn is_z_at(&self, k: usize) -> bool {
        self.at(k).is_none_or(|c| c == 0)
    }

    fn is_blankz_at(&self, k: usize) -> bool {
        self.is_z_at(k) || self.at(k).is_some_and(is_blank) || self.is_break_at(k)
    }

    /// Skips one character (not a line break).
    fn skip(&mut self) {
        let Some(&c) = self.b.get(self.i) else {
            return;
        };
        let len = match c {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        self.i = (self.i + len).min(self.b.len());
        self.index += 1;
        self.column += 1;
    }

    /// Skips a line break (or one character, if none is here).
    fn skip_line(&mut self) {
        let n = self.break_len_at(self.i);
        if n == 0 {
            self.skip();
            return;
        }
        self.i += n;
        self.index += 1;
        self.column = 0;
        self.line += 1;
    }

    fn token(&mut self) -> Result<(), Refused> {
        self.shape.tokens += 1;
        if self.shape.tokens > self.limits.tokens {
            return Err(Refused::TooManyTokens {
                limit: self.limits.tokens,
                line: self.line + 1,
            });
        }
        Ok(())
    }

    fn depth(&mut self) -> Result<(), Refused> {
        let d = self.flow + self.indents.len();
        self.shape.depth = self.shape.depth.max(d);
        if d > self.limits.depth {
            return Err(Refused::TooDeep {
                limit: self.limits.depth,
                line: self.line + 1,
            });
        }
        Ok(())
    }

    fn roll(&mut self, column: isize) -> Result<(), Refused> {
        if self.flow == 0 && self.indent < column {
            self.indents.push(self.indent);
            self.indent = column;
            self.depth()?;
        }
        Ok(())
    }

    fn unroll(&mut self, column: isize) {
        if self.flow != 0 {
            return;
        }
        while self.indent > column {
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    fn key(&mut self) -> &mut SimpleKey {
        if self.keys.is_empty() {
            self.keys.push(SimpleKey::default());
        }
        let last = self.keys.len() - 1;
        &mut self.keys[last]
    }

    fn save_key(&mut self) {
        if self.key_allowed {
            let k = SimpleKey {
                possible: true,
                line: self.line,
                index: self.index,
                column: self.column,
            };
            *self.key() = k;
        }
    }

    fn remove_key(&mut self) {
        self.key().possible = false;
    }

    fn stale_keys(&mut self) {
        let (line, index) = (self.line, self.index);
        for k in &mut self.keys {
            if k.possible && (k.line < line || k.index + 1024 < index) {
                k.possible = false;
            }
        }
    }

    fn scan_to_next_token(&mut self) {
        loop {
            if self.column == 0 && self.b[self.i..].starts_with("\u{FEFF}".as_bytes()) {
                self.skip();
            }
            while self.cur() == Some(b' ')
                || ((self.flow != 0 || !self.key_allowed) && self.cur() == Some(b'\t'))
            {
                self.skip();
            }
            if self.cur() == Some(b'#') {
                while !(self.is_z_at(0) || self.is_break_at(0)) {
                    self.skip();
                }
            }
            if !self.is_break_at(0) {
                break;
            }
            self.skip_line();
            if self.flow == 0 {
                self.key_allowed = true;
            }
        }
    }

    fn document_marker(&self) -> bool {
        self.column == 0
            && (self.b[self.i..].starts_with(b"---") || self.b[self.i..].starts_with(b"..."))
            && self.is_blankz_at(3)
    }

    fn run(&mut self) -> Result<(), Refused> {
        loop {
            self.scan_to_next_token();
            self.stale_keys();
            self.unroll(self.column);
            let Some(c) = self.cur() else {
                return Ok(());
            };
            if c == 0 {
                // libyaml ends the stream at a NUL.
                return Ok(());
            }
            self.token()?;
            if self.column == 0 && c == b'%' {
                self.unroll(-1);
                self.remove_key();
                self.key_allowed = false;
                while !(self.is_z_at(0) || self.is_break_at(0)) {
                    self.skip();
                }
                continue;
            }
            if self.document_marker() {
                self.unroll(-1);
                self.remove_key();
                self.key_allowed = false;
                self.skip();
                self.skip();
                self.skip();
                continue;
            }
            match c {
                b'[' | b'{' => {
                    self.save_key();
                    self.flow += 1;
                    self.keys.push(SimpleKey::default());
                    self.key_allowed = true;
                    self.skip();
                    self.depth()?;
                }
                b']' | b'}' => {
                    self.remove_key();
                    if self.flow != 0 {
                        self.flow -= 1;
                        self.keys.pop();
                    }
                    self.key_allowed = false;
                    self.skip();
                }
                b',' => {
                    self.remove_key();
                    self.key_allowed = true;
                    self.skip();
                }
                b'-' if self.is_blankz_at(1) => {
                    if self.flow == 0 {
                        self.roll(self.column)?;
                    }
                    self.remove_key();
                    self.key_allowed = true;
                    self.skip();
                }
                b'?' if self.flow != 0 || self.is_blankz_at(1) => {
                    if self.flow == 0 {
                        self.roll(self.column)?;
                    }
                    self.remove_key();
                    self.key_allowed = self.flow == 0;
                    self.skip();
                }
                b':' if self.flow != 0 || self.is_blankz_at(1) => {
                    let k = *self.key();
                    if k.possible {
                        self.roll(k.column)?;
                        self.key().possible = false;
                        self.key_allowed = false;
                    } else {
                        if self.flow == 0 {
                            self.roll(self.column)?;
                        }
                        self.key_allowed = self.flow == 0;
                    }
                    self.skip();
                }
                b'*' | b'&' => {
                    self.save_key();
                    self.key_allowed = false;
                    self.skip();
                    while self.cur().is_some_and(is_alpha) {
                        self.skip();
                    }
                }
                b'!' => {
                    self.save_key();
                    self.key_allowed = false;
                    self.scan_tag();
                }
                b'|' | b'>' if self.flow == 0 => {
                    self.remove_key();
                    self.key_allowed = true;
                    self.scan_block_scalar();
                }
                b'\'' | b'"' => {
                    self.save_key();
                    self.key_allowed = false;
                    self.scan_quoted(c == b'\'');
                }
                _ if self.plain_starts(c) => {
                    self.save_key();
                    self.key_allowed = false;
                    self.scan_plain();
                }
                // libyaml stops here ("found character that cannot start any token").
                _ => self.skip(),
            }
        }
    }

    fn plain_starts(&self, c: u8) -> bool {
        let indicator = self.is_blankz_at(0) || b"-?:,[]{}#&*!|>'\"%@`".contains(&c);
        !indicator
            || (c == b'-' && !self.at(1).is_some_and(is_blank))
            || (self.flow == 0 && (c == b'?' || c == b':'))
    }

    fn scan_tag(&mut self) {
        self.skip(); // '!'
        if self.cur() == Some(b'<') {
            self.skip();
            while let Some(c) = self.cur() {
                if c == b'>' || is_blank(c) || self.is_break_at(0) || c == 0 {
                    break;
                }
                self.skip();
            }
            if self.cur() == Some(b'>') {
                self.skip();
            }
            return;
        }
        while self.cur().is_some_and(is_tag_char) {
            self.skip();
        }
    }

    fn scan_quoted(&mut self, single: bool) {
        let quote = if single { b'\'' } else { b'"' };
        self.skip();
        loop {
            if self.document_marker() || self.is_z_at(0) {
                return;
            }
            while !self.is_blankz_at(0) {
                let c = self.b[self.i];
                if single && c == b'\'' && self.at(1) == Some(b'\'') {
                    self.skip();
                    self.skip();
                } else if c == quote {
                    break;
                } else if !single && c == b'\\' && self.is_break_at(1) {
                    self.skip();
                    self.skip_line();
                    break;
                } else if !single && c == b'\\' {
                    self.skip();
                    if !self.is_z_at(0) {
                        self.skip();
                    }
                } else {
                    self.skip();
                }
            }
            if self.cur() == Some(quote) {
                self.skip();
                return;
            }
            while self.at(0).is_some_and(is_blank) || self.is_break_at(0) {
                if self.is_break_at(0) {
                    self.skip_line();
                } else {
                    self.skip();
                }
            }
        }
    }

    fn scan_plain(&mut self) {
        let indent = self.indent + 1;
        let mut leading_blanks = false;
        loop {
            if self.document_marker() || self.cur() == Some(b'#') {
                break;
            }
            while !self.is_blankz_at(0) {
                let c = self.b[self.i];
                if self.flow != 0 && c == b':' && self.at(1).is_some_and(|n| b",?[]{}".contains(&n))
                {
                    // libyaml: "found unexpected ':'".
                    return;
                }
                if (c == b':' && self.is_blankz_at(1)) || (self.flow != 0 && b",[]{}".contains(&c))
                {
                    break;
                }
                self.skip();
            }
            if !(self.at(0).is_some_and(is_blank) || self.is_break_at(0)) {
                break;
            }
            while self.at(0).is_some_and(is_blank) || self.is_break_at(0) {
                if self.is_break_at(0) {
                    leading_blanks = true;
                    self.skip_line();
                } else {
                    self.skip();
                }
            }
            if self.flow == 0 && self.column < indent {
                break;
            }
        }
        if leading_blanks {
            self.key_allowed = true;
        }
    }

    fn scan_block_scalar(&mut self) {
        self.skip(); // '|' or '>'
        let mut increment: isize = 0;
        let digit = |c: Option<u8>| c.filter(|c| (b'1'..=b'9').contains(c));
        if matches!(self.cur(), Some(b'+' | b'-')) {
            self.skip();
            if let Some(d) = digit(self.cur()) {
                increment = isize::from(d - b'0');
                self.skip();
            }
        } else if let Some(d) = digit(self.cur()) {
            increment = isize::from(d - b'0');
            self.skip();
            if matches!(self.cur(), Some(b'+' | b'-')) {
                self.skip();
            }
        }
        while self.cur().is_some_and(is_blank) {
            self.skip();
        }
        if self.cur() == Some(b'#') {
            while !(self.is_z_at(0) || self.is_break_at(0)) {
                self.skip();
            }
        }
        if !(self.is_z_at(0) || self.is_break_at(0)) {
            // libyaml: "did not find expected comment or line break".
            return;
        }
        if self.is_break_at(0) {
            self.skip_line();
        }
        let mut indent = if increment != 0 {
            if self.indent >= 0 {
                self.indent + increment
            } else {
                increment
            }
        } else {
            0
        };
        self.block_scalar_breaks(&mut indent);
        while self.column == indent && !self.is_z_at(0) {
            while !(self.is_z_at(0) || self.is_break_at(0)) {
                self.skip();
            }
            if self.is_z_at(0) {
                return;
            }
            self.skip_line();
            self.block_scalar_breaks(&mut indent);
        }
    }

    fn block_scalar_breaks(&mut self, indent: &mut isize) {
        let mut max_indent: isize = 0;
        loop {
            while (*indent == 0 || self.column < *indent) && self.cur() == Some(b' ') {
                self.skip();
            }
            max_indent = max_indent.max(self.column);
            if !self.is_break_at(0) {
                break;
            }
            self.skip_line();
        }
        if *indent == 0 {
            *indent = max_indent.max(self.indent + 1).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Limits = Limits {
        depth: 64,
        tokens: 1_000_000,
    };

    fn depth(text: &str) -> usize {
        check(text, L).unwrap().depth
    }

    /// A lower bound of the nesting libyaml's tokens had for a parsed value: a collection is one
    /// level more than its deepest child, except a one-pair mapping inside a sequence, which
    /// may be a flow sequence's implicit pair (`[a: b]`, no token of its own), and a sequence
    /// as a mapping's value (below).
    fn value_depth(v: &serde_yaml::Value) -> usize {
        use serde_yaml::Value;
        fn untag(v: &serde_yaml::Value) -> &serde_yaml::Value {
            match v {
                serde_yaml::Value::Tagged(t) => untag(&t.value),
                v => v,
            }
        }
        let inner = |v: &Value| match untag(v) {
            Value::Mapping(m) if m.len() == 1 => {
                let (k, v) = m.iter().next().unwrap();
                value_depth(k).max(value_depth(v))
            }
            v => value_depth(v),
        };
        match v {
            Value::Sequence(s) => 1 + s.iter().map(inner).max().unwrap_or(0),
            // A sequence as a mapping's key or value may be an indentless block sequence (`a:\n- b`),
            // which opens no indentation level of its own.
            Value::Mapping(m) => {
                let value = |v: &Value| match untag(v) {
                    Value::Sequence(s) => s.iter().map(inner).max().unwrap_or(0),
                    v => value_depth(v),
                };
                // A key is scanned before its block mapping opens (`[a]: b`).
                m.iter()
                    .map(|(k, v)| value(k).max(1 + value(v)))
                    .max()
                    .unwrap_or(1)
            }
            Value::Tagged(t) => value_depth(&t.value),
            _ => 0,
        }
    }

    #[test]
    fn flow_and_block_nesting_are_counted_as_libyaml_nests() {
        assert_eq!(depth("a: 1\n"), 1);
        assert_eq!(depth("a:\n  b:\n    c: [1, {d: 2}]\n"), 5);
        assert_eq!(depth("- - - x\n"), 3);
        assert_eq!(depth("{\"a\": [[1], {\"b\": []}]}"), 4);
        // Brackets inside scalars, comments and block scalars are text.
        assert_eq!(depth("a: '[[[[' # [[[[\nb: \"[[\\\"[[\"\nc: x[[[[\n"), 1);
        assert_eq!(depth("a: |\n  [[[[\n  {{{{\nb: 1\n"), 1);
        assert_eq!(depth("- it's [[[\n  continued [[[ 'here\n- [x]\n"), 2);
        assert_eq!(depth("[a 'b' [c]]"), 2);
    }

    #[test]
    fn an_indentless_sequence_opens_no_level_and_quoted_brackets_are_text() {
        let limits = Limits {
            depth: 8,
            tokens: 1000,
        };
        // A mapping, its indentless sequence (no level of its own in libyaml), the item mapping.
        assert_eq!(
            check("kind: a/b\ndevices:\n- name: x\n", limits)
                .unwrap()
                .depth,
            2
        );
        assert!(check(&format!("x: {}", "[".repeat(100)), limits).is_err());
        assert!(check(&format!("x: '{}'", "[".repeat(100)), limits).is_ok());
        assert!(check(&"- ".repeat(100), limits).is_err());
    }

    #[test]
    fn the_reported_shapes_are_refused_early() {
        let nested = format!(
            "kind: a/b\nx: {}{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(matches!(
            check(&nested, L),
            Err(Refused::TooDeep { limit: 64, line: 2 })
        ));
        assert!(check(&format!("x: {}", "[".repeat(4 << 20)), L).is_err());
        assert!(check(&format!("x:\n{}a\n", "- ".repeat(100_000)), L).is_err());
        let many = "a: [1, 2, 3]\n".repeat(1000);
        assert!(matches!(
            check(
                &many,
                Limits {
                    depth: 64,
                    tokens: 500
                }
            ),
            Err(Refused::TooManyTokens { limit: 500, .. })
        ));
    }

    /// A small generator of YAML-looking text from pieces that change libyaml's state: what
    /// parses is checked against the parsed value's nesting (the check must never count less).
    #[test]
    fn the_check_never_counts_less_than_the_parsed_nesting() {
        const PIECES: &[&str] = &[
            "a",
            "b: ",
            "- ",
            "? ",
            ": ",
            "[",
            "]",
            "{",
            "}",
            ", ",
            "'",
            "\"",
            "''",
            "\\\"",
            "#",
            " # c",
            "|",
            ">",
            "|2",
            "&x ",
            "!t ",
            "!<u> ",
            "\n",
            "\n  ",
            "\n    ",
            "\n- ",
            "\n  - ",
            " ",
            "\t",
            "it's",
            "x[",
            "]y",
            ":x",
            "-1",
            "---\n",
            "...\n",
            "%YAML 1.1\n",
            "\r\n",
            "\u{2028}",
            "é",
        ];
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut parsed = 0;
        for _ in 0..200_000 {
            let n = 1 + (next() % 24) as usize;
            let text: String = (0..n)
                .map(|_| PIECES[(next() % PIECES.len() as u64) as usize])
                .collect();
            let Ok(v) = serde_yaml::from_str::<serde_yaml::Value>(&text) else {
                continue;
            };
            parsed += 1;
            let shape = check(&text, L).unwrap();
            assert!(
                shape.depth >= value_depth(&v),
                "{text:?}: counted {}, parsed {}",
                shape.depth,
                value_depth(&v)
            );
        }
        assert!(parsed > 10_000, "only {parsed} parsed");
    }
}
