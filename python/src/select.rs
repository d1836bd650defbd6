//! `promrate.Selector`: a PromQL vector selector, and the one conversion of a selector
//! argument (a `Selector` or its text).

use pyo3::prelude::*;

use crate::convert::py_repr;
use crate::errors::selector_error;
use crate::parse::Sample;

/// A PromQL vector selector: a metric name and/or `{label matchers}` (`=`, `!=`, `=~`,
/// `!~`, regexes fully anchored). `matches(sample)` is whether a sample satisfies it;
/// `matches_family(sample)` also picks a histogram's or summary's `_bucket`, `_sum`,
/// `_count` and `_created` series by the family's name, as a `Tracker` does. A selector
/// that does not parse raises `SelectorError` with its `column`.
///
/// >>> import promrate
/// >>> tokens = promrate.Selector('vllm:generation_tokens_total{engine=~"0|1"}')
/// >>> tokens
/// Selector('vllm:generation_tokens_total{engine=~"0|1"}')
/// >>> page = 'vllm:generation_tokens_total{engine="0"} 10\nvllm:generation_tokens_total{engine="2"} 20\n'
/// >>> [s.labels["engine"] for s in promrate.parse(page) if tokens.matches(s)]
/// ['0']
/// >>> ttft = promrate.Selector("vllm:time_to_first_token_seconds")
/// >>> [bucket] = promrate.parse('vllm:time_to_first_token_seconds_bucket{le="0.1"} 3\n')
/// >>> ttft.matches(bucket), ttft.matches_family(bucket)
/// (False, True)
/// >>> promrate.Selector('up{job=}')
/// Traceback (most recent call last):
///     ...
/// promrate.SelectorError: column 8: expected a quoted string
#[pyclass(frozen, module = "promrate")]
pub struct Selector {
    pub inner: promrate::Selector,
    text: String,
}

#[pymethods]
impl Selector {
    #[new]
    fn new(py: Python<'_>, text: &str) -> PyResult<Self> {
        let inner = promrate::Selector::parse(text).map_err(|e| selector_error(py, &e))?;
        Ok(Selector {
            inner,
            text: text.to_string(),
        })
    }

    /// Whether the sample satisfies every matcher (a missing label matches like "").
    fn matches(&self, py: Python<'_>, sample: PyRef<'_, Sample>) -> PyResult<bool> {
        let (name, labels) = sample.identity(py)?;
        Ok(self.inner.matches_series(&name, lookup(&labels)))
    }

    /// Whether the sample is a series of a family this selector names (as `matches`,
    /// or the `_bucket`/`_sum`/`_count`/`_created` series of the histogram or summary it
    /// names).
    fn matches_family(&self, py: Python<'_>, sample: PyRef<'_, Sample>) -> PyResult<bool> {
        let (name, labels) = sample.identity(py)?;
        Ok(self.inner.matches_family_series(&name, lookup(&labels)))
    }

    /// The metric name the selector fixes, or None.
    ///
    /// >>> import promrate
    /// >>> promrate.Selector('up{job="a"}').metric_name, promrate.Selector('{job="a"}').metric_name
    /// ('up', None)
    #[getter]
    fn metric_name(&self) -> Option<&str> {
        self.inner.metric_name()
    }

    /// The selector in PromQL syntax, as Prometheus prints it (`up{job="a"}`).
    fn __str__(&self) -> String {
        self.inner.to_string()
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        Ok(format!("Selector({})", py_repr(py, &self.text)?))
    }
}

/// A label lookup over a sample's `(name, value)` pairs.
fn lookup<'l>(labels: &'l [(String, String)]) -> impl Fn(&str) -> Option<&'l str> {
    move |name| labels.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// A selector argument: a `Selector`, or its text (parsed here, `SelectorError` if bad),
/// with the text as given.
pub struct SelectorArg {
    pub selector: promrate::Selector,
    pub text: String,
}

impl<'a, 'py> FromPyObject<'a, 'py> for SelectorArg {
    type Error = PyErr;

    fn extract(ob: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if let Ok(selector) = ob.cast::<Selector>() {
            let selector = selector.get();
            return Ok(SelectorArg {
                selector: selector.inner.clone(),
                text: selector.text.clone(),
            });
        }
        let text: &str = ob.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err("a selector is a promrate.Selector or its text")
        })?;
        let parsed = promrate::Selector::parse(text).map_err(|e| selector_error(ob.py(), &e))?;
        Ok(SelectorArg {
            selector: parsed,
            text: text.to_string(),
        })
    }
}
