//! A vLLM 0.33 page whose every count is set by hand, so that each figure the monitor
//! derives from it is known exactly: latency histograms with chosen bucket counts (970 of
//! 1,000 requests within 0.5 s), time per phase, the KV cache, preemptions, rejections,
//! aborts, waiting by reason, the sleep state and prompt tokens by source. The tests feed
//! its pages to the monitor, as a tracker's scrapes or as a recording to replay.

/// What one engine has counted by the time of a page (cumulative, as a server counts).
#[derive(Clone, Copy, Default)]
pub struct Counts {
    /// Requests with a TTFT at or under 0.25, 0.5 and 1 s, and all of them.
    pub ttft: [f64; 4],
    /// Inter-token gaps at or under 0.025, 0.05 and 0.1 s, and all of them.
    pub itl: [f64; 4],
    /// Requests ending within 10, 30 and 60 s, and all of them.
    pub e2e: [f64; 4],
    /// Seconds spent in the queue, prefill, decode and inference by all the requests.
    pub phase_sums: [f64; 4],
    pub preemptions: f64,
    pub rejections: f64,
    pub aborts: f64,
    /// Prompt tokens computed, hit in the local cache, transferred.
    pub prompt: [f64; 3],
    pub kv_usage: f64,
    /// Waiting for capacity, deferred.
    pub waiting: [f64; 2],
    /// The engine is awake (else its weights are offloaded).
    pub awake: bool,
}

/// A family of one series per engine: name, type, value.
type Simple = (&'static str, &'static str, fn(&Counts) -> f64);

/// A vLLM 0.33 page of engines `counts` (engine "0", "1", ...), each with a KV cache of
/// 4,096 blocks of 16 tokens given as `num_gpu_blocks` × `block_size` (as V0 says it) for
/// engine 0 and as `kv_cache_size_tokens` for the others (as 0.32 and 0.33 do).
pub fn page(counts: &[Counts]) -> String {
    let mut p = String::new();
    let mut family = |name: &str, kind: &str, lines: &mut dyn FnMut(&mut String, usize, &Counts)| {
        p += &format!("# TYPE {name} {kind}\n");
        for (e, c) in counts.iter().enumerate() {
            lines(&mut p, e, c);
        }
    };
    let model = "model_name=\"m\"";
    let histogram = |p: &mut String, name: &str, e: usize, bounds: &[&str], counts: &[f64; 4], sum: f64| {
        for (le, n) in bounds.iter().chain(&["+Inf"]).zip(counts) {
            *p += &format!("{name}_bucket{{engine=\"{e}\",le=\"{le}\",{model}}} {n}\n");
        }
        *p += &format!("{name}_count{{engine=\"{e}\",{model}}} {}\n", counts[3]);
        *p += &format!("{name}_sum{{engine=\"{e}\",{model}}} {sum}\n");
    };
    family("vllm:time_to_first_token_seconds", "histogram", &mut |p, e, c| {
        histogram(
            p,
            "vllm:time_to_first_token_seconds",
            e,
            &["0.25", "0.50", "1.0"],
            &c.ttft,
            0.3 * c.ttft[3],
        )
    });
    family("vllm:inter_token_latency_seconds", "histogram", &mut |p, e, c| {
        histogram(
            p,
            "vllm:inter_token_latency_seconds",
            e,
            &["0.025", "0.05", "0.1"],
            &c.itl,
            0.04 * c.itl[3],
        )
    });
    family("vllm:e2e_request_latency_seconds", "histogram", &mut |p, e, c| {
        histogram(
            p,
            "vllm:e2e_request_latency_seconds",
            e,
            &["10", "30", "60"],
            &c.e2e,
            20.0 * c.e2e[3],
        )
    });
    for (i, phase) in ["queue", "prefill", "decode", "inference"]
        .into_iter()
        .enumerate()
    {
        let name = format!("vllm:request_{phase}_time_seconds");
        family(&name, "histogram", &mut |p, e, c| {
            histogram(p, &name, e, &["1", "10", "100"], &[c.e2e[3]; 4], c.phase_sums[i])
        });
    }
    // One series per engine, its value from the counts.
    let simple: [Simple; 5] = [
        ("vllm:num_preemptions_total", "counter", |c| c.preemptions),
        ("vllm:generation_tokens_total", "counter", |c| c.itl[3]),
        ("vllm:kv_cache_usage_perc", "gauge", |c| c.kv_usage),
        ("vllm:num_requests_running", "gauge", |_| 10.0),
        ("vllm:num_requests_waiting", "gauge", |c| {
            c.waiting[0] + c.waiting[1]
        }),
    ];
    for (name, kind, value) in simple {
        family(name, kind, &mut |p, e, c| {
            *p += &format!("{name}{{engine=\"{e}\",{model}}} {}\n", value(c));
        });
    }
    family("vllm:request_success_total", "counter", &mut |p, e, c| {
        for (reason, n) in [("stop", c.e2e[3] - c.aborts), ("abort", c.aborts)] {
            *p += &format!(
                "vllm:request_success_total{{engine=\"{e}\",finished_reason=\"{reason}\",{model}}} {n}\n"
            );
        }
    });
    family("vllm:prompt_tokens_by_source_total", "counter", &mut |p, e, c| {
        for (source, n) in ["local_compute", "local_cache_hit", "external_kv_transfer"]
            .iter()
            .zip(c.prompt)
        {
            *p += &format!(
                "vllm:prompt_tokens_by_source_total{{engine=\"{e}\",{model},source=\"{source}\"}} {n}\n"
            );
        }
    });
    family("vllm:num_requests_waiting_by_reason", "gauge", &mut |p, e, c| {
        for (reason, n) in ["capacity", "deferred"].iter().zip(c.waiting) {
            *p += &format!(
                "vllm:num_requests_waiting_by_reason{{engine=\"{e}\",{model},reason=\"{reason}\"}} {n}\n"
            );
        }
    });
    family("vllm:engine_sleep_state", "gauge", &mut |p, e, c| {
        for (state, on) in [
            ("awake", c.awake),
            ("weights_offloaded", !c.awake),
            ("discard_all", false),
        ] {
            let v = u8::from(on);
            *p += &format!("vllm:engine_sleep_state{{engine=\"{e}\",{model},sleep_state=\"{state}\"}} {v}\n");
        }
    });
    family("vllm:cache_config_info", "gauge", &mut |p, e, _| {
        let size = if e == 0 {
            "block_size=\"16\",num_gpu_blocks=\"4096\"".to_string()
        } else {
            "block_size=\"16\",kv_cache_size_tokens=\"65536\",num_gpu_blocks=\"4096\"".to_string()
        };
        *p += &format!("vllm:cache_config_info{{{size},engine=\"{e}\"}} 1\n");
    });
    // Admission rejections have no engine label: the server's, once.
    let rejections: f64 = counts.iter().map(|c| c.rejections).sum();
    p += "# TYPE vllm:admission_rejections_total counter\n";
    p += &format!("vllm:admission_rejections_total{{{model},reason=\"max_num_queued_reqs\"}} {rejections}\n");
    p
}

/// Engine counts at 0, 10 and 20 s: 500 requests in the first 10 s (all fast), 1,000 in
/// the next: 800 with a TTFT at or under 0.25 s, 970 under 0.5 s, 995 under 1 s.
pub fn run_of_one_engine() -> [Counts; 3] {
    let zero = Counts {
        awake: true,
        ..Counts::default()
    };
    let first = Counts {
        ttft: [500.0, 500.0, 500.0, 500.0],
        itl: [40_000.0, 50_000.0, 50_000.0, 50_000.0],
        e2e: [500.0, 500.0, 500.0, 500.0],
        phase_sums: [50.0, 100.0, 2_000.0, 2_100.0],
        preemptions: 2.0,
        rejections: 0.0,
        aborts: 1.0,
        prompt: [5_000.0, 5_000.0, 0.0],
        kv_usage: 0.5,
        waiting: [4.0, 0.0],
        awake: true,
    };
    let second = Counts {
        ttft: [1_300.0, 1_470.0, 1_495.0, 1_500.0],
        itl: [130_000.0, 145_000.0, 149_000.0, 150_000.0],
        e2e: [1_200.0, 1_490.0, 1_500.0, 1_500.0],
        phase_sums: [
            50.0 + 1_000.0 * 0.25,
            100.0 + 1_000.0 * 0.5,
            2_000.0 + 1_000.0 * 12.0,
            2_100.0 + 1_000.0 * 12.5,
        ],
        preemptions: 22.0,
        rejections: 5.0,
        aborts: 4.0,
        prompt: [11_000.0, 8_000.0, 1_000.0],
        kv_usage: 0.25,
        waiting: [7.0, 2.0],
        awake: true,
    };
    [zero, first, second]
}
