//! 64-bit fingerprints of names and label sets, for the places that remember identities
//! without storing them (OpenMetrics validation) or look them up before comparing in full
//! (the tracker). Label sets combine by XOR, so label order does not matter.

/// FNV-1a over `bytes`, then a finalizer so that XOR-combined fingerprints stay well mixed.
pub(crate) fn of_bytes(bytes: impl IntoIterator<Item = u8>) -> u64 {
    let h = bytes.into_iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let h = (h ^ (h >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    let h = (h ^ (h >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// One label: its name, a separator no name contains, and its (unescaped) value bytes.
pub(crate) fn of_label(name: &str, value: impl IntoIterator<Item = u8>) -> u64 {
    of_bytes(name.bytes().chain([0xff]).chain(value))
}

/// An order-independent label set: `seed` XOR the fingerprint of every label.
pub(crate) fn of_label_set<'n, V: IntoIterator<Item = u8>>(
    seed: u64,
    labels: impl IntoIterator<Item = (&'n str, V)>,
) -> u64 {
    labels
        .into_iter()
        .fold(seed, |acc, (name, value)| acc ^ of_label(name, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_sets_ignore_order_but_not_content() {
        let set = |labels: &[(&'static str, &'static str)]| {
            of_label_set(7, labels.iter().map(|(k, v)| (*k, v.bytes())))
        };
        assert_eq!(set(&[("a", "1"), ("b", "2")]), set(&[("b", "2"), ("a", "1")]));
        assert_ne!(set(&[("a", "1"), ("b", "2")]), set(&[("a", "2"), ("b", "1")]));
        assert_ne!(set(&[("ab", "")]), set(&[("a", "b")]));
        assert_ne!(of_bytes(*b"a_total"), of_bytes(*b"a_created"));
    }
}
