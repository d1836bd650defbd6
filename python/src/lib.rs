//! `promrate` from Python: the library's parser, selectors, tracker and PromQL functions
//! as a Python extension module (`promrate._promrate`, re-exported by the package
//! `promrate`). Every figure, parse and message is the library's: this crate only converts
//! between Python values and the library's types, one place per type.

mod convert;
mod errors;
mod parse;
mod promql;
mod query;
mod select;
mod tracker;

use pyo3::prelude::*;

/// The compiled half of the `promrate` package.
#[pymodule]
fn _promrate(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(parse::parse, m)?)?;
    m.add_class::<parse::Sample>()?;
    m.add_class::<parse::Exemplar>()?;
    m.add_class::<parse::Histogram>()?;
    m.add_class::<parse::Summary>()?;
    m.add_class::<parse::NativeHistogram>()?;
    m.add_class::<parse::Metadata>()?;
    m.add_class::<parse::Entries>()?;
    m.add_class::<select::Selector>()?;
    m.add_class::<query::Estimator>()?;
    m.add_class::<query::SeriesScope>()?;
    m.add_class::<query::Query>()?;
    m.add_class::<query::Answer>()?;
    m.add_class::<query::GroupAnswer>()?;
    m.add_class::<query::Coverage>()?;
    m.add_class::<query::NoValue>()?;
    m.add_class::<tracker::Tracker>()?;
    m.add_class::<tracker::IngestReport>()?;
    m.add_class::<tracker::ResetEvent>()?;
    m.add_class::<tracker::Refusal>()?;
    m.add_class::<tracker::Unmatched>()?;
    m.add_class::<promql::Semantics>()?;
    m.add_class::<promql::RangeFunctions>()?;
    m.add_class::<promql::Anchored>()?;
    m.add_class::<promql::Smoothed>()?;
    m.add_class::<promql::StartAware>()?;
    m.add("ParseError", py.get_type::<errors::ParseError>())?;
    m.add("SelectorError", py.get_type::<errors::SelectorError>())?;
    m.add("QueryError", py.get_type::<errors::QueryError>())?;
    m.add("IngestError", py.get_type::<errors::IngestError>())?;
    Ok(())
}
