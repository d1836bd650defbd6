//! The simulated run: a benchmark client keeping about [`CONCURRENCY`] requests running
//! on a 16 s wave, one restart of the server, and the counters' values at any instant.

use std::f64::consts::PI;
use std::fmt::Write as _;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::engines::Engine;

pub(super) const MODEL: &str = "meta-llama/Llama-3.1-8B-Instruct";

// The run of the founding story: a benchmark client keeps about `CONCURRENCY` requests
// running; each decodes at `TOKENS_PER_S_PER_REQUEST` and ends after `TOKENS_PER_REQUEST`
// tokens, so a request takes `LATENCY_S` and, by Little's law, the steady finished-request
// rate is `CONCURRENCY / LATENCY_S`.
/// Requests running on average.
pub const CONCURRENCY: f64 = 200.0;
/// Decode speed of one request.
pub const TOKENS_PER_S_PER_REQUEST: f64 = 8.0;
/// Generated tokens per request.
pub const TOKENS_PER_REQUEST: f64 = 650.0;
/// Prompt tokens per request.
pub const PROMPT_TOKENS_PER_REQUEST: f64 = 1950.0;
/// End-to-end latency of every request.
pub const LATENCY_S: f64 = TOKENS_PER_REQUEST / TOKENS_PER_S_PER_REQUEST;
/// Mean time to first token, and the part of it spent queued: prefill takes the rest,
/// decode the latency after the first token.
pub const TTFT_S: f64 = 0.085;
pub const QUEUE_S: f64 = 0.004;
/// The simulated server's KV cache: 29,779 blocks of 16 tokens.
pub const KV_TOKENS: f64 = 29_779.0 * 16.0;
/// The running count swings by this fraction over a wave of `PERIOD_S` (by default), so
/// window rates, the EWMA and the sparklines visibly move.
pub const WAVE: f64 = 0.25;
/// Period of the wave.
pub const PERIOD_S: f64 = 16.0;
/// How long the server had been up when the simulation starts.
const UPTIME_BEFORE_S: f64 = 3600.0;
/// Requests queued when the restarted server comes up; it admits them at 4/s.
const BACKLOG_AFTER_RESTART: f64 = 40.0;

/// The simulation clock and its restart.
pub struct Simulation {
    pub(super) started: Instant,
    pub(crate) started_unix: f64,
    pub(super) restart_after_s: Option<f64>,
    /// How far the running count swings around `CONCURRENCY` (0: a steady run).
    pub(super) wave: f64,
}

/// Counter values and gauges at one instant of the simulated server.
pub(super) struct State {
    /// Generation tokens counted by the current process.
    pub(super) generated: f64,
    /// Requests finished by the current process.
    pub(super) finished: f64,
    pub(super) running: f64,
    pub(super) waiting: f64,
    pub(super) process_start_unix: f64,
    pub(super) created_unix: f64,
    pub(super) t: f64,
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

impl Simulation {
    /// A simulation starting now; the server restarts once `restart_after_s` seconds in.
    pub fn new(restart_after_s: Option<f64>) -> Self {
        Simulation {
            started: Instant::now(),
            started_unix: unix_now(),
            restart_after_s,
            wave: WAVE,
        }
    }

    /// The same run begun at `unix` seconds by the wall clock (its process start times
    /// follow): pages rendered for a recording on a clock of its own (tests start theirs
    /// at a fixed moment) tell start times on that clock, as a server's pages do on its.
    pub fn started_at(mut self, unix: f64) -> Self {
        self.started_unix = unix;
        self
    }

    /// The same run with the running count swinging by `wave` (a fraction) instead.
    pub fn with_wave(mut self, wave: f64) -> Self {
        self.wave = wave;
        self
    }

    /// Requests running `t` seconds into the simulation.
    pub fn running_at(&self, t: f64) -> f64 {
        CONCURRENCY * (1.0 + self.wave * (2.0 * PI * t / PERIOD_S).sin())
    }

    /// Tokens generated from 0 to `t` seconds into the simulation (negative `t` is before
    /// it): the integral of `TOKENS_PER_S_PER_REQUEST × running`.
    pub fn generated_until(&self, t: f64) -> f64 {
        let wave = self.wave * PERIOD_S / (2.0 * PI) * (1.0 - (2.0 * PI * t / PERIOD_S).cos());
        TOKENS_PER_S_PER_REQUEST * CONCURRENCY * (t + wave)
    }

    pub(super) fn state_at(&self, t: f64) -> State {
        // Before the restart the server had been up for an hour; after it, it counts from
        // 0 and its first requests finish only `LATENCY_S` later: it ramps up.
        let (since, process_start_unix) = match self.restart_after_s {
            Some(r) if t >= r => (r, self.started_unix + r),
            _ => (-UPTIME_BEFORE_S, self.started_unix - UPTIME_BEFORE_S),
        };
        let since_start = t - since;
        let generated = self.generated_until(t) - self.generated_until(since);
        let finished = ((self.generated_until(t - LATENCY_S) - self.generated_until(since))
            / TOKENS_PER_REQUEST)
            .max(0.0);
        State {
            generated,
            finished,
            running: self.running_at(t).round(),
            waiting: (BACKLOG_AFTER_RESTART - 4.0 * since_start).max(0.0).round(),
            process_start_unix,
            // Its counters exist from its start: it counts from there (a `_created` later
            // than the first tokens counted would make them count twice where the start
            // times are read, as Prometheus 3.14's `use-start-timestamps` reads them).
            created_unix: process_start_unix,
            t,
        }
    }
}

/// A short description of what the simulation does, for the monitor's header.
pub fn describe(engine: &Engine, restart_after_s: Option<f64>, wave: f64) -> String {
    let server = match engine.kind {
        "vllm" => "vLLM 0.33".to_string(),
        "dcgm" => {
            return "simulated DCGM exporter: 2 GPUs, 90 W idle each, +1000 W in all at 200 running requests"
                .into()
        }
        _ => engine.title.to_string(),
    };
    let mut text = format!(
        "simulated {server} server: {CONCURRENCY:.0} running requests of {TOKENS_PER_REQUEST:.0} tokens \
         at {TOKENS_PER_S_PER_REQUEST:.0} tok/s each (±{:.0}%, {PERIOD_S:.0} s wave)",
        wave * 100.0
    );
    if let Some(r) = restart_after_s {
        let _ = write!(text, ", restarts after {r:.0} s");
    }
    text
}
