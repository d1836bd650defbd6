//! `promrate.parse`: a page's entries as Python objects (`Sample`, `Metadata`, and
//! `ParseError` for a bad line, after which the page goes on, as in Rust).

use chrono::{DateTime, Utc};
use promrate::{Entry, LabelValue, Labels, Parser};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyIterator, PyList, PyString, PyTuple};
use rustc_hash::FxHashMap;

use crate::convert::{format_of, page_text};
use crate::errors::parse_error;

/// One sample of a page: `name`, `labels` (a dict of unescaped values, in page order),
/// `value` (a float: NaN and ±Inf as written), `timestamp_ms` (the exposed timestamp in
/// milliseconds, or None) and `timestamp` (the same as an aware UTC datetime), and the
/// OpenMetrics `exemplar`, if any. OpenMetrics 2.0 adds `start_timestamp_ms` and
/// `start_timestamp` (`st@`), `composite` (a `Histogram` or `Summary` on one line; its
/// `value` is then NaN) and `exemplars` (every exemplar). `str(sample)` is its line in the
/// text format, or, for a composite value (which the text format has no line for), in
/// OpenMetrics 2.0.
///
/// >>> import promrate
/// >>> [s] = promrate.parse('http_requests_total{code="200",path="/a\\"b"} 1027 1395066363000\n')
/// >>> s
/// Sample(name='http_requests_total', labels={'code': '200', 'path': '/a"b'}, value=1027.0, timestamp_ms=1395066363000)
/// >>> s.timestamp.isoformat()
/// '2014-03-17T14:26:03+00:00'
/// >>> print(s)
/// http_requests_total{code="200",path="/a\"b"} 1027.0 1395066363000
#[pyclass(frozen, module = "promrate")]
pub struct Sample {
    /// The metric name.
    #[pyo3(get)]
    name: Py<PyString>,
    /// The labels, unescaped, in page order.
    #[pyo3(get)]
    labels: Py<PyDict>,
    /// The value.
    #[pyo3(get)]
    value: f64,
    /// The exposed timestamp in milliseconds since the epoch, or None.
    #[pyo3(get)]
    timestamp_ms: Option<i64>,
    /// The OpenMetrics exemplar, or None.
    #[pyo3(get)]
    exemplar: Option<Py<Exemplar>>,
    /// The OpenMetrics 2.0 start timestamp (`st@`) in milliseconds, or None.
    #[pyo3(get)]
    start_timestamp_ms: Option<i64>,
    /// The OpenMetrics 2.0 composite value (`Histogram` or `Summary`), or None.
    #[pyo3(get)]
    composite: Option<Py<PyAny>>,
    /// Every exemplar of the sample (OpenMetrics 2.0 allows several), in page order.
    #[pyo3(get)]
    exemplars: Py<PyTuple>,
    /// A composite value's OpenMetrics 2.0 line, written when it was read (`str`).
    composite_line: Option<String>,
}

#[pymethods]
impl Sample {
    /// The exposed timestamp as an aware UTC datetime, or None.
    #[getter]
    fn timestamp(&self) -> Option<DateTime<Utc>> {
        self.timestamp_ms.and_then(DateTime::from_timestamp_millis)
    }

    /// The OpenMetrics 2.0 start timestamp as an aware UTC datetime, or None.
    #[getter]
    fn start_timestamp(&self) -> Option<DateTime<Utc>> {
        self.start_timestamp_ms.and_then(DateTime::from_timestamp_millis)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut text = format!(
            "Sample(name={}, labels={}, value={}",
            self.name.bind(py).repr()?,
            self.labels.bind(py).repr()?,
            float_repr(py, self.value)?
        );
        if let Some(ms) = self.timestamp_ms {
            text.push_str(&format!(", timestamp_ms={ms}"));
        }
        if let Some(ms) = self.start_timestamp_ms {
            text.push_str(&format!(", start_timestamp_ms={ms}"));
        }
        if let Some(composite) = &self.composite {
            text.push_str(&format!(", composite={}", composite.bind(py).repr()?));
        }
        if let Some(exemplar) = &self.exemplar {
            text.push_str(&format!(", exemplar={}", exemplar.bind(py).repr()?));
        }
        text.push(')');
        Ok(text)
    }

    fn __str__(&self, py: Python<'_>) -> PyResult<String> {
        if let Some(line) = &self.composite_line {
            return Ok(line.trim_end().to_string());
        }
        let line = self.line(py)?;
        Ok(line.trim_end().to_string())
    }
}

impl Sample {
    /// The sample's name and `(label, value)` pairs, as Rust reads them.
    pub fn identity(&self, py: Python<'_>) -> PyResult<(String, Vec<(String, String)>)> {
        let labels = self
            .labels
            .bind(py)
            .iter()
            .map(|(k, v)| Ok((k.extract::<String>()?, v.extract::<String>()?)))
            .collect::<PyResult<Vec<_>>>()?;
        Ok((self.name.bind(py).to_str()?.to_string(), labels))
    }

    /// The sample as a text-format line, as the library writes it (`text::write::sample`).
    fn line(&self, py: Python<'_>) -> PyResult<String> {
        let (name, labels) = self.identity(py)?;
        let mut line = String::new();
        promrate::text::write::sample(&mut line, &name, &labels, self.value, self.timestamp_ms)
            .map_err(|_| PyValueError::new_err("the sample could not be written"))?;
        Ok(line)
    }
}

/// An OpenMetrics exemplar: `labels`, `value`, `timestamp_ms` and `timestamp`.
///
/// >>> import promrate
/// >>> page = '# TYPE a counter\na_total 1 # {trace_id="7"} 0.5 2.5\n# EOF\n'
/// >>> [_, sample, _] = promrate.parse(page, format="openmetrics")
/// >>> sample.exemplar
/// Exemplar(labels={'trace_id': '7'}, value=0.5, timestamp_ms=2500)
#[pyclass(frozen, module = "promrate")]
pub struct Exemplar {
    /// The exemplar's labels.
    #[pyo3(get)]
    labels: Py<PyDict>,
    /// The observed value.
    #[pyo3(get)]
    value: f64,
    /// Its timestamp in milliseconds, or None.
    #[pyo3(get)]
    timestamp_ms: Option<i64>,
}

#[pymethods]
impl Exemplar {
    /// The timestamp as an aware UTC datetime, or None.
    #[getter]
    fn timestamp(&self) -> Option<DateTime<Utc>> {
        self.timestamp_ms.and_then(DateTime::from_timestamp_millis)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let ts = self
            .timestamp_ms
            .map(|ms| format!(", timestamp_ms={ms}"))
            .unwrap_or_default();
        Ok(format!(
            "Exemplar(labels={}, value={}{ts})",
            self.labels.bind(py).repr()?,
            float_repr(py, self.value)?
        ))
    }
}

/// A line of a page that is not a sample: `kind` is 'help', 'type', 'unit', 'comment' or
/// 'eof'; `name` the family it is about (None for a comment and '# EOF'); `value` the help
/// text (unescaped), the type ('counter', 'gauge', 'histogram', 'summary',
/// 'gaugehistogram', 'info', 'stateset', 'unknown'), the unit, or the comment.
///
/// >>> import promrate
/// >>> list(promrate.parse("# HELP up Whether it is up.\n# TYPE up gauge\n"))
/// [Metadata(kind='help', name='up', value='Whether it is up.'), Metadata(kind='type', name='up', value='gauge')]
#[pyclass(frozen, module = "promrate")]
pub struct Metadata {
    /// 'help', 'type', 'unit', 'comment' or 'eof'.
    #[pyo3(get)]
    kind: &'static str,
    /// The family name, or None.
    #[pyo3(get)]
    name: Option<Py<PyString>>,
    /// The help text, type, unit or comment ('' for '# EOF').
    #[pyo3(get)]
    value: Py<PyString>,
}

#[pymethods]
impl Metadata {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let name = match &self.name {
            Some(name) => name.bind(py).repr()?.to_string(),
            None => "None".into(),
        };
        Ok(format!(
            "Metadata(kind='{}', name={name}, value={})",
            self.kind,
            self.value.bind(py).repr()?
        ))
    }
}

/// The entries of a page, in page order: an iterator of `Sample`, `Metadata` and (for a
/// line that does not parse) `ParseError`. The page is read when `parse` is called.
///
/// >>> import promrate
/// >>> entries = promrate.parse("a 1\nb{ 2\n")
/// >>> entries
/// <promrate.Entries: 1 sample, 0 metadata, 1 error; 2 entries left>
/// >>> [type(e).__name__ for e in entries]
/// ['Sample', 'ParseError']
#[pyclass(frozen, module = "promrate")]
pub struct Entries {
    /// An iterator over the list of entries: `for` loops use it directly (`__iter__`), so
    /// iterating costs what iterating a list costs.
    items: Py<PyIterator>,
    samples: usize,
    metadata: usize,
    errors: usize,
}

#[pymethods]
impl Entries {
    fn __iter__(&self, py: Python<'_>) -> Py<PyIterator> {
        self.items.clone_ref(py)
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.items
            .bind(py)
            .clone()
            .next()
            .transpose()
            .map(|e| e.map(Bound::unbind))
    }

    fn __length_hint__(&self, py: Python<'_>) -> PyResult<usize> {
        self.left(py)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        Ok(format!(
            "<promrate.Entries: {}, {} metadata, {}; {} left>",
            plural(self.samples, "sample", "samples"),
            self.metadata,
            plural(self.errors, "error", "errors"),
            plural(self.left(py)?, "entry", "entries"),
        ))
    }
}

impl Entries {
    fn left(&self, py: Python<'_>) -> PyResult<usize> {
        self.items.bind(py).call_method0("__length_hint__")?.extract()
    }
}

/// Parses a page (`str`, or `bytes` in UTF-8) into its entries: `Sample`, `Metadata`, and
/// a `ParseError` (with `line` and `column`) for each line that does not parse, after
/// which the page goes on. With `errors="raise"` the first bad line is raised instead.
///
/// `format` is 'text' (Prometheus text format 0.0.4 and 1.0.0, the default), 'openmetrics'
/// (1.0), 'openmetrics-2.0.0' (or 'openmetrics2': start timestamps, composite values), or the
/// `Content-Type` header of the response (anything but `application/openmetrics-text` is
/// read as text, as Prometheus does). `strict=False` reads OpenMetrics line by line (what
/// vLLM's prometheus_client output needs) and keeps unknown escapes as written.
///
/// >>> import promrate
/// >>> page = 'up{job="a"} 1\nup{job="b" 0\nup{job="c"} 1\n'
/// >>> for entry in promrate.parse(page):
/// ...     print(repr(entry) if isinstance(entry, promrate.Sample) else f"error: {entry}")
/// Sample(name='up', labels={'job': 'a'}, value=1.0)
/// error: line 2, column 12: expected ',' or '}' after a label
/// Sample(name='up', labels={'job': 'c'}, value=1.0)
/// >>> promrate.parse(page, errors="raise")
/// Traceback (most recent call last):
///     ...
/// promrate.ParseError: line 2, column 12: expected ',' or '}' after a label
/// >>> ct = "application/openmetrics-text; version=1.0.0; charset=utf-8"
/// >>> [s.value for s in promrate.parse(b"a 1.5 10\n# EOF\n", format=ct) if isinstance(s, promrate.Sample)]
/// [1.5]
#[pyfunction]
#[pyo3(signature = (page, format = None, *, strict = true, errors = "yield"))]
pub fn parse(
    py: Python<'_>,
    page: &Bound<'_, PyAny>,
    format: Option<&str>,
    strict: bool,
    errors: &str,
) -> PyResult<Entries> {
    let raise = match errors {
        "yield" => false,
        "raise" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "errors is 'yield' or 'raise', not {other:?}"
            )))
        }
    };
    let text = page_text(page)?;
    let parser = Parser::new(format_of(format)?).strict(strict);
    let mut strings = Strings::new(text.len());
    let mut items = Vec::with_capacity(text.len() / 64);
    let (mut samples, mut metadata, mut bad) = (0, 0, 0);
    for entry in parser.parse(text) {
        let item = match entry {
            Ok(Entry::Sample(sample)) => {
                samples += 1;
                strings.sample(py, &sample)?.into_any()
            }
            Ok(other) => {
                metadata += 1;
                strings.metadata(py, &other)?.into_any()
            }
            Err(e) => {
                let err = parse_error(py, &e)?;
                if raise {
                    return Err(PyErr::from_value(err.into_any()));
                }
                bad += 1;
                err.into_any().unbind()
            }
        };
        items.push(item);
    }
    let items = PyList::new(py, items)?.try_iter()?.unbind();
    Ok(Entries {
        items,
        samples,
        metadata,
        errors: bad,
    })
}

/// The Python strings of one page's names and label values: a name or value that repeats
/// (every `engine="0"`, every `_bucket`) is one Python string, made once. Samples in a row
/// mostly repeat the one before (a histogram's buckets): each position (the name, each
/// label's name and value) first compares with the previous sample's text, and a sample
/// whose label names are the previous sample's gets a copy of its dict with only the
/// values that differ set again. A label set seen before anywhere on the page (the same
/// text between the braces) is a copy of that sample's dict. Every sample owns its dict.
struct Strings<'page, 'py> {
    made: FxHashMap<&'page str, Bound<'py, PyString>>,
    /// The previous sample's text and string at each position.
    previous: Vec<(&'page str, Bound<'py, PyString>)>,
    /// The labels dict and how many labels it has of the last sample whose labels were
    /// made here (not copied whole from `label_sets`): the one `previous` holds the text of.
    previous_labels: Option<(Bound<'py, PyDict>, usize)>,
    /// The labels dict of each label text seen on the page.
    label_sets: FxHashMap<&'page str, Bound<'py, PyDict>>,
    /// This sample's labels, as (name, value as written).
    current: Vec<(&'page str, &'page str)>,
}

/// Where a sample's labels start among the positions (after its name); an exemplar's
/// labels are not remembered (`Strings::at` keeps positions up to those in use).
const SAMPLE_LABELS: usize = 1;
const NOT_REMEMBERED: usize = usize::MAX / 2;

impl<'page, 'py> Strings<'page, 'py> {
    fn new(page_len: usize) -> Self {
        Strings {
            made: FxHashMap::with_capacity_and_hasher(page_len / 64, Default::default()),
            previous: Vec::new(),
            previous_labels: None,
            label_sets: FxHashMap::with_capacity_and_hasher(page_len / 128, Default::default()),
            current: Vec::new(),
        }
    }

    /// The string of `text`, made once per page. A label value as written (`raw`) is the
    /// key of its unescaped string (a quoted label name's escapes are a value's, so a key is one string either way).
    fn cached(&mut self, py: Python<'py>, text: &'page str) -> Bound<'py, PyString> {
        self.made
            .entry(text)
            .or_insert_with(|| {
                if text.contains('\\') {
                    PyString::new(py, &LabelValue::from_raw(text).unescaped())
                } else {
                    PyString::new(py, text)
                }
            })
            .clone()
    }

    /// The string of `text` at `position` (0: the name; then each label's name and value).
    fn at(&mut self, py: Python<'py>, position: usize, text: &'page str) -> Bound<'py, PyString> {
        if let Some((previous, string)) = self.previous.get(position) {
            if *previous == text {
                return string.clone();
            }
        }
        // A metric name that is not the previous one is mostly a new family's: made, not
        // looked up.
        let string = if position == 0 {
            // A quoted name may hold escapes (`{"a\\"b"}`): Python sees the name, as it
            // sees label names and values, not how the page spelled it.
            if text.contains('\\') {
                PyString::new(py, &LabelValue::from_raw(text).unescaped())
            } else {
                PyString::new(py, text)
            }
        } else {
            self.cached(py, text)
        };
        if let Some(slot) = self.previous.get_mut(position) {
            *slot = (text, string.clone());
        } else if position == self.previous.len() {
            self.previous.push((text, string.clone()));
        }
        string
    }

    /// Whether the previous sample's labels had these names, in this order.
    fn same_names(&self) -> bool {
        matches!(&self.previous_labels, Some((_, n)) if *n == self.current.len())
            && self.current.iter().enumerate().all(|(i, (name, _))| {
                self.previous
                    .get(SAMPLE_LABELS + 2 * i)
                    .is_some_and(|(previous, _)| previous == name)
            })
    }

    fn labels(
        &mut self,
        py: Python<'py>,
        labels: Labels<'page>,
        first: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        // Label sets repeat across a page (every family of a server carries its `engine`
        // and `model_name`; histograms share bucket bounds): one seen before is copied.
        let text = labels.as_raw();
        if first == SAMPLE_LABELS {
            if let Some(seen) = self.label_sets.get(text) {
                return seen.copy();
            }
        }
        self.current.clear();
        self.current
            .extend(labels.into_iter().map(|(name, value)| (name, value.raw())));
        let copied = if first == SAMPLE_LABELS && self.same_names() {
            self.previous_labels
                .as_ref()
                .map(|(dict, _)| dict.copy())
                .transpose()?
        } else {
            None
        };
        let dict = match copied {
            Some(dict) => {
                for i in 0..self.current.len() {
                    let (_, raw) = self.current[i];
                    let position = first + 2 * i + 1;
                    if self.previous[position].0 != raw {
                        let name = self.previous[position - 1].1.clone();
                        let value = self.at(py, position, raw);
                        dict.set_item(name, value)?;
                    }
                }
                dict
            }
            None => {
                let dict = PyDict::new(py);
                for i in 0..self.current.len() {
                    let (name, raw) = self.current[i];
                    let position = first + 2 * i;
                    let name = self.at(py, position, name);
                    let value = self.at(py, position + 1, raw);
                    dict.set_item(name, value)?;
                }
                dict
            }
        };
        if first == SAMPLE_LABELS {
            self.previous_labels = Some((dict.clone(), self.current.len()));
            self.label_sets.insert(text, dict.clone());
        }
        Ok(dict)
    }

    /// A line that is not a sample (its family name shares the samples' strings).
    fn metadata(&mut self, py: Python<'py>, entry: &Entry<'page>) -> PyResult<Py<Metadata>> {
        let (kind, name, value) = match entry {
            Entry::Help { name, text } => ("help", Some(*name), PyString::new(py, &text.unescaped())),
            Entry::Type { name, kind } => ("type", Some(*name), self.cached(py, kind.as_str())),
            Entry::Unit { name, unit } => ("unit", Some(*name), PyString::new(py, unit)),
            Entry::Comment(text) => ("comment", None, PyString::new(py, text)),
            Entry::Eof => ("eof", None, self.cached(py, "")),
            _ => ("other", None, PyString::new(py, &entry.to_string())),
        };
        let name = name.map(|name| self.at(py, 0, name).unbind());
        Py::new(
            py,
            Metadata {
                kind,
                name,
                value: value.unbind(),
            },
        )
    }

    fn exemplar(&mut self, py: Python<'py>, e: &promrate::text::Exemplar<'page>) -> PyResult<Py<Exemplar>> {
        Py::new(
            py,
            Exemplar {
                labels: self.labels(py, e.labels(), NOT_REMEMBERED)?.unbind(),
                value: e.value(),
                timestamp_ms: e.timestamp_ms(),
            },
        )
    }

    fn sample(&mut self, py: Python<'py>, sample: &promrate::Sample<'page>) -> PyResult<Py<Sample>> {
        let mut exemplars = Vec::new();
        for e in sample.exemplars() {
            exemplars.push(self.exemplar(py, &e)?);
        }
        let exemplar = exemplars.first().map(|e| e.clone_ref(py));
        let composite = sample
            .composite()
            .map(|value| composite_object(py, &value))
            .transpose()?;
        let composite_line = match composite {
            Some(_) => {
                let mut line = String::new();
                sample
                    .write_openmetrics2(&mut line)
                    .map_err(|_| PyValueError::new_err("the sample could not be written"))?;
                Some(line)
            }
            None => None,
        };
        Py::new(
            py,
            Sample {
                name: self.at(py, 0, sample.name()).unbind(),
                labels: self.labels(py, sample.labels(), SAMPLE_LABELS)?.unbind(),
                value: sample.value(),
                timestamp_ms: sample.timestamp_ms(),
                exemplar,
                start_timestamp_ms: sample.start_timestamp_ms(),
                composite,
                exemplars: PyTuple::new(py, exemplars)?.unbind(),
                composite_line,
            },
        )
    }
}

/// A float as Python's `repr` writes it (`1.0`, `nan`, `inf`, `1e+300`).
pub fn float_repr(py: Python<'_>, value: f64) -> PyResult<String> {
    Ok(pyo3::types::PyFloat::new(py, value).repr()?.to_string())
}

/// An OpenMetrics 2.0 histogram or gauge histogram on one line: `kind` ('histogram' or
/// 'gaugehistogram'), `count`, `sum`, `buckets` (the classic buckets as `(le, count)`
/// tuples, cumulative, the last `le` inf; None without classic buckets) and `native` (a
/// `NativeHistogram`, or None).
///
/// >>> import promrate
/// >>> page = "# TYPE foo histogram\nfoo {count:17,sum:324789.3,bucket:[0.01:0,0.1:8,1.0:11,10.0:17,+Inf:17]} st@1520430000.123\n# EOF\n"
/// >>> [_, s, _] = promrate.parse(page, format="openmetrics-2.0.0")
/// >>> s.composite
/// Histogram(kind='histogram', count=17.0, sum=324789.3, buckets=[(0.01, 0.0), (0.1, 8.0), (1.0, 11.0), (10.0, 17.0), (inf, 17.0)])
/// >>> s.start_timestamp_ms
/// 1520430000123
#[pyclass(frozen, module = "promrate")]
pub struct Histogram {
    /// 'histogram' or 'gaugehistogram'.
    #[pyo3(get)]
    kind: &'static str,
    /// The count of observations (a gauge histogram's `gcount`).
    #[pyo3(get)]
    count: f64,
    /// The sum of observations (a gauge histogram's `gsum`).
    #[pyo3(get)]
    sum: f64,
    /// The classic buckets as `(le, cumulative count)`, or None.
    #[pyo3(get)]
    buckets: Option<Py<PyList>>,
    /// The native buckets, or None.
    #[pyo3(get)]
    native: Option<Py<NativeHistogram>>,
}

#[pymethods]
impl Histogram {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let mut text = format!(
            "Histogram(kind='{}', count={}, sum={}",
            self.kind,
            float_repr(py, self.count)?,
            float_repr(py, self.sum)?
        );
        if let Some(buckets) = &self.buckets {
            text.push_str(&format!(", buckets={}", buckets.bind(py).repr()?));
        }
        if let Some(native) = &self.native {
            text.push_str(&format!(", native={}", native.bind(py).repr()?));
        }
        text.push(')');
        Ok(text)
    }
}

/// An OpenMetrics 2.0 summary on one line: `count`, `sum` and `quantiles` (`(quantile,
/// value)` tuples, in increasing quantile order).
///
/// >>> import promrate
/// >>> page = "# TYPE rpc summary\nrpc {count:10,sum:5.0,quantile:[0.5:0.3,0.9:0.7]}\n# EOF\n"
/// >>> [_, s, _] = promrate.parse(page, format="openmetrics-2.0.0")
/// >>> s.composite
/// Summary(count=10.0, sum=5.0, quantiles=[(0.5, 0.3), (0.9, 0.7)])
#[pyclass(frozen, module = "promrate")]
pub struct Summary {
    /// The count of observations.
    #[pyo3(get)]
    count: f64,
    /// The sum of observations.
    #[pyo3(get)]
    sum: f64,
    /// The quantiles as `(quantile, value)`.
    #[pyo3(get)]
    quantiles: Py<PyList>,
}

#[pymethods]
impl Summary {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "Summary(count={}, sum={}, quantiles={})",
            float_repr(py, self.count)?,
            float_repr(py, self.sum)?,
            self.quantiles.bind(py).repr()?
        ))
    }
}

/// An OpenMetrics 2.0 native (exponential) histogram's buckets: `schema` (-4 to 8; bucket
/// bounds grow by 2^(2^-schema)), `zero_threshold` and `zero_count` (the zero bucket),
/// and per side the `spans` as `(offset, length)` tuples and the `buckets`' counts.
///
/// >>> import promrate
/// >>> page = "# TYPE h histogram\nh {count:12,sum:3.5,schema:3,zero_threshold:1e-4,zero_count:1,positive_spans:[-1:2,3:1],positive_buckets:[4,5,2]}\n# EOF\n"
/// >>> [_, s, _] = promrate.parse(page, format="openmetrics-2.0.0")
/// >>> n = s.composite.native
/// >>> n
/// NativeHistogram(schema=3, zero_threshold=0.0001, zero_count=1.0, positive_spans=[(-1, 2), (3, 1)], positive_buckets=[4.0, 5.0, 2.0], negative_spans=[], negative_buckets=[])
/// >>> s.composite.buckets is None
/// True
#[pyclass(frozen, module = "promrate")]
pub struct NativeHistogram {
    /// The schema.
    #[pyo3(get)]
    schema: i8,
    /// The zero bucket's threshold.
    #[pyo3(get)]
    zero_threshold: f64,
    /// Observations in the zero bucket.
    #[pyo3(get)]
    zero_count: f64,
    /// The positive buckets' spans as `(offset, length)`.
    #[pyo3(get)]
    positive_spans: Py<PyList>,
    /// The positive buckets' counts.
    #[pyo3(get)]
    positive_buckets: Py<PyList>,
    /// The negative buckets' spans as `(offset, length)`.
    #[pyo3(get)]
    negative_spans: Py<PyList>,
    /// The negative buckets' counts.
    #[pyo3(get)]
    negative_buckets: Py<PyList>,
}

#[pymethods]
impl NativeHistogram {
    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!(
            "NativeHistogram(schema={}, zero_threshold={}, zero_count={}, positive_spans={}, \
             positive_buckets={}, negative_spans={}, negative_buckets={})",
            self.schema,
            float_repr(py, self.zero_threshold)?,
            float_repr(py, self.zero_count)?,
            self.positive_spans.bind(py).repr()?,
            self.positive_buckets.bind(py).repr()?,
            self.negative_spans.bind(py).repr()?,
            self.negative_buckets.bind(py).repr()?,
        ))
    }
}

/// A list of `(a, b)` tuples.
fn pair_list<A, B>(py: Python<'_>, pairs: impl Iterator<Item = (A, B)>) -> PyResult<Py<PyList>>
where
    (A, B): for<'py> IntoPyObject<'py>,
{
    Ok(PyList::new(py, pairs.collect::<Vec<_>>())?.unbind())
}

fn native_object(
    py: Python<'_>,
    native: &promrate::text::NativeHistogram<'_>,
) -> PyResult<Py<NativeHistogram>> {
    let spans = |spans: promrate::text::BucketSpans<'_>| pair_list(py, spans.map(|s| (s.offset, s.length)));
    Py::new(
        py,
        NativeHistogram {
            schema: native.schema(),
            zero_threshold: native.zero_threshold(),
            zero_count: native.zero_count(),
            positive_spans: spans(native.positive_spans())?,
            positive_buckets: PyList::new(py, native.positive_buckets())?.unbind(),
            negative_spans: spans(native.negative_spans())?,
            negative_buckets: PyList::new(py, native.negative_buckets())?.unbind(),
        },
    )
}

/// A composite value as its Python object: a `Histogram` or a `Summary`.
fn composite_object(py: Python<'_>, value: &promrate::text::CompositeValue<'_>) -> PyResult<Py<PyAny>> {
    let kind = match value.kind() {
        promrate::text::CompositeKind::Summary => {
            let quantiles = pair_list(py, value.quantiles().into_iter().flatten())?;
            let summary = Summary {
                count: value.count(),
                sum: value.sum(),
                quantiles,
            };
            return Ok(Py::new(py, summary)?.into_any());
        }
        promrate::text::CompositeKind::GaugeHistogram => "gaugehistogram",
        _ => "histogram",
    };
    let buckets = value.buckets().map(|b| pair_list(py, b)).transpose()?;
    let native = value.native().map(|n| native_object(py, &n)).transpose()?;
    let histogram = Histogram {
        kind,
        count: value.count(),
        sum: value.sum(),
        buckets,
        native,
    };
    Ok(Py::new(py, histogram)?.into_any())
}
