//! Regular expressions as Prometheus reads them: Go's RE2 syntax (`regexp/syntax` with its
//! Perl flags), written out for the `regex` crate so that a pattern accepts what Go's
//! accepts and matches what Go's matches.
//!
//! The two dialects mostly agree; where they do not, the crate's reading would be wrong
//! in silence (found by comparing with Prometheus' own parser and matcher):
//! - `\d`, `\s`, `\w` and `\b` are ASCII in Go (`\s` without `\v`), Unicode in the crate;
//! - `&&`, `--` and `~~` in a class are set operations in the crate, characters in Go;
//! - Go reads a `{` that starts no repetition, `\Q...\E`, octal escapes and a `[` in a class
//!   as text, and refuses stacked repetitions (`a**`), counts over 1000, `\u`, the `x`
//!   flag and property names the crate knows beyond Unicode's categories and scripts.
//!
//! So every construct is read the way Go reads it and written the way the crate reads it,
//! or refused with Go's reason.

/// The largest repetition count Go accepts.
const MAX_REPEAT: u32 = 1000;

/// ASCII classes as Go defines them, as the body of a class (`[...]` without brackets).
const DIGIT: &str = r"0-9";
const WORD: &str = r"0-9A-Za-z_";
const SPACE: &str = r"\t\n\x0C\r\x20";

/// A pattern Go would refuse: its reason, and the character (1-based) it is at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Refused {
    pub reason: String,
    pub at: usize,
}

/// `pattern` in the `regex` crate's syntax, matching what Go's `regexp` matches.
pub(super) fn translate(pattern: &str) -> Result<String, Refused> {
    Translator {
        chars: pattern.chars().collect(),
        at: 0,
        out: String::with_capacity(pattern.len() + 8),
        repeated_at: 0,
    }
    .run()
}

/// What the last item written was, for Go's rules on repetitions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// Nothing to repeat: the start, `(` or `|`.
    Nothing,
    /// Something a repetition may follow.
    Operand,
    /// A repetition: Go refuses another right after it (`a**`).
    Repetition,
}

struct Translator {
    chars: Vec<char>,
    at: usize,
    out: String,
    /// Where the last repetition began (Go's message on a second one shows both).
    repeated_at: usize,
}

impl Translator {
    fn refuse<T>(&self, reason: &str, from: usize) -> Result<T, Refused> {
        let shown: String = self.chars[from..self.at.min(self.chars.len())].iter().collect();
        Err(Refused {
            reason: format!("{reason}: `{shown}`"),
            at: from + 1,
        })
    }

    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn run(mut self) -> Result<String, Refused> {
        let mut last = Last::Nothing;
        while let Some(c) = self.peek(0) {
            let start = self.at;
            self.at += 1;
            last = match c {
                '(' => {
                    self.group(start)?;
                    Last::Nothing
                }
                '|' => {
                    self.out.push('|');
                    Last::Nothing
                }
                ')' => {
                    self.out.push(')');
                    Last::Operand
                }
                '*' | '+' | '?' => {
                    self.repetition(start, last)?;
                    self.out.push(c);
                    self.lazy();
                    self.repeated_at = start;
                    Last::Repetition
                }
                '{' => match self.counts(start)? {
                    Some(counts) => {
                        self.repetition(start, last)?;
                        self.out.push_str(&counts);
                        self.lazy();
                        self.repeated_at = start;
                        Last::Repetition
                    }
                    None => {
                        self.out.push_str(r"\{");
                        Last::Operand
                    }
                },
                '[' => {
                    self.class(start)?;
                    Last::Operand
                }
                '\\' => {
                    self.escape(start)?;
                    Last::Operand
                }
                '.' | '^' | '$' => {
                    self.out.push(c);
                    Last::Operand
                }
                c => {
                    literal(&mut self.out, c);
                    Last::Operand
                }
            };
        }
        Ok(self.out)
    }

    /// A repetition may follow an operand only (Go: "missing argument", "invalid nested
    /// repetition operator").
    fn repetition(&self, start: usize, last: Last) -> Result<(), Refused> {
        match last {
            Last::Operand => Ok(()),
            Last::Nothing => self.refuse("missing argument to repetition operator", start),
            // Go shows both operators.
            Last::Repetition => self.refuse("invalid nested repetition operator", self.repeated_at),
        }
    }

    /// A repetition's `?`, which makes it lazy.
    fn lazy(&mut self) {
        if self.peek(0) == Some('?') {
            self.at += 1;
            self.out.push('?');
        }
    }

    /// After `{`: `{n}`, `{n,}` or `{n,m}`, as written for the crate; `None` when it is no
    /// repetition (Go reads the `{` as text then).
    fn counts(&mut self, start: usize) -> Result<Option<String>, Refused> {
        let mut i = self.at;
        let number = |i: &mut usize| -> Option<u32> {
            let from = *i;
            while self.chars.get(*i).is_some_and(char::is_ascii_digit) {
                *i += 1;
            }
            let digits: String = self.chars[from..*i].iter().collect();
            // Too many digits to count is Go's "invalid repeat count" too.
            (*i > from).then(|| digits.parse().unwrap_or(u32::MAX))
        };
        let Some(min) = number(&mut i) else {
            return Ok(None);
        };
        let max = match self.chars.get(i) {
            Some('}') => Some(min),
            Some(',') => {
                i += 1;
                if self.chars.get(i) == Some(&'}') {
                    None
                } else {
                    match number(&mut i) {
                        Some(max) if self.chars.get(i) == Some(&'}') => Some(max),
                        _ => return Ok(None),
                    }
                }
            }
            _ => return Ok(None),
        };
        self.at = i + 1;
        if min > MAX_REPEAT || max.is_some_and(|max| max > MAX_REPEAT || max < min) {
            return self.refuse("invalid repeat count", start);
        }
        Ok(Some(match max {
            Some(max) if max == min => format!("{{{min}}}"),
            Some(max) => format!("{{{min},{max}}}"),
            None => format!("{{{min},}}"),
        }))
    }

    /// After `(`: a group, a named group (its name dropped: names match nothing), or
    /// flags, as Go takes them.
    fn group(&mut self, start: usize) -> Result<(), Refused> {
        if self.peek(0) != Some('?') {
            self.out.push('(');
            return Ok(());
        }
        self.at += 1;
        let named = match (self.peek(0), self.peek(1)) {
            (Some('P'), Some('<')) => Some(2),
            (Some('<'), _) => Some(1),
            _ => None,
        };
        if let Some(skip) = named {
            self.at += skip;
            let from = self.at;
            while self
                .peek(0)
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                self.at += 1;
            }
            if self.at == from || self.peek(0) != Some('>') {
                self.at = (self.at + 1).min(self.chars.len());
                return self.refuse("invalid named capture", start);
            }
            self.at += 1;
            self.out.push('(');
            return Ok(());
        }
        // Flags: i, m, s and U, at most one `-`, a flag after it; then `)` or `:`.
        let mut flags = String::new();
        let mut negated = false;
        loop {
            let Some(c) = self.peek(0) else {
                return self.refuse("missing closing )", start);
            };
            self.at += 1;
            match c {
                'i' | 'm' | 's' | 'U' => flags.push(c),
                '-' if !negated => {
                    negated = true;
                    flags.push('-');
                }
                // `(?)` changes nothing, and the crate refuses it: not written.
                ')' if flags.is_empty() => return Ok(()),
                ')' | ':' if !flags.ends_with('-') => {
                    self.out.push_str("(?");
                    self.out.push_str(&flags);
                    self.out.push(c);
                    return Ok(());
                }
                _ => return self.refuse("invalid or unsupported Perl syntax", start),
            }
        }
    }

    /// After `\` outside a class.
    fn escape(&mut self, start: usize) -> Result<(), Refused> {
        let Some(c) = self.peek(0) else {
            return self.refuse("trailing backslash at end of expression", start);
        };
        match c {
            'A' | 'z' => {
                self.at += 1;
                self.out.push('\\');
                self.out.push(c);
            }
            'b' | 'B' => {
                self.at += 1;
                self.out
                    .push_str(if c == 'b' { r"(?-u:\b)" } else { r"(?-u:\B)" });
            }
            'Q' => {
                self.at += 1;
                while let Some(c) = self.peek(0) {
                    if c == '\\' && self.peek(1) == Some('E') {
                        self.at += 2;
                        return Ok(());
                    }
                    self.at += 1;
                    literal(&mut self.out, c);
                }
            }
            'd' | 's' | 'w' | 'D' | 'S' | 'W' => {
                self.at += 1;
                self.out.push_str(if c.is_ascii_uppercase() { "[^" } else { "[" });
                self.out.push_str(perl_class(c));
                self.out.push(']');
            }
            'p' | 'P' => {
                let class = self.unicode_class(start)?;
                self.out.push_str(&class);
            }
            _ => {
                let c = self.escaped_char(start)?;
                literal(&mut self.out, c);
            }
        }
        Ok(())
    }

    /// After `\` (outside a class or in one): the one character Go's escape stands for.
    fn escaped_char(&mut self, start: usize) -> Result<char, Refused> {
        let Some(c) = self.peek(0) else {
            return self.refuse("trailing backslash at end of expression", start);
        };
        self.at += 1;
        let simple = match c {
            'a' => Some('\x07'),
            'f' => Some('\x0C'),
            't' => Some('\t'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            'v' => Some('\x0B'),
            c if c.is_ascii() && !c.is_ascii_alphanumeric() => Some(c),
            _ => None,
        };
        if let Some(c) = simple {
            return Ok(c);
        }
        match c {
            // Octal: `\0` and up to two more digits; or two or three digits from `\1` (a
            // single one would be a backreference, which Go refuses).
            '0'..='7' if c == '0' || self.peek(0).is_some_and(|d| ('0'..='7').contains(&d)) => {
                let mut code = c.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match self.peek(0).and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            code = code * 8 + d;
                            self.at += 1;
                        }
                        None => break,
                    }
                }
                char::from_u32(code).map_or_else(|| self.refuse("invalid escape sequence", start), Ok)
            }
            'x' => {
                let code = if self.peek(0) == Some('{') {
                    self.at += 1;
                    let from = self.at;
                    while self.peek(0).is_some_and(|d| d.is_ascii_hexdigit()) {
                        self.at += 1;
                    }
                    let digits: String = self.chars[from..self.at].iter().collect();
                    if digits.is_empty() || self.peek(0) != Some('}') {
                        return self.refuse("invalid escape sequence", start);
                    }
                    self.at += 1;
                    u32::from_str_radix(&digits, 16).ok()
                } else {
                    let digits: String = self.chars[self.at..(self.at + 2).min(self.chars.len())]
                        .iter()
                        .collect();
                    self.at = (self.at + 2).min(self.chars.len());
                    (digits.len() == 2)
                        .then(|| u32::from_str_radix(&digits, 16).ok())
                        .flatten()
                };
                code.and_then(char::from_u32)
                    .map_or_else(|| self.refuse("invalid escape sequence", start), Ok)
            }
            _ => self.refuse("invalid escape sequence", start),
        }
    }

    /// After `\` before `p` or `P`: a Unicode class (`\pL`, `\p{Greek}`, `\p{^Greek}`), as
    /// the crate writes it. Go knows Unicode's general categories and scripts, and `Any`.
    fn unicode_class(&mut self, start: usize) -> Result<String, Refused> {
        let mut negated = self.peek(0) == Some('P');
        self.at += 1;
        let name: String = match self.peek(0) {
            Some('{') => {
                self.at += 1;
                if self.peek(0) == Some('^') {
                    negated = !negated;
                    self.at += 1;
                }
                let from = self.at;
                while self.peek(0).is_some_and(|c| c != '}') {
                    self.at += 1;
                }
                if self.peek(0) != Some('}') {
                    return self.refuse("invalid character class range", start);
                }
                self.at += 1;
                self.chars[from..self.at - 1].iter().collect()
            }
            Some(c) => {
                self.at += 1;
                c.to_string()
            }
            None => return self.refuse("invalid character class range", start),
        };
        let known = if name.chars().count() == 1 {
            "CLMNPSZ".contains(name.as_str())
        } else {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if !known {
            return self.refuse("invalid character class range", start);
        }
        // Surrogates, which no text holds: a category Go knows and the crate does not.
        if name == "Cs" {
            return Ok(if negated {
                r"[\x{0}-\x{10FFFF}]"
            } else {
                r"[^\x{0}-\x{10FFFF}]"
            }
            .into());
        }
        Ok(format!("\\{}{{{name}}}", if negated { 'P' } else { 'p' }))
    }

    /// After `[`: a class, every member written out for the crate (its `&&`, `--` and `~~`
    /// are operators there, characters in Go).
    fn class(&mut self, start: usize) -> Result<(), Refused> {
        self.out.push('[');
        if self.peek(0) == Some('^') {
            self.at += 1;
            self.out.push('^');
        }
        let mut first = true;
        loop {
            let Some(c) = self.peek(0) else {
                return self.refuse("missing closing ]", start);
            };
            if c == ']' && !first {
                self.at += 1;
                self.out.push(']');
                return Ok(());
            }
            first = false;
            let member = self.at;
            // A POSIX class: `[:alpha:]`, `[:^alpha:]`.
            if c == '[' && self.peek(1) == Some(':') {
                if let Some(end) = (self.at + 2..self.chars.len().saturating_sub(1))
                    .find(|&i| self.chars[i] == ':' && self.chars[i + 1] == ']')
                {
                    let name: String = self.chars[self.at + 2..end].iter().collect();
                    self.at = end + 2;
                    if !POSIX.contains(&name.trim_start_matches('^')) {
                        return self.refuse("invalid character class range", member);
                    }
                    self.out.push_str(&format!("[:{name}:]"));
                    continue;
                }
            }
            if c == '\\' {
                match self.peek(1) {
                    Some(k @ ('d' | 's' | 'w' | 'D' | 'S' | 'W')) => {
                        self.at += 2;
                        if k.is_ascii_uppercase() {
                            self.out.push_str(&format!("[^{}]", perl_class(k)));
                        } else {
                            self.out.push_str(perl_class(k));
                        }
                        continue;
                    }
                    Some('p' | 'P') => {
                        self.at += 1;
                        let class = self.unicode_class(member)?;
                        self.out.push_str(&class);
                        continue;
                    }
                    _ => {}
                }
            }
            let lo = self.class_char(member)?;
            // A range, unless the `-` ends the class.
            if self.peek(0) == Some('-') && self.peek(1).is_some_and(|c| c != ']') {
                self.at += 1;
                let hi = self.class_char(member)?;
                if hi < lo {
                    return self.refuse("invalid character class range", member);
                }
                class_char(&mut self.out, lo);
                self.out.push('-');
                class_char(&mut self.out, hi);
            } else {
                class_char(&mut self.out, lo);
            }
        }
    }

    /// One character of a class: itself, or an escape's.
    fn class_char(&mut self, member: usize) -> Result<char, Refused> {
        match self.peek(0) {
            Some('\\') => {
                self.at += 1;
                self.escaped_char(member)
            }
            Some(c) => {
                self.at += 1;
                Ok(c)
            }
            None => self.refuse("missing closing ]", member),
        }
    }
}

/// The POSIX classes Go knows (the crate knows the same).
const POSIX: &[&str] = &[
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space",
    "upper", "word", "xdigit",
];

/// The body of Go's `\d`, `\s` or `\w` (or their negations').
fn perl_class(c: char) -> &'static str {
    match c.to_ascii_lowercase() {
        'd' => DIGIT,
        's' => SPACE,
        _ => WORD,
    }
}

/// A character as text outside a class.
fn literal(out: &mut String, c: char) {
    if regex_syntax::is_meta_character(c) {
        out.push('\\');
    }
    out.push(c);
}

/// A character as text in a class: anything but a letter or a digit by its code, which no
/// class syntax reads otherwise.
fn class_char(out: &mut String, c: char) {
    if c.is_alphanumeric() {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:X}}}", c as u32));
    }
}

#[cfg(test)]
mod tests;
