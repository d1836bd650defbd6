//! The simulator's page as an OpenMetrics 2.0 exporter writes the same families (for
//! `--serve-as openmetrics-2.0` and `negotiate`): metadata kept, a counter's samples with
//! their created time as `st@` (prometheus_client's separate `x_created` gauge families
//! are folded in), each histogram's series of one label group as one composite value
//! (`x{..} {count:..,sum:..,bucket:[le:v,...]} st@..`), gauges as they are, and `# EOF`.
//! Only what the simulator writes is converted (counters, gauges and histograms of the
//! text format 0.0.4); a page it cannot read is an error, never a page with lines lost.

use std::collections::HashMap;
use std::fmt::Write;

use promrate::text::write::{classic_composite, escaped, openmetrics2_series, GoFloat};
use promrate::text::CompositeKind;
use promrate::{Entry, MetricType, Sample};

/// A series' identity for joining a created time to it: its name without suffix and its
/// labels (without `le`), unescaped, in page order.
type Key = (String, Vec<(String, String)>);

/// The labels of `s` but `skip`, unescaped, in page order.
fn labels_without(s: &Sample<'_>, skip: &str) -> Vec<(String, String)> {
    s.labels()
        .iter_unescaped()
        .filter(|(k, _)| k != skip)
        .map(|(k, v)| (k.into_owned(), v.unescaped().into_owned()))
        .collect()
}

/// One label group of a histogram: its labels (without `le`), count, sum, buckets.
struct Group {
    labels: Vec<(String, String)>,
    count: f64,
    sum: f64,
    buckets: Vec<(f64, f64)>,
}

/// The page being written: the family being read and its histogram groups so far.
struct Writer {
    out: String,
    /// The created times (seconds), by the series they start.
    created: HashMap<Key, f64>,
    /// The family as 2.0 names it (a counter without `_total`), and as the page named it.
    family: String,
    named: String,
    kind: MetricType,
    /// The last `# HELP`: its name and text, written before its family's `# TYPE`.
    help: Option<(String, String)>,
    groups: Vec<Group>,
}

/// The text page `text` as OpenMetrics 2.0.
pub fn from_text(text: &str) -> Result<String, String> {
    let entries: Vec<Entry<'_>> = promrate::parse(text)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the simulator's page does not parse: {e}"))?;
    let mut writer = Writer {
        out: String::with_capacity(text.len()),
        created: created_times(&entries),
        family: String::new(),
        named: String::new(),
        kind: MetricType::Unknown,
        help: None,
        groups: Vec::new(),
    };
    for entry in &entries {
        match entry {
            Entry::Help { name, text } => {
                writer.help = Some((name.to_string(), text.unescaped().into_owned()));
            }
            Entry::Type { name, kind } => writer.family(name, *kind).map_err(|e| e.to_string())?,
            Entry::Sample(s) => writer.sample(s)?,
            _ => {}
        }
    }
    writer.flush().map_err(|e| e.to_string())?;
    writer.out.push_str("# EOF\n");
    Ok(writer.out)
}

/// `x_created` samples (each a gauge family of its own in prometheus_client's text), by
/// the series they start: `x_total`, or `x_bucket`, `x_count` and `x_sum`.
fn created_times(entries: &[Entry<'_>]) -> HashMap<Key, f64> {
    let mut created = HashMap::new();
    let mut kind = MetricType::Unknown;
    for entry in entries {
        match entry {
            Entry::Type { kind: k, .. } => kind = *k,
            Entry::Sample(s) if kind == MetricType::Gauge => {
                if let Some(base) = s.name().strip_suffix("_created") {
                    created.insert((base.to_string(), labels_without(s, "")), s.value());
                }
            }
            _ => {}
        }
    }
    created
}

impl Writer {
    /// ` st@<seconds>` for the series `base` with `labels`, if the page said when it began.
    fn start(&self, base: &str, labels: &[(String, String)]) -> String {
        self.created
            .get(&(base.to_string(), labels.to_vec()))
            .map(|seconds| format!(" st@{}", GoFloat(*seconds)))
            .unwrap_or_default()
    }

    fn folded(&self) -> bool {
        self.kind == MetricType::Gauge && self.named.ends_with("_created")
    }

    /// A `# TYPE` line: the family before it ends; this one's metadata, unless it is a
    /// created-time family (folded into its series' `st@`).
    fn family(&mut self, name: &str, kind: MetricType) -> std::fmt::Result {
        self.flush()?;
        (self.kind, self.named) = (kind, name.to_string());
        // A counter's family is its name without `_total` (2.0 allows either).
        self.family = match (kind, name.strip_suffix("_total")) {
            (MetricType::Counter, Some(base)) => base.to_string(),
            _ => name.to_string(),
        };
        let help = self.help.take().filter(|(named, _)| named == name);
        if self.folded() {
            return Ok(());
        }
        if let Some((_, text)) = help {
            write!(self.out, "# HELP {} ", self.family)?;
            escaped(&mut self.out, &text, true)?;
            self.out.push('\n');
        }
        writeln!(self.out, "# TYPE {} {}", self.family, kind.as_str())
    }

    fn sample(&mut self, s: &Sample<'_>) -> Result<(), String> {
        let written = match self.kind {
            _ if self.folded() => Ok(()),
            MetricType::Histogram => return self.bucket_part(s),
            MetricType::Counter => {
                let labels = labels_without(s, "");
                let start = self.start(&self.family, &labels);
                openmetrics2_series(&mut self.out, s.name(), labels.iter().map(|(k, v)| (k, v)))
                    .and_then(|()| writeln!(self.out, " {}{start}", GoFloat(s.value())))
            }
            _ => s.write_openmetrics2(&mut self.out),
        };
        written.map_err(|e| e.to_string())
    }

    /// A histogram's `_bucket`, `_count` or `_sum` sample, into its label group.
    fn bucket_part(&mut self, s: &Sample<'_>) -> Result<(), String> {
        let labels = labels_without(s, "le");
        let at = match self.groups.iter().position(|g| g.labels == labels) {
            Some(at) => at,
            None => {
                self.groups.push(Group {
                    labels,
                    count: 0.0,
                    sum: 0.0,
                    buckets: Vec::new(),
                });
                self.groups.len() - 1
            }
        };
        let group = &mut self.groups[at];
        match s.name().strip_prefix(self.family.as_str()) {
            Some("_count") => group.count = s.value(),
            Some("_sum") => group.sum = s.value(),
            Some("_bucket") => {
                let bound = s.labels().get("le").and_then(|le| le.raw().parse::<f64>().ok());
                let bound =
                    bound.ok_or_else(|| format!("{}: a bucket without a number for `le`", s.name()))?;
                group.buckets.push((bound, s.value()));
            }
            _ => return Err(format!("{} in the histogram {}", s.name(), self.family)),
        }
        Ok(())
    }

    /// Writes the histogram groups read so far, each as one composite value.
    fn flush(&mut self) -> std::fmt::Result {
        for g in std::mem::take(&mut self.groups) {
            openmetrics2_series(&mut self.out, &self.family, g.labels.iter().map(|(k, v)| (k, v)))?;
            self.out.push(' ');
            classic_composite(&mut self.out, CompositeKind::Histogram, g.count, g.sum, g.buckets)?;
            let start = self.start(&self.family, &g.labels);
            writeln!(self.out, "{start}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::from_text;

    /// Created times become `st@`, a histogram one composite line, and what 2.0 cannot
    /// say of a page is refused, not dropped.
    #[test]
    fn families_convert_and_what_cannot_is_refused() {
        let page = "# HELP a_total Things.\n# TYPE a_total counter\na_total{x=\"1\"} 3.0\n\
                    # TYPE a_created gauge\na_created{x=\"1\"} 1.5e+09\n\
                    # TYPE h histogram\nh_bucket{le=\"1.0\"} 1.0\nh_bucket{le=\"+Inf\"} 2.0\nh_count 2.0\nh_sum 3.5\n\
                    # TYPE h_created gauge\nh_created 1.5e+09\n";
        assert_eq!(
            from_text(page).unwrap(),
            "# HELP a Things.\n# TYPE a counter\na_total{x=\"1\"} 3.0 st@1.5e+09\n\
             # TYPE h histogram\nh {count:2,sum:3.5,bucket:[1.0:1,+Inf:2]} st@1.5e+09\n# EOF\n"
        );
        let letters = "# TYPE h histogram\nh_bucket{le=\"one\"} 1.0\n";
        assert!(from_text(letters).unwrap_err().contains("`le`"));
        assert!(from_text("a{ 1\n").is_err());
    }
}
