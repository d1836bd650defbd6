//! One `/federate` page of N simulated vLLM servers as it stands at a given time, on
//! standard output: what `vllm_monitor --serve --fleet N` serves live, for any time. A TSDB
//! can be filled with a past span from it (VictoriaMetrics' `/api/v1/import/prometheus`
//! keeps each sample's timestamp), so that `--prometheus --from --to` is measured over an
//! hour of 10,000 servers without scraping for that hour (`benches/monitor_tsdb.sh` with
//! `BACKFILL=1`).
//!
//! Run from the repository's root:
//! `cargo run --release -p vllm-monitor --example fleet_page -- SERVERS START_MS AT_MS`
//! writes the page at `AT_MS` (milliseconds since the epoch) of a fleet whose counters
//! held their template values at `START_MS`; with `rate` for `AT_MS`, the fleet's exact
//! generation tokens/s instead.

use std::io::Write;

use vllm_monitor::fleet;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: fleet_page SERVERS START_MS (AT_MS | rate)";
    let servers: usize = args.next().ok_or(usage)?.parse()?;
    let start_ms: i64 = args.next().ok_or(usage)?.parse()?;
    let at = args.next().ok_or(usage)?;
    let template = std::fs::read_to_string(format!("tests/data/{}", fleet::TEMPLATE))?;
    let fleet = fleet::Fleet::new(&template, servers, start_ms);
    let mut out = std::io::stdout().lock();
    if at == "rate" {
        writeln!(out, "{}", fleet.total_rate("vllm:generation_tokens_total"))?;
        return Ok(());
    }
    let at_ms: i64 = at.parse()?;
    if at_ms < start_ms {
        // Counters before the fleet's start would be below their template values, and
        // could go negative.
        return Err(format!("AT_MS {at_ms} is before START_MS {start_ms}").into());
    }
    out.write_all(fleet.page(at_ms).as_bytes())?;
    Ok(())
}
