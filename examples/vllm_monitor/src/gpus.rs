//! GPUs from NVIDIA's DCGM exporter, given as one more `--url`: how many and which, their
//! power, utilisation, memory and energy; with the inference figures, tokens per GPU,
//! joules per generated token and the cost of a million tokens.
//!
//! GPUs are told apart by `UUID`. Under MIG a GPU has only per-instance series, and its
//! power and energy (the whole GPU's) repeat on each instance: the figures take each GPU's
//! mean over its instances, so a GPU counts once. `DCGM_FI_DEV_GPU_UTIL` reads 0 on MIG
//! instances; there `DCGM_FI_PROF_GR_ENGINE_ACTIVE` (0-1) gives the utilisation. The
//! exporter samples every 30 s by default: energy moves in 30 s steps, so joules per token
//! want a window of a minute or more.

use std::collections::{BTreeMap, BTreeSet};

#[cfg(test)]
use chrono::TimeDelta;
use promrate::TrackedSeries;

use promrate::WindowRule;

use crate::source::{measured, selector, Source};

pub const POWER: &str = "DCGM_FI_DEV_POWER_USAGE";
/// Energy since boot, in mJ: a counter (reset at reboot or driver reload) without `_total`.
pub const ENERGY: &str = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION";
pub const UTIL: &str = "DCGM_FI_DEV_GPU_UTIL";
pub const ENGINE_ACTIVE: &str = "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
pub const MEMORY_USED: &str = "DCGM_FI_DEV_FB_USED";

/// The GPUs of every DCGM page, now and over the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Gpus {
    /// Distinct GPUs (by `UUID`).
    pub count: usize,
    /// Their `modelName`s, distinct.
    pub models: Vec<String>,
    /// Power drawn now, W.
    pub power_w: Option<f64>,
    /// Mean utilisation now, percent.
    pub utilisation_pct: Option<f64>,
    /// Framebuffer memory used now, MiB.
    pub memory_used_mib: Option<f64>,
    /// Energy used over the window, J: the reset-aware increase of the energy counters.
    pub energy_window_j: Option<f64>,
    /// The mean power over the window from the same counters (their increase over the time
    /// between the points compared, W): what joules per token divide.
    pub energy_rate_w: Option<f64>,
    /// Energy used since monitoring began, J.
    pub energy_since_start_j: Option<f64>,
}

impl Gpus {
    /// How many and which, as every output writes it: `2× NVIDIA H100 80GB HBM3`, `2× GPU`
    /// (no model named), `3 GPUs of 2 models`.
    pub fn what(&self) -> String {
        match self.models.as_slice() {
            [one] => format!("{}× {one}", self.count),
            [] => format!("{}× GPU", self.count),
            many => format!("{} GPUs of {} models", self.count, many.len()),
        }
    }
}

/// The host a group's GPUs are on: the host of `--by instance`'s `host:port` or of
/// `--by url`'s URL; `None` for any other label (GPUs join groups by host only).
pub fn host_of_group(by: &str, group: &str) -> Option<String> {
    let host = match by {
        "url" => url_host(group)?,
        "instance" => group.rsplit_once(':').map_or(group, |(host, _)| host),
        _ => return None,
    };
    Some(normal_host(host))
}

/// The host of a URL (`http://user:pw@gpu-a:8000/metrics` gives `gpu-a`).
fn url_host(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    Some(host_port.rsplit_once(':').map_or(host_port, |(host, _)| host))
}

/// Hosts compared as names: lower case, without the domain (a node name against a fully
/// qualified name); addresses as they are.
fn normal_host(host: &str) -> String {
    let host = host.trim_matches(['[', ']']).to_ascii_lowercase();
    let is_address = host.parse::<std::net::IpAddr>().is_ok();
    match host.split_once('.') {
        Some((name, _)) if !is_address => name.to_string(),
        _ => host,
    }
}

/// The host of a DCGM series: its `Hostname` label (`hostname` in dcgm-exporter's newer
/// code), else the host of its `instance` (through a federation), else of its URL.
fn series_host(series: &TrackedSeries, url: &str) -> Option<String> {
    let host = series
        .label("Hostname")
        .or_else(|| series.label("hostname"))
        .or_else(|| {
            series
                .label("instance")
                .map(|i| i.rsplit_once(':').map_or(i, |(h, _)| h))
        })
        .or_else(|| url_host(url))?;
    Some(normal_host(host))
}

/// One figure per GPU (`UUID`): the sum and count of its series (one, or one per MIG
/// instance, whose mean is the GPU's), and whether they are MIG instances.
type PerGpu = BTreeMap<String, (f64, usize, bool)>;

fn add_reading(gpus: &mut PerGpu, uuid: &str, value: Option<f64>, mig: bool) {
    if let Some(value) = value {
        let entry = gpus.entry(uuid.to_string()).or_insert((0.0, 0, false));
        entry.0 += value;
        entry.1 += 1;
        entry.2 |= mig;
    }
}

/// The mean of each GPU's series.
fn gpu_means(gpus: &PerGpu) -> impl Iterator<Item = (&String, f64, bool)> {
    gpus.iter()
        .map(|(uuid, (sum, n, mig))| (uuid, sum / *n as f64, *mig))
}

/// What one host's DCGM series read this interval, per GPU.
#[derive(Debug, Default)]
struct HostReadings {
    power_w: PerGpu,
    memory_mib: PerGpu,
    utilisation: PerGpu,
    engine_active: PerGpu,
    window_mj: PerGpu,
    rate_mw: PerGpu,
    since_start_mj: PerGpu,
    models: BTreeSet<String>,
}

/// The DCGM series of every source, read once per interval and filed by host (`None`:
/// a series whose host is not known, counted in the totals only), so that the totals and
/// each `--by instance`/`--by url` group are folds of what was read, not walks again.
#[derive(Debug, Default)]
pub struct Readings {
    hosts: BTreeMap<Option<String>, HostReadings>,
}

impl Readings {
    /// Reads each DCGM metric of `sources` once; energy over the window `w` as every window
    /// figure is (the same scrapes compared as the tokens it is divided by).
    pub fn read(sources: &[Source<'_>], w: WindowRule) -> Readings {
        let mut readings = Readings::default();
        for source in sources {
            readings.walk(source, POWER, |h, uuid, s, mig| {
                add_reading(&mut h.power_w, uuid, s.last_value(), mig);
                h.models.extend(s.label("modelName").map(str::to_string));
            });
            readings.walk(source, MEMORY_USED, |h, uuid, s, mig| {
                add_reading(&mut h.memory_mib, uuid, s.last_value(), mig)
            });
            readings.walk(source, UTIL, |h, uuid, s, mig| {
                add_reading(&mut h.utilisation, uuid, s.last_value(), mig)
            });
            readings.walk(source, ENGINE_ACTIVE, |h, uuid, s, mig| {
                add_reading(&mut h.engine_active, uuid, s.last_value(), mig)
            });
            readings.walk(source, ENERGY, |h, uuid, s, mig| {
                let Some(counter) = s.counter() else { return };
                let window = measured(&w, s, source);
                add_reading(&mut h.window_mj, uuid, window.map(|m| m.increase), mig);
                add_reading(&mut h.rate_mw, uuid, window.map(|m| m.rate()), mig);
                add_reading(&mut h.since_start_mj, uuid, Some(counter.total_increase()), mig);
            });
        }
        readings
    }

    /// Files each of `source`'s series of `name` (with a `UUID`) under its host.
    fn walk(
        &mut self,
        source: &Source<'_>,
        name: &str,
        mut file: impl FnMut(&mut HostReadings, &str, &TrackedSeries, bool),
    ) {
        for series in source.series(&selector(name, None)) {
            let Some(uuid) = series.label("UUID") else {
                continue;
            };
            let host = self.hosts.entry(series_host(series, source.url)).or_default();
            file(host, uuid, series, series.label("GPU_I_ID").is_some());
        }
    }

    /// The GPUs on `host` (every host when `None`), `None` when there are none.
    pub fn gpus(&self, host: Option<&str>) -> Option<Gpus> {
        let mut uuids = BTreeSet::new();
        let mut models = BTreeSet::new();
        let (mut power, mut memory, mut energy, mut since_start, mut energy_rate) =
            (None, None, None, None, None);
        let mut utilisation = Vec::new();
        let add = |sum: &mut Option<f64>, gpus: &PerGpu, scale: f64| {
            for (_, value, _) in gpu_means(gpus) {
                *sum = Some(sum.unwrap_or(0.0) + value * scale);
            }
        };
        let chosen = self
            .hosts
            .iter()
            .filter(|(h, _)| host.is_none() || h.as_deref() == host)
            .map(|(_, readings)| readings);
        for r in chosen {
            add(&mut power, &r.power_w, 1.0);
            add(&mut memory, &r.memory_mib, 1.0);
            add(&mut energy, &r.window_mj, 1e-3);
            add(&mut energy_rate, &r.rate_mw, 1e-3);
            add(&mut since_start, &r.since_start_mj, 1e-3);
            uuids.extend(r.power_w.keys().chain(r.window_mj.keys()));
            models.extend(r.models.iter());
            for (uuid, value, mig) in gpu_means(&r.utilisation) {
                match mig {
                    false => utilisation.push(value),
                    true => utilisation.extend(
                        r.engine_active
                            .get(uuid)
                            .map(|(sum, n, _)| sum / *n as f64 * 100.0),
                    ),
                }
            }
        }
        if uuids.is_empty() {
            return None;
        }
        Some(Gpus {
            count: uuids.len(),
            models: models.into_iter().cloned().collect(),
            power_w: power,
            utilisation_pct: (!utilisation.is_empty())
                .then(|| utilisation.iter().sum::<f64>() / utilisation.len() as f64),
            memory_used_mib: memory,
            energy_window_j: energy,
            energy_rate_w: energy_rate,
            energy_since_start_j: since_start,
        })
    }
}

/// The GPUs of `sources` (those that are DCGM pages) on `host` (every host when `None`),
/// `None` when there are none: [`Readings::read`] then [`Readings::gpus`].
#[cfg(test)]
fn measure(sources: &[Source<'_>], window: TimeDelta, host: Option<&str>) -> Option<Gpus> {
    let w = WindowRule::new(window)
        .slack(TimeDelta::seconds(1))
        .gap(TimeDelta::seconds(3));
    Readings::read(sources, w).gpus(host)
}

/// One line about the GPUs for plain output and the dashboard: `2× NVIDIA H100 80GB HBM3 ·
/// 1201 W · 96% · 800 tok/s/GPU · 0.75 J/tok · 2.47/Mtok` (what is known of it).
pub fn line(gpus: Option<&Gpus>, per_token: &PerToken) -> Option<String> {
    let mut parts = Vec::new();
    match gpus {
        Some(g) => {
            parts.push(g.what());
            parts.extend(g.power_w.map(|w| format!("{w:.0} W")));
            parts.extend(g.utilisation_pct.map(|u| format!("util {u:.0}%")));
        }
        None => parts.extend(per_token.gpus.map(|n| format!("{n} GPU(s)"))),
    }
    parts.extend(
        per_token
            .tokens_per_s_per_gpu
            .map(|r| format!("{r:.1} tok/s/GPU")),
    );
    parts.extend(per_token.joules_per_token.map(|j| format!("{j:.3} J/tok")));
    parts.extend(per_token.cost_per_million_tokens.map(|c| format!("{c:.2}/Mtok")));
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// What the user said about the GPUs: how many (without DCGM), and what an hour of one costs.
#[derive(Debug, Clone, Copy, Default)]
pub struct GpuSettings {
    pub gpus: Option<u32>,
    pub gpu_hour_price: Option<f64>,
}

/// The figures that join GPUs and tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PerToken {
    /// GPUs the figures divide by: DCGM's count, else `--gpus`.
    pub gpus: Option<usize>,
    /// Generation tokens/s per GPU.
    pub tokens_per_s_per_gpu: Option<f64>,
    /// Joules per generated token: the energy counters' increase over the window ÷ the
    /// tokens', each taken over the time between its own points (a GPU exporter and a server
    /// are scraped at different instants), so (J/s) ÷ (tokens/s); never sampled power.
    pub joules_per_token: Option<f64>,
    /// `price × GPUs / 3600 / (tokens/s) × 10^6`: dollars (or whatever `--gpu-hour-price`
    /// is in) per million generated tokens.
    pub cost_per_million_tokens: Option<f64>,
    /// The price of a GPU hour, for the run's cost in the summary.
    pub gpu_hour_price: Option<f64>,
}

impl PerToken {
    /// A row's per-token figures: the totals' always (`--gpus` counts the whole run's
    /// GPUs), a group's only with its host's DCGM GPUs.
    pub fn of_row(
        settings: &GpuSettings,
        gpus: Option<&Gpus>,
        tokens_per_s: Option<f64>,
        total: bool,
    ) -> Self {
        if total || gpus.is_some() {
            PerToken::new(settings, gpus, tokens_per_s)
        } else {
            PerToken::default()
        }
    }

    /// From the window's generation rate and token count and the GPUs seen.
    pub fn new(settings: &GpuSettings, gpus: Option<&Gpus>, tokens_per_s: Option<f64>) -> Self {
        let count = gpus
            .map(|g| g.count)
            .filter(|n| *n > 0)
            .or(settings.gpus.map(|n| n as usize));
        let rate = tokens_per_s.filter(|r| *r > 0.0);
        let tokens_per_s_per_gpu = count.zip(rate).map(|(n, r)| r / n as f64);
        let joules_per_token = gpus.and_then(|g| g.energy_rate_w).zip(rate).map(|(w, r)| w / r);
        let cost_per_million_tokens = settings
            .gpu_hour_price
            .zip(count)
            .zip(rate)
            .map(|((price, n), r)| price * n as f64 / 3600.0 / r * 1e6);
        PerToken {
            gpus: count,
            tokens_per_s_per_gpu,
            joules_per_token,
            cost_per_million_tokens,
            gpu_hour_price: settings.gpu_hour_price,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, TimeDelta};
    use promrate::Tracker;

    use super::*;

    /// A group with its host's GPUs gets tokens per GPU, joules per token and the cost; a
    /// group without them gets none, even with `--gpus` (which counts the whole run's);
    /// the totals get them with `--gpus` alone.
    #[test]
    fn groups_with_gpus_get_per_token_figures() {
        let two = Gpus {
            count: 2,
            energy_rate_w: Some(700.0),
            ..Gpus::default()
        };
        let settings = GpuSettings {
            gpus: Some(8),
            gpu_hour_price: Some(3.6),
        };
        let with = PerToken::of_row(&settings, Some(&two), Some(1000.0), false);
        assert_eq!(with.tokens_per_s_per_gpu, Some(500.0));
        assert_eq!(with.joules_per_token, Some(0.7));
        assert_eq!(with.cost_per_million_tokens, Some(2.0));
        assert_eq!(
            PerToken::of_row(&settings, None, Some(1000.0), false),
            PerToken::default()
        );
        let total = PerToken::of_row(&settings, None, Some(1000.0), true);
        assert_eq!(total.tokens_per_s_per_gpu, Some(125.0));
    }

    fn gpus_of(file: &str) -> Gpus {
        let path = format!("{}/../../tests/data/engines/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let at = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
        let mut tracker = Tracker::new([]);
        tracker.ingest(&text, at).unwrap();
        let source = Source {
            tracker: &tracker,
            at,
            url: file,
            retired: None,
        };
        measure(&[source], TimeDelta::seconds(60), None).expect("GPUs")
    }

    /// `--by instance` and `--by url` groups take the GPUs of their host: dcgm-exporter's
    /// `Hostname` (or `hostname`), compared without domain and case.
    #[test]
    fn gpus_join_groups_by_host() {
        assert_eq!(
            host_of_group("instance", "GPU-Node-07.example.com:8000").as_deref(),
            Some("gpu-node-07")
        );
        assert_eq!(
            host_of_group("url", "http://u:p@gpu-node-12:8000/metrics").as_deref(),
            Some("gpu-node-12")
        );
        assert_eq!(
            host_of_group("instance", "10.0.0.7:8000").as_deref(),
            Some("10.0.0.7")
        );
        assert_eq!(host_of_group("model_name", "llama"), None);
        let at = DateTime::from_timestamp(1_764_000_000, 0).unwrap();
        let trackers: Vec<(Tracker, &str)> = ["dcgm.prom", "dcgm-mig.prom"]
            .into_iter()
            .map(|file| {
                let path = format!("{}/../../tests/data/engines/{file}", env!("CARGO_MANIFEST_DIR"));
                let mut tracker = Tracker::new([]);
                tracker
                    .ingest(&std::fs::read_to_string(path).unwrap(), at)
                    .unwrap();
                (tracker, file)
            })
            .collect();
        let sources: Vec<Source<'_>> = trackers
            .iter()
            .map(|(tracker, url)| Source {
                tracker,
                at,
                url,
                retired: None,
            })
            .collect();
        let window = TimeDelta::seconds(60);
        assert_eq!(measure(&sources, window, None).unwrap().count, 4);
        let node_07 = measure(&sources, window, Some("gpu-node-07")).unwrap();
        assert!((node_07.power_w.unwrap() - (612.345 + 588.901)).abs() < 1e-9);
        assert_eq!(measure(&sources, window, Some("gpu-node-12")).unwrap().count, 2);
        assert_eq!(measure(&sources, window, Some("gpu-node-99")), None);
    }

    /// Without a DCGM exporter, `--gpus N` gives tokens per GPU and the cost; joules per
    /// token need the energy counters, so there is none.
    #[test]
    fn gpus_given_without_dcgm() {
        let settings = GpuSettings {
            gpus: Some(4),
            gpu_hour_price: Some(3.0),
        };
        let t = PerToken::new(&settings, None, Some(1600.0));
        assert_eq!(t.gpus, Some(4));
        assert_eq!(t.tokens_per_s_per_gpu, Some(400.0));
        assert_eq!(t.joules_per_token, None);
        let cost = t.cost_per_million_tokens.unwrap();
        assert!((cost - 3.0 * 4.0 / 3600.0 / 1600.0 * 1e6).abs() < 1e-12, "{cost}");
        // No rate, no per-token figure; and DCGM's count wins over --gpus.
        assert_eq!(
            PerToken::new(&settings, None, Some(0.0)).tokens_per_s_per_gpu,
            None
        );
        let seen = Gpus {
            count: 2,
            energy_rate_w: Some(1180.0),
            ..Gpus::default()
        };
        let t = PerToken::new(&settings, Some(&seen), Some(1600.0));
        assert_eq!(
            (t.gpus, t.tokens_per_s_per_gpu, t.joules_per_token),
            (Some(2), Some(800.0), Some(0.7375))
        );
    }

    /// Two H100s on one host (dcgm-exporter's release label spelling `Hostname`).
    #[test]
    fn two_gpus_are_counted_and_summed() {
        let g = gpus_of("dcgm.prom");
        assert_eq!(
            (g.count, g.models.as_slice()),
            (2, &["NVIDIA H100 80GB HBM3".to_string()][..])
        );
        assert!((g.power_w.unwrap() - (612.345 + 588.901)).abs() < 1e-9);
        assert_eq!(g.utilisation_pct, Some((97.0 + 95.0) / 2.0));
        // One page: no increase yet, so no energy over the window.
        assert_eq!(g.energy_window_j, None);
    }

    /// A GPU in MIG mode (two instances) beside a whole GPU: the MIG GPU counts once, its
    /// repeated power is taken once (the instances' mean), and its utilisation comes from
    /// the graphics engine's activity, as its GPU_UTIL reads 0.
    #[test]
    fn a_mig_gpu_counts_once() {
        let g = gpus_of("dcgm-mig.prom");
        assert_eq!(g.count, 2);
        let power = (402.113 + 402.387) / 2.0 + 571.226;
        assert!((g.power_w.unwrap() - power).abs() < 1e-9, "{:?}", g.power_w);
        // GPU 1's GPU_UTIL (94) and GPU 0's instances' engine activity (0.884512, 0.701377).
        let util = (94.0 + (88.4512 + 70.1377) / 2.0) / 2.0;
        assert!(
            (g.utilisation_pct.unwrap() - util).abs() < 1e-6,
            "{:?}",
            g.utilisation_pct
        );
    }
}
