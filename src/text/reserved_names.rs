//! The sample names that closed OpenMetrics families reserve (`a`, `a_total`, `a_created`,
//! ...): a family whose names another family already reserved clashes with it.
//!
//! Pages usually list their families sorted by name (Go's registry does). While every
//! family's names sort after all the names reserved before it, none can clash and nothing
//! is hashed; the first family out of that order turns every name reserved so far into a
//! hash in a set, as every name of a page that never had this order is kept.

use std::cmp::Ordering;

use super::escape::unescape;
use super::group_hash;
use super::label_groups::Hashes;
use super::names::compare_bytes;

/// The names reserved by the families closed so far.
#[derive(Debug, Clone, Default)]
pub(crate) struct ReservedNames<'page> {
    /// While in order: every family so far, with the suffixes it lists.
    families: Vec<(&'page str, &'static [&'static str])>,
    /// While in order: the greatest name reserved so far, as a family and a suffix (empty
    /// before any: every name sorts after it).
    greatest: (&'page str, &'static str),
    /// Whether the order broke: the names are in `hashes`.
    hashed: bool,
    hashes: Hashes,
}

impl<'page> ReservedNames<'page> {
    /// Room for a page's usual families: growing from empty cost more than the checks.
    /// The set, used only once the order breaks, starts at a quarter of that (the list is
    /// only reserved, never touched beyond its use, so its room costs no work).
    pub(crate) fn with_capacity(families: usize) -> Self {
        ReservedNames {
            families: Vec::with_capacity(families),
            greatest: ("", ""),
            hashed: false,
            hashes: Hashes::with_capacity_and_hasher(families / 4, Default::default()),
        }
    }

    /// Reserves the names of the family `name`: `name` followed by each of `suffixes`, and
    /// `name` alone. Whether any of them was reserved already (a clash). (The validator
    /// knows the order when the family opens: [`ReservedNames::reserve_known`].)
    #[cfg(test)]
    pub(crate) fn reserve(&mut self, name: &'page str, suffixes: &'static [&'static str]) -> bool {
        let in_order = self.after_all(name);
        self.reserve_known(name, suffixes, in_order)
    }

    /// Whether `name` sorts after every name reserved so far, so that neither it nor any
    /// name it begins is reserved (the order holds; nothing is hashed).
    #[inline(always)]
    pub(crate) fn after_all(&self, name: &str) -> bool {
        let (family, suffix) = self.greatest;
        !self.hashed && joined_less(family, suffix, name)
    }

    /// [`ReservedNames::reserve`] of a family whose name was found `after_all` when it
    /// opened (nothing was reserved since: families close one at a time), without
    /// comparing again.
    #[inline(always)]
    pub(crate) fn reserve_known(
        &mut self,
        name: &'page str,
        suffixes: &'static [&'static str],
        after_all: bool,
    ) -> bool {
        // `name` alone is the least of its names: after the greatest so far, none clashes.
        if after_all && !self.hashed {
            // Their greatest is its greatest suffix (one, in OpenMetrics 2.0).
            let greatest = match suffixes {
                [only] => only,
                _ => suffixes.iter().copied().max().unwrap_or(""),
            };
            self.greatest = (name, greatest);
            self.families.push((name, suffixes));
            return false;
        }
        self.reserve_hashed(name, suffixes)
    }

    /// Whether `name` followed by `suffix` is reserved already (by a family of that name,
    /// or as one of an earlier family's names): a family opening under it, or whose type
    /// names it, clashes, and is told so at that line. A name after every reserved one is
    /// proven free without a hash (and so is that name followed by anything).
    #[cfg(test)]
    pub(crate) fn holds(&mut self, name: &str, suffix: &str) -> bool {
        !self.after_all(name) && self.holds_hashed(name, suffix)
    }

    /// Whether `name` followed by `suffix` is reserved, for a name not
    /// [`ReservedNames::after_all`]: the order cannot prove it free, and the family it names
    /// will break the order when it closes. (The validator asks only then: it knows the order
    /// from the family's opening; [`ReservedNames::holds`] asks both.)
    #[inline(never)]
    pub(crate) fn holds_hashed(&mut self, name: &str, suffix: &str) -> bool {
        if !self.hashed {
            self.hash_all();
        }
        let name = unescape(name, true);
        self.hashes
            .contains(&group_hash::of_parts(&[name.as_bytes(), suffix.as_bytes()]))
    }

    /// [`ReservedNames::reserve`] once the order broke, or of the family that breaks it.
    #[inline(never)]
    fn reserve_hashed(&mut self, name: &'page str, suffixes: &'static [&'static str]) -> bool {
        if !self.hashed {
            self.hash_all();
        }
        !self.insert(name, suffixes)
    }

    /// The order stopped proving the names apart: from here on they are hashes.
    #[cold]
    fn hash_all(&mut self) {
        self.hashed = true;
        let families = std::mem::take(&mut self.families);
        for &(name, suffixes) in &families {
            self.insert(name, suffixes);
        }
    }

    /// Inserts the names of a family; whether none was there before.
    fn insert(&mut self, name: &str, suffixes: &[&str]) -> bool {
        let bare: &[&str] = if suffixes.contains(&"") { &[] } else { &[""] };
        // Hashed resolved, so that every spelling of a name is one (a copy only for a
        // name with a backslash).
        let name = unescape(name, true);
        let mut fresh = true;
        for suffix in suffixes.iter().chain(bare) {
            fresh &= self
                .hashes
                .insert(group_hash::of_parts(&[name.as_bytes(), suffix.as_bytes()]));
        }
        fresh
    }
}

/// Whether `family` followed by `suffix` sorts before `name`, bytewise.
#[inline(always)]
fn joined_less(family: &str, suffix: &str, name: &str) -> bool {
    let (family, name) = (family.as_bytes(), name.as_bytes());
    let shared = family.len().min(name.len());
    match compare_bytes(&family[..shared], &name[..shared]) {
        Ordering::Less => true,
        Ordering::Greater => false,
        // `name` is `family` or begins it: it sorts first.
        Ordering::Equal if name.len() <= family.len() => false,
        Ordering::Equal => compare_bytes(suffix.as_bytes(), &name[family.len()..]).is_lt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn joined_names_compare_as_one_text() {
        assert!(joined_less("a", "_total", "b"));
        assert!(joined_less("a", "_total", "a_u"));
        assert!(!joined_less("a", "_total", "a_total"));
        assert!(!joined_less("a", "_total", "a_s"));
        assert!(!joined_less("ab", "", "a"));
        assert!(!joined_less("a", "", "a"));
        assert!(joined_less("a", "", "a_"));
    }

    /// A name is held if a closed family reserved it, joined or not, in order or not.
    #[test]
    fn held_names_are_those_reserved() {
        const COUNTER: &[&str] = &["_total", "_created"];
        for order_broken in [false, true] {
            let mut names = ReservedNames::with_capacity(2);
            if order_broken {
                names.reserve("z", &[""]);
            }
            names.reserve("a", COUNTER);
            for (name, suffix, held) in [
                ("a", "", true),
                ("a", "_total", true),
                ("a_total", "", true),
                ("a_cre", "ated", true),
                ("a", "_count", false),
                ("a_", "", false),
                ("b", "", false),
                ("b", "_total", false),
            ] {
                assert_eq!(
                    names.holds(name, suffix),
                    held,
                    "{name}{suffix}, order broken: {order_broken}"
                );
            }
        }
    }

    /// A clash is found whether the families came in order or not, and after the order
    /// broke, with the names reserved while it held.
    #[test]
    fn clashes_are_found_in_and_out_of_order() {
        const COUNTER: &[&str] = &["_total", "_created"];
        const GAUGE: &[&str] = &[""];
        /// Families in page order, and the one that clashes (`usize::MAX`: none).
        type Case = (&'static [(&'static str, &'static [&'static str])], usize);
        let cases: &[Case] = &[
            (&[("a", COUNTER), ("b", GAUGE), ("c", GAUGE)], usize::MAX),
            (&[("a", COUNTER), ("a_total", GAUGE)], 1),
            (&[("a", COUNTER), ("a_created", GAUGE)], 1),
            (&[("a", GAUGE), ("a", GAUGE)], 1),
            (&[("b", GAUGE), ("a", GAUGE), ("c", GAUGE)], usize::MAX),
            (&[("b", GAUGE), ("c", GAUGE), ("a", GAUGE), ("b", COUNTER)], 3),
            (&[("a_total", GAUGE), ("z", GAUGE), ("a", COUNTER)], 2),
        ];
        for (families, clash_at) in cases {
            let mut names = ReservedNames::with_capacity(2);
            let clashes: Vec<bool> = families.iter().map(|(n, s)| names.reserve(n, s)).collect();
            let want: Vec<bool> = (0..families.len()).map(|i| i == *clash_at).collect();
            assert_eq!(clashes, want, "{families:?}");
        }
    }
}
