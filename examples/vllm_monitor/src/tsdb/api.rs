//! The Prometheus HTTP API as `--prometheus` uses it: a range selector's raw samples
//! through `/api/v1/query` (a matrix: each series' samples with their own timestamps),
//! label values, and the API's errors in its own words with what to change.
//!
//! Prometheus, VictoriaMetrics, Thanos and Mimir all answer these requests the same way:
//! `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},
//! "values":[[1764626400.123,"1600"],...]}]}}`, or `{"status":"error","errorType":...,
//! "error":...}` beside a 4xx or 5xx status.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use thiserror::Error;

use crate::http::{Client, Endpoint};

/// Why a request to the API gave no answer to use.
#[derive(Debug, Error)]
pub enum ApiError {
    /// No answer: connection, DNS, TLS, deadline, size (the scrape client's words).
    #[error("{0}")]
    Transport(String),
    /// The API refused the request, in its own words.
    #[error("HTTP {status} ({kind}): {message}; {hint}")]
    Refused {
        status: u16,
        kind: String,
        message: String,
        hint: &'static str,
    },
    /// An answer that is not the API's JSON.
    #[error("HTTP {status}: not an answer of the Prometheus HTTP API ({excerpt}); {hint}")]
    NotApi {
        status: u16,
        excerpt: String,
        hint: &'static str,
    },
}

impl ApiError {
    /// Whether the TSDB refused to load that many samples or series (a smaller request
    /// may pass).
    pub fn is_too_large(&self) -> bool {
        matches!(self, ApiError::Refused { message, .. } if too_large(message))
    }
}

/// Prometheus' "query processing would load too many samples into memory",
/// VictoriaMetrics' -search.maxSamplesPerQuery and -search.maxUniqueTimeseries refusals,
/// Mimir's per-query limits ("the query exceeded the maximum number of chunks ...
/// (err-mimir-max-chunks-per-query)", of series, of chunk bytes) and Thanos' store limits
/// ("exceeded bytes limit while fetching chunks: limit ... violated", of series, of
/// samples).
fn too_large(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    let thanos_limit = lower.contains("exceeded") && lower.contains("limit") && lower.contains("violated");
    thanos_limit
        || [
            "too many samples",
            "maxsamplesperquery",
            "maxuniquetimeseries",
            "maxseries",
            "err-mimir-max-",
            "exceeded the maximum number",
            "exceeded the limit",
        ]
        .iter()
        .any(|words| lower.contains(words))
}

/// What to change for an error of the API (its `errorType`, its message, its status).
pub fn hint(status: u16, kind: &str, message: &str) -> &'static str {
    let lower = message.to_ascii_lowercase();
    if too_large(message) {
        "the TSDB refused to load that many samples at once, even in the smallest request (one \
         interval and the lookback of a group of servers): read less with a shorter --interval or \
         --lookback, or raise its limit (Prometheus --query.max-samples, \
         VictoriaMetrics -search.maxSamplesPerQuery and -search.maxUniqueTimeseries, Mimir \
         max_fetched_chunks_per_query and max_fetched_series_per_query, Thanos \
         --store.limits.request-samples and --store.limits.request-series)"
    } else if kind == "timeout" || lower.contains("timed out") || lower.contains("timeout") {
        "the TSDB gave up on the query: raise its limit (Prometheus --query.timeout, \
         VictoriaMetrics -search.maxQueryDuration) or read less per request (a shorter --interval \
         or --lookback)"
    } else if status == 401 || status == 403 {
        "check the credentials: --bearer-token-file, user:password@ in the base URL, or \
         --header 'X-Scope-OrgID: TENANT' for a multi-tenant Mimir or Thanos"
    } else if status == 404 || status == 405 {
        "no Prometheus HTTP API under this base URL: give the one under which /api/v1/query \
         answers (Mimir: .../prometheus; VictoriaMetrics cluster: .../select/0/prometheus); \
         a server's own metrics page is read with --url"
    } else if status == 400 || kind == "bad_data" {
        "the TSDB refused the query as written (a --header it rejects, or a TSDB that does not \
         serve range selectors through /api/v1/query)"
    } else if status >= 500 {
        "the TSDB failed to answer: see its log, and try again"
    } else {
        "see the TSDB's log"
    }
}

/// The API's envelope, success or error.
#[derive(Deserialize)]
struct Envelope<T> {
    status: String,
    data: Option<T>,
    #[serde(rename = "errorType")]
    error_type: Option<String>,
    error: Option<String>,
    /// Said beside a success: a Thanos or Mimir answer missing a store's series
    /// ("partial response"), a query that hit a limit.
    #[serde(default)]
    warnings: Vec<String>,
    #[serde(default)]
    infos: Vec<String>,
    /// VictoriaMetrics' word for an answer missing a storage node's series.
    #[serde(rename = "isPartial", default)]
    is_partial: bool,
}

/// What a series of an answer becomes as soon as it is read ([`parse_each`]): the series
/// itself, or its lines ([`super::pages::Written`]).
pub trait FromSeries {
    /// What `series` becomes.
    fn from_series(series: Series) -> Self;
}

impl FromSeries for Series {
    fn from_series(series: Series) -> Self {
        series
    }
}

/// A query's data, a matrix (`values`) or a vector (`value`) alike, each series made a
/// `T` as it is read ([`parse_each`]).
#[derive(Deserialize)]
#[serde(bound = "T: FromSeries")]
struct EachData<T> {
    #[serde(rename = "resultType")]
    result_type: String,
    #[serde(deserialize_with = "each_as_read")]
    result: Each<T>,
}

/// The series of an answer, and the samples left out of them.
struct Each<T> {
    series: Vec<T>,
    unreadable: Unreadable,
}

/// Samples whose value is no number (`"1e400"`, `""`, `null`, a JSON number): each is left
/// out, not the whole answer with it (every instance's figures would go for one sample,
/// and the reads after it would reach back to it again and again).
#[derive(Debug, Default)]
pub struct Unreadable {
    pub samples: usize,
    /// The first one: its series' name and the value as written.
    pub first: Option<String>,
}

/// The series of `result`, each made a `T` as soon as it is read: one series' parsed
/// labels and values exist at a time, not the whole answer's (at 1 KB a series, an answer
/// of 100,000 series would hold 100 MB more while it is read).
fn each_as_read<'de, D: Deserializer<'de>, T: FromSeries>(d: D) -> Result<Each<T>, D::Error> {
    struct EachVisitor<T>(std::marker::PhantomData<T>);
    impl<'de, T: FromSeries> Visitor<'de> for EachVisitor<T> {
        type Value = Each<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of series")
        }
        /// `"result": null`: no series.
        fn visit_unit<E: serde::de::Error>(self) -> Result<Each<T>, E> {
            Ok(Each {
                series: Vec::new(),
                unreadable: Unreadable::default(),
            })
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Each<T>, A::Error> {
            let mut series = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            let mut unreadable = Unreadable::default();
            while let Some(result) = seq.next_element::<ResultSeries>()? {
                series.push(T::from_series(series_of(result, &mut unreadable)));
            }
            Ok(Each { series, unreadable })
        }
    }
    d.deserialize_any(EachVisitor(std::marker::PhantomData))
}

#[derive(Deserialize)]
struct ResultSeries {
    metric: BTreeMap<String, String>,
    #[serde(default)]
    values: Vec<(f64, ValueText)>,
    value: Option<(f64, ValueText)>,
}

/// A sample's value as written: its text, or what came instead of a string.
struct ValueText(Result<String, String>);

impl<'de> Deserialize<'de> for ValueText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = ValueText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a sample's value")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ValueText, E> {
                Ok(ValueText(Ok(v.to_string())))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<ValueText, E> {
                Ok(ValueText(Err(format!("the number {v} (not a string)"))))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<ValueText, E> {
                self.visit_f64(v as f64)
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<ValueText, E> {
                self.visit_f64(v as f64)
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<ValueText, E> {
                Ok(ValueText(Err(format!("{v}"))))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<ValueText, E> {
                Ok(ValueText(Err("null".into())))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ValueText, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(ValueText(Err("a list".into())))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<ValueText, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(ValueText(Err("an object".into())))
            }
        }
        d.deserialize_any(Text)
    }
}

/// One series of a matrix: its labels (`__name__` apart) and samples, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub labels: Vec<(String, String)>,
    /// Unix milliseconds and values.
    pub samples: Vec<(i64, f64)>,
}

/// A sample's value as the API writes it (`"1600"`, `"NaN"`, `"+Inf"`).
fn value_of(text: &str) -> Option<f64> {
    match text {
        "NaN" => Some(f64::NAN),
        "+Inf" | "Inf" => Some(f64::INFINITY),
        "-Inf" => Some(f64::NEG_INFINITY),
        _ => text.parse().ok().filter(|v: &f64| v.is_finite()),
    }
}

/// Unix seconds as the API writes them, in milliseconds.
fn millis(seconds: f64) -> i64 {
    (seconds * 1000.0).round() as i64
}

/// Reads an answer of status `status` into its data and the warnings beside it, or the
/// API's error.
fn envelope<T: serde::de::DeserializeOwned>(status: u16, body: &str) -> Result<(T, Vec<String>), ApiError> {
    let parsed: Result<Envelope<T>, _> = serde_json::from_str(body);
    let not_api = |hint| ApiError::NotApi {
        status,
        excerpt: crate::text::keep_start(&body.split_whitespace().collect::<Vec<_>>().join(" "), 120),
        hint,
    };
    let answer = match parsed {
        Ok(answer) => answer,
        Err(_) => return Err(not_api(hint(status, "", body))),
    };
    match (answer.status.as_str(), answer.data) {
        ("success", Some(data)) if status == 200 => {
            let mut said = answer.warnings;
            said.extend(answer.infos);
            if answer.is_partial {
                said.push(
                    "isPartial: the answer misses some of the series (a storage node did not answer)".into(),
                );
            }
            Ok((data, said))
        }
        _ => {
            let kind = answer.error_type.unwrap_or_default();
            let message = answer.error.unwrap_or_else(|| "no error given".into());
            Err(ApiError::Refused {
                status,
                hint: hint(status, &kind, &message),
                kind,
                message,
            })
        }
    }
}

/// One series of an answer: its name apart from its labels, its samples sorted by time,
/// those whose value is no number left out (counted in `unreadable`).
fn series_of(result: ResultSeries, unreadable: &mut Unreadable) -> Series {
    let mut labels: Vec<(String, String)> = Vec::with_capacity(result.metric.len());
    let mut name = String::new();
    for (label, value) in result.metric {
        if label == "__name__" {
            name = value;
        } else {
            labels.push((label, value));
        }
    }
    let mut samples = Vec::with_capacity(result.values.len());
    for (at, text) in result.values.iter().chain(result.value.iter()) {
        match text.0.as_deref().map(value_of) {
            Ok(Some(value)) => samples.push((millis(*at), value)),
            unread => {
                unreadable.samples += 1;
                if unreadable.first.is_none() {
                    let what = match unread {
                        Ok(_) => format!("{:?}", text.0.as_deref().unwrap_or_default()),
                        Err(what) => what.to_string(),
                    };
                    unreadable.first = Some(format!("{name}: {what}"));
                }
            }
        }
    }
    samples.sort_by_key(|s| s.0);
    Series {
        name,
        labels,
        samples,
    }
}

/// The answer's type, which must be a matrix or a vector.
fn check_result_type(status: u16, result_type: &str) -> Result<(), ApiError> {
    if result_type != "matrix" && result_type != "vector" {
        return Err(ApiError::NotApi {
            status,
            excerpt: format!("resultType {result_type}"),
            hint: "a range selector's answer is a matrix",
        });
    }
    Ok(())
}

/// A matrix answer as series, each sorted by time; a vector's samples are taken as one
/// sample each.
pub fn parse_matrix(status: u16, body: &str) -> Result<Vec<Series>, ApiError> {
    parse_each(status, body)
}

/// [`parse_matrix`] with each series made a `T` as it is read: only the body and the
/// `T`s are held, never the whole answer parsed.
pub fn parse_each<T: FromSeries>(status: u16, body: &str) -> Result<Vec<T>, ApiError> {
    parse_answer(status, body).map(|answer| answer.series)
}

/// An answer's series, with what the API said beside them and the samples left out.
pub struct Answer<T> {
    pub series: Vec<T>,
    /// The API's warnings and infos.
    pub said: Vec<String>,
    pub unreadable: Unreadable,
}

impl<T> Answer<T> {
    /// The samples left out as no number, in words, if any.
    pub fn unreadable_words(&self) -> Option<String> {
        let first = self.unreadable.first.as_ref()?;
        Some(format!(
            "{} sample(s) whose value is no number left out, the others read (the first: {first})",
            self.unreadable.samples
        ))
    }
}

/// [`parse_each`] with what came beside the series.
pub fn parse_answer<T: FromSeries>(status: u16, body: &str) -> Result<Answer<T>, ApiError> {
    let (data, said): (EachData<T>, _) = envelope(status, body)?;
    check_result_type(status, &data.result_type)?;
    Ok(Answer {
        series: data.result.series,
        said,
        unreadable: data.result.unreadable,
    })
}

/// A list of strings (label values).
pub fn parse_strings(status: u16, body: &str) -> Result<Vec<String>, ApiError> {
    envelope(status, body).map(|(strings, _)| strings)
}

/// Why a wait for an answer ended without one.
enum Waited {
    Stopped,
    Impatient,
}

/// Percent-encodes a query parameter.
pub fn encode(value: &str) -> String {
    percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC).to_string()
}

/// Unix milliseconds as the API takes a time: seconds with three decimals.
pub fn api_time(ms: i64) -> String {
    format!("{}.{:03}", ms.div_euclid(1000), ms.rem_euclid(1000))
}

/// An answer still to come: a request on its own thread.
type Pending = mpsc::Receiver<Result<crate::http::JsonAnswer, String>>;

/// A TSDB's API at a base URL, read with the scrapes' client (TLS, credentials, headers).
///
/// Each request runs on its own thread while the caller waits for it, at most until the
/// run stops (Ctrl-C, SIGTERM: a TSDB that never answers must not hold the run) or until
/// the caller's patience ([`Api::patient_until`]) runs out: a live run's rows come on
/// time while a TSDB is slow, its request left to finish. One request at most is left
/// so: the next waits for it first, so a silent TSDB never piles requests up.
pub struct Api {
    /// The base as given, credentials included, without a trailing `/`.
    base: String,
    /// The base as printed (a password as `***`).
    pub shown: String,
    client: Client,
    stop: Arc<AtomicBool>,
    /// Until when a request is waited for, what that moment is called and what follows.
    patience: Cell<Option<(Instant, &'static str, &'static str)>>,
    pending: RefCell<Option<Pending>>,
    /// Until when the TSDB asked not to be asked (a 429 or 503 with `Retry-After`).
    left_alone_until: Cell<Option<Instant>>,
}

/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(300);

/// How often a wait for an answer looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(50);

impl Api {
    /// The API at `base`, its requests given up as soon as `stop` is set.
    pub fn new(base: &str, client: Client, stop: Arc<AtomicBool>) -> Api {
        let base = base.trim_end_matches('/').to_string();
        Api {
            shown: Endpoint::new(&base).shown,
            base,
            client,
            stop,
            patience: Cell::new(None),
            pending: RefCell::new(None),
            left_alone_until: Cell::new(None),
        }
    }

    /// Requests from now on wait for their answer until `until` at most, the end of a
    /// live interval (`None`: until the client's own deadline).
    pub fn patient_until(&self, until: Option<Instant>) {
        self.patience
            .set(until.map(|until| (until, "within the interval", "; read again at the next")));
    }

    /// Requests from now on wait for their answer until the end of a live run of
    /// `--duration` at most: a start-up request the TSDB never answers ends the run when it
    /// was to end, not at the client's deadline.
    pub fn patient_until_the_run_ends(&self, until: Instant) {
        self.patience
            .set(Some((until, "before the run's --duration ended", "")));
    }

    fn get(&self, path: &str) -> Result<(u16, String), ApiError> {
        if let Some(until) = self.left_alone_until.get() {
            match until.checked_duration_since(Instant::now()) {
                Some(left) => {
                    return Err(ApiError::Transport(format!(
                        "the TSDB asked not to be asked for a while (Retry-After); asked again in {}",
                        humantime::format_duration(Duration::from_secs(left.as_secs() + 1))
                    )))
                }
                None => self.left_alone_until.set(None),
            }
        }
        // The request left waiting before: its answer (of a span read again since) first.
        if let Some(pending) = self.pending.take() {
            if let Err(Waited::Impatient) = self.wait(&pending) {
                self.pending.replace(Some(pending));
                return Err(ApiError::Transport(
                    "the TSDB has not answered the read before yet; read again at the next interval".into(),
                ));
            }
        }
        let endpoint = Endpoint::new(&format!("{}{path}", self.base));
        let (client, stop) = (self.client.clone(), Arc::clone(&self.stop));
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(client.get_json(&endpoint, &stop));
        });
        match self.wait(&rx) {
            Ok(answer) => {
                let answer = answer.map_err(ApiError::Transport)?;
                if let (429 | 503, Some(wait)) = (answer.status, answer.retry_after) {
                    // Honoured up to five minutes: a longer wait is the TSDB's mistake, and
                    // the run would show nothing meanwhile.
                    self.left_alone_until
                        .set(Some(Instant::now() + wait.min(MAX_RETRY_AFTER)));
                }
                Ok((answer.status, answer.body))
            }
            Err(Waited::Impatient) => {
                self.pending.replace(Some(rx));
                let waited = humantime::format_duration(self.client.timeout());
                let (within, then) = self.patience.get().map_or(("in time", ""), |p| (p.1, p.2));
                Err(ApiError::Transport(format!(
                    "no answer {within} (the TSDB may still answer within {waited}){then}"
                )))
            }
            Err(Waited::Stopped) => Err(ApiError::Transport("stopped".into())),
        }
    }

    /// The answer of `pending`, unless the run stops or the patience runs out first.
    fn wait(&self, pending: &Pending) -> Result<Result<crate::http::JsonAnswer, String>, Waited> {
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Err(Waited::Stopped);
            }
            let poll = match self.patience.get() {
                Some((until, ..)) => match until.checked_duration_since(Instant::now()) {
                    Some(left) => left.min(STOP_POLL),
                    None => return pending.try_recv().map_err(|_| Waited::Impatient),
                },
                None => STOP_POLL,
            };
            match pending.recv_timeout(poll) {
                Ok(answer) => return Ok(answer),
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
                // The thread ended without sending: it panicked.
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Ok(Err("the request failed without an answer".into()))
                }
            }
        }
    }

    /// The raw samples of `selector` over the `range_ms` before `at_ms`, with what the
    /// API said beside them.
    pub fn samples<T: FromSeries>(
        &self,
        selector: &str,
        range_ms: i64,
        at_ms: i64,
    ) -> Result<Answer<T>, ApiError> {
        let query = format!("{selector}[{}ms]", range_ms.max(1));
        let (status, body) = self.get(&format!(
            "/api/v1/query?query={}&time={}&nocache=1",
            encode(&query),
            api_time(at_ms)
        ))?;
        parse_answer(status, &body)
    }

    /// An instant query's series (`count by (instance) (...)`), at `at_ms`.
    pub fn instant(&self, query: &str, at_ms: i64) -> Result<Vec<Series>, ApiError> {
        let (status, body) = self.get(&format!(
            "/api/v1/query?query={}&time={}",
            encode(query),
            api_time(at_ms)
        ))?;
        parse_matrix(status, &body)
    }

    /// The values of `label` among the series of `matcher` (every series without) between
    /// `start_ms` and `end_ms`.
    pub fn label_values(
        &self,
        label: &str,
        matcher: Option<&str>,
        start_ms: i64,
        end_ms: i64,
    ) -> Result<Vec<String>, ApiError> {
        let matcher = matcher.map_or(String::new(), |m| format!("&match[]={}", encode(m)));
        let (status, body) = self.get(&format!(
            "/api/v1/label/{label}/values?start={}&end={}{matcher}",
            api_time(start_ms),
            api_time(end_ms)
        ))?;
        parse_strings(status, &body)
    }
}
