//! Regular expressions as Prometheus reads them: Go's RE2 syntax (`regexp/syntax` with its
//! Perl flags), written out for the `regex` crate so that a pattern accepts what Go's
//! accepts and matches what Go's matches.
//!
//! The two dialects mostly agree; where they do not, the crate's reading would be wrong
//! in silence (found by comparing with Prometheus' own parser and matcher):
//! - `\d`, `\s`, `\w` and `\b` are ASCII in Go (`\s` without `\v`), Unicode in the crate;
//! - `&&`, `--` and `~~` in a class are set operations in the crate, characters in Go;
//! - Go reads a `{` that starts no repetition (`{01}` too), `\Q...\E`, octal escapes and a
//!   `[` in a class as text, takes a flag twice (`(?i-i)`), repeats the item before flags
//!   alone or an empty `\Q\E` (`a(?i)*` is `a*`), and refuses stacked repetitions (`a**`),
//!   counts over 1000 (nested ones multiplied), `\u`, the `x` flag and property names
//!   beyond its own tables.
//! - Prometheus 3.14 parses with grafana/regexp's copy of Go 1.24's parser, over the
//!   Unicode tables of the Go that builds it (1.26): property names are `Any`, a general
//!   category or a script, spelled exactly (`\p{Greek}`, not `\p{greek}` or `\p{Letter}`).
//!   It parses the pattern alone, then anchors what it parsed: a `\Q` runs to the end.
//!
//! So every construct is read the way Go reads it and written the way the crate reads it,
//! or refused with Go's reason.

use std::fmt::Write as _;

/// The largest repetition count Go accepts, nested repetitions' counts multiplied.
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
        weights: vec![Weight::default()],
        item_start: 0,
        pending_flags: String::new(),
        transparent: false,
    }
    .run()
}

/// What a `(` opened, as written for the crate.
enum Opening {
    /// A group (`(`, `(?i:`, a named group): its opening.
    Group(String),
    /// Flags alone (`(?i)`), which open no group.
    Flags(String),
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
    /// One for each open group, the pattern's own first: how many copies of their
    /// innermost item the repetitions in it make.
    weights: Vec<Weight>,
    /// Where the last item's text begins in the output (a repetition of a repetition wraps
    /// it from there).
    item_start: usize,
    /// Flags that wait for the next item (see [`Translator::run`]).
    pending_flags: String,
    /// Whether flags alone or an empty `\Q\E` came since the last item: Go then takes a
    /// repetition of a repetition, as a repetition of the repeated item.
    transparent: bool,
}

/// The copies of its innermost item that a group's repetitions make (Go's `repeatIsValid`:
/// nested counts multiply, a count of 0 ends the chain): the most of any item before the
/// last, and the last item's, which a repetition may multiply.
#[derive(Clone, Copy)]
struct Weight {
    most: u64,
    last: u64,
    /// Where the group's `(` is in the output.
    opened_at: usize,
}

impl Default for Weight {
    fn default() -> Self {
        Weight::opened_at(0)
    }
}

impl Weight {
    fn opened_at(opened_at: usize) -> Self {
        Weight {
            most: 1,
            last: 1,
            opened_at,
        }
    }

    /// The group's whole weight.
    fn total(self) -> u64 {
        self.most.max(self.last)
    }

    /// Another item begins, of weight `last`.
    fn next(&mut self, last: u64) {
        self.most = self.total();
        self.last = last;
    }
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
                '(' => match self.group(start)? {
                    Opening::Group(opening) => {
                        self.flush_flags();
                        self.weights.push(Weight::opened_at(self.out.len()));
                        self.out.push_str(&opening);
                        Last::Nothing
                    }
                    Opening::Flags(flags) => {
                        // Flags alone are no item: a repetition after them repeats the item
                        // before (Go: `a(?i)*` is `a*`), so they wait for the next item.
                        self.pending_flags.push_str(&flags);
                        self.transparent = true;
                        continue;
                    }
                },
                '|' => {
                    self.flush_flags();
                    self.weight().next(1);
                    self.out.push('|');
                    Last::Nothing
                }
                ')' => {
                    // Flags at a group's end change nothing. An unbalanced `)` is left to the
                    // crate, which refuses it as Go does.
                    self.pending_flags.clear();
                    if self.weights.len() > 1 {
                        let group = self.weights.pop().unwrap_or_default();
                        self.item_start = group.opened_at;
                        self.weight().next(group.total());
                    }
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
                    Some((min, max)) => {
                        self.repetition(start, last)?;
                        self.multiply(start, min, max)?;
                        match max {
                            Some(max) if max == min => write!(self.out, "{{{min}}}"),
                            Some(max) => write!(self.out, "{{{min},{max}}}"),
                            None => write!(self.out, "{{{min},}}"),
                        }
                        .unwrap_or_default();
                        self.lazy();
                        self.repeated_at = start;
                        Last::Repetition
                    }
                    None => {
                        self.operand();
                        self.out.push_str(r"\{");
                        Last::Operand
                    }
                },
                '\\' if self.peek(0) == Some('Q') => {
                    self.at += 1;
                    if !self.quoted() {
                        // `\Q\E` is no item either (Go: `a+\Q\E?` is `(?:a+)?`).
                        self.transparent = true;
                        continue;
                    }
                    Last::Operand
                }
                '[' => {
                    self.operand();
                    self.class(start)?;
                    Last::Operand
                }
                '\\' => {
                    self.operand();
                    self.escape(start)?;
                    Last::Operand
                }
                '.' | '^' | '$' => {
                    self.operand();
                    self.out.push(c);
                    Last::Operand
                }
                c => {
                    self.operand();
                    literal(&mut self.out, c);
                    Last::Operand
                }
            };
            self.transparent = false;
        }
        Ok(self.out)
    }

    /// An item begins where the output stands: flags waiting for it first.
    fn operand(&mut self) {
        self.flush_flags();
        self.item_start = self.out.len();
        self.weight().next(1);
    }

    /// Writes the flags that wait for an item.
    fn flush_flags(&mut self) {
        if !self.pending_flags.is_empty() {
            self.out.push_str(&self.pending_flags);
            self.pending_flags.clear();
        }
    }

    /// After `\Q`: its text up to `\E` (or the pattern's end: Prometheus parses the pattern
    /// alone before anchoring it), each character an item; whether it held any.
    fn quoted(&mut self) -> bool {
        let mut any = false;
        while let Some(c) = self.peek(0) {
            if c == '\\' && self.peek(1) == Some('E') {
                self.at += 2;
                break;
            }
            self.at += 1;
            self.operand();
            literal(&mut self.out, c);
            any = true;
        }
        any
    }

    /// The innermost open group's weight.
    fn weight(&mut self) -> &mut Weight {
        // The pattern's own is never popped.
        let top = self.weights.len() - 1;
        &mut self.weights[top]
    }

    /// A counted repetition of the last item: Go refuses one of at least 2 that makes more
    /// than [`MAX_REPEAT`] copies of an item, counting the repetitions inside it.
    fn multiply(&mut self, start: usize, min: u32, max: Option<u32>) -> Result<(), Refused> {
        let count = u64::from(max.unwrap_or(min));
        let weight = self.weight();
        let copies = if count == 0 {
            1
        } else {
            count.saturating_mul(weight.last)
        };
        weight.last = copies;
        let checked = min >= 2 || max.is_some_and(|max| max >= 2);
        if checked && copies > u64::from(MAX_REPEAT) {
            return self.refuse("invalid repeat count", start);
        }
        Ok(())
    }

    /// A repetition may follow an operand only (Go: "missing argument", "invalid nested
    /// repetition operator").
    fn repetition(&mut self, start: usize, last: Last) -> Result<(), Refused> {
        match last {
            Last::Operand => Ok(()),
            Last::Nothing => self.refuse("missing argument to repetition operator", start),
            // Separated by flags alone or an empty `\Q\E`, it repeats the repeated item.
            Last::Repetition if self.transparent => {
                self.out.insert_str(self.item_start, "(?:");
                self.out.push(')');
                Ok(())
            }
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

    /// After `{`: the counts of `{n}`, `{n,}` or `{n,m}`; `None` when it is no repetition
    /// (Go reads the `{` as text then, as it does a count with a leading zero: `{01}`).
    fn counts(&mut self, start: usize) -> Result<Option<(u32, Option<u32>)>, Refused> {
        let mut i = self.at;
        let number = |i: &mut usize| -> Option<u32> {
            let from = *i;
            while self.chars.get(*i).is_some_and(char::is_ascii_digit) {
                *i += 1;
            }
            if *i - from > 1 && self.chars[from] == '0' {
                return None;
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
        Ok(Some((min, max)))
    }

    /// After `(`: a group, a named group (its name dropped: names match nothing), or
    /// flags, as Go takes them, written for the crate.
    fn group(&mut self, start: usize) -> Result<Opening, Refused> {
        if self.peek(0) != Some('?') {
            return Ok(Opening::Group("(".into()));
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
            return Ok(Opening::Group("(".into()));
        }
        // Flags: i, m, s and U, at most one `-`, a flag after it; then `)` or `:`. Go takes
        // a flag twice, and one after the `-` clears it whatever came before (`(?i-i)`);
        // the crate refuses both, so each flag is written once, as it ends.
        let (mut set, mut cleared) = (String::new(), String::new());
        let mut negated = false;
        let mut flag_after_minus = false;
        loop {
            let Some(c) = self.peek(0) else {
                return self.refuse("missing closing )", start);
            };
            self.at += 1;
            match c {
                'i' | 'm' | 's' | 'U' if negated => {
                    flag_after_minus = true;
                    set.retain(|f| f != c);
                    if !cleared.contains(c) {
                        cleared.push(c);
                    }
                }
                'i' | 'm' | 's' | 'U' => {
                    if !set.contains(c) {
                        set.push(c);
                    }
                }
                '-' if !negated => negated = true,
                ')' | ':' if negated && !flag_after_minus => {
                    return self.refuse("invalid or unsupported Perl syntax", start)
                }
                // `(?)` changes nothing, and the crate refuses it: not written.
                ')' if set.is_empty() && cleared.is_empty() => return Ok(Opening::Flags(String::new())),
                ')' | ':' => {
                    let mut flags = format!("(?{set}");
                    if !cleared.is_empty() {
                        flags.push('-');
                        flags.push_str(&cleared);
                    }
                    flags.push(c);
                    return Ok(if c == ':' {
                        Opening::Group(flags)
                    } else {
                        Opening::Flags(flags)
                    });
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
        let Some(name) = property(&name) else {
            return self.refuse("invalid character class range", start);
        };
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

/// The name the crate knows for Go's property `name`, if Prometheus' Go knows it: `Any`, or
/// a general category or a script by its exact name (grafana/regexp's parser, Go 1.24's,
/// over the tables of the Go that builds Prometheus).
fn property(name: &str) -> Option<&'static str> {
    std::iter::once(&"Any")
        .chain(CATEGORIES)
        .chain(SCRIPTS)
        .find(|known| **known == name)
        .copied()
}

/// Go's `unicode.Categories` (since Go 1.25 with `Cn` and `LC`).
const CATEGORIES: &[&str] = &[
    "C", "Cc", "Cf", "Cn", "Co", "Cs", "L", "LC", "Ll", "Lm", "Lo", "Lt", "Lu", "M", "Mc", "Me", "Mn", "N",
    "Nd", "Nl", "No", "P", "Pc", "Pd", "Pe", "Pf", "Pi", "Po", "Ps", "S", "Sc", "Sk", "Sm", "So", "Z", "Zl",
    "Zp", "Zs",
];

/// Go's `unicode.Scripts` (Unicode 15.0, Go 1.21 to 1.26).
const SCRIPTS: &[&str] = &[
    "Adlam",
    "Ahom",
    "Anatolian_Hieroglyphs",
    "Arabic",
    "Armenian",
    "Avestan",
    "Balinese",
    "Bamum",
    "Bassa_Vah",
    "Batak",
    "Bengali",
    "Bhaiksuki",
    "Bopomofo",
    "Brahmi",
    "Braille",
    "Buginese",
    "Buhid",
    "Canadian_Aboriginal",
    "Carian",
    "Caucasian_Albanian",
    "Chakma",
    "Cham",
    "Cherokee",
    "Chorasmian",
    "Common",
    "Coptic",
    "Cuneiform",
    "Cypriot",
    "Cypro_Minoan",
    "Cyrillic",
    "Deseret",
    "Devanagari",
    "Dives_Akuru",
    "Dogra",
    "Duployan",
    "Egyptian_Hieroglyphs",
    "Elbasan",
    "Elymaic",
    "Ethiopic",
    "Georgian",
    "Glagolitic",
    "Gothic",
    "Grantha",
    "Greek",
    "Gujarati",
    "Gunjala_Gondi",
    "Gurmukhi",
    "Han",
    "Hangul",
    "Hanifi_Rohingya",
    "Hanunoo",
    "Hatran",
    "Hebrew",
    "Hiragana",
    "Imperial_Aramaic",
    "Inherited",
    "Inscriptional_Pahlavi",
    "Inscriptional_Parthian",
    "Javanese",
    "Kaithi",
    "Kannada",
    "Katakana",
    "Kawi",
    "Kayah_Li",
    "Kharoshthi",
    "Khitan_Small_Script",
    "Khmer",
    "Khojki",
    "Khudawadi",
    "Lao",
    "Latin",
    "Lepcha",
    "Limbu",
    "Linear_A",
    "Linear_B",
    "Lisu",
    "Lycian",
    "Lydian",
    "Mahajani",
    "Makasar",
    "Malayalam",
    "Mandaic",
    "Manichaean",
    "Marchen",
    "Masaram_Gondi",
    "Medefaidrin",
    "Meetei_Mayek",
    "Mende_Kikakui",
    "Meroitic_Cursive",
    "Meroitic_Hieroglyphs",
    "Miao",
    "Modi",
    "Mongolian",
    "Mro",
    "Multani",
    "Myanmar",
    "Nabataean",
    "Nag_Mundari",
    "Nandinagari",
    "New_Tai_Lue",
    "Newa",
    "Nko",
    "Nushu",
    "Nyiakeng_Puachue_Hmong",
    "Ogham",
    "Ol_Chiki",
    "Old_Hungarian",
    "Old_Italic",
    "Old_North_Arabian",
    "Old_Permic",
    "Old_Persian",
    "Old_Sogdian",
    "Old_South_Arabian",
    "Old_Turkic",
    "Old_Uyghur",
    "Oriya",
    "Osage",
    "Osmanya",
    "Pahawh_Hmong",
    "Palmyrene",
    "Pau_Cin_Hau",
    "Phags_Pa",
    "Phoenician",
    "Psalter_Pahlavi",
    "Rejang",
    "Runic",
    "Samaritan",
    "Saurashtra",
    "Sharada",
    "Shavian",
    "Siddham",
    "SignWriting",
    "Sinhala",
    "Sogdian",
    "Sora_Sompeng",
    "Soyombo",
    "Sundanese",
    "Syloti_Nagri",
    "Syriac",
    "Tagalog",
    "Tagbanwa",
    "Tai_Le",
    "Tai_Tham",
    "Tai_Viet",
    "Takri",
    "Tamil",
    "Tangsa",
    "Tangut",
    "Telugu",
    "Thaana",
    "Thai",
    "Tibetan",
    "Tifinagh",
    "Tirhuta",
    "Toto",
    "Ugaritic",
    "Vai",
    "Vithkuqi",
    "Wancho",
    "Warang_Citi",
    "Yezidi",
    "Yi",
    "Zanabazar_Square",
];

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
