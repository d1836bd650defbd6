//! What a live run monitors, and how it was chosen: the URLs given, else the servers found
//! on this machine, else the built-in simulator.

use std::sync::Arc;
use std::time::Duration;

use crate::args::Args;
use crate::discover;
use crate::engines::DCGM;
use crate::figures::ServerKind;
use crate::http::{Access, Trust};
use crate::simulator;

/// What to monitor, and how it was chosen.
pub struct Plan {
    pub urls: Vec<String>,
    /// Appended to the setup line: " · built-in simulator" and the like.
    pub setup: String,
    pub notes: Vec<String>,
    /// The run's length when the user gave none (the simulator's demo: 20 s).
    pub default_duration: Option<Duration>,
    /// The window when the user gave none, if not the usual 30 s: the demo's is 10 s, so
    /// that its figures cover their whole window for half of its 20 s.
    pub default_window: Option<Duration>,
}

/// The URLs given, else the servers found on this machine, else the simulator.
pub fn plan(args: &Args, access: &Access) -> Result<Plan, String> {
    let (urls, notes) = args.urls();
    if !urls.is_empty() {
        return Ok(Plan {
            urls,
            setup: String::new(),
            notes,
            default_duration: None,
            default_window: None,
        });
    }
    let ports = &args.discover_ports.0;
    let why = if args.simulate.is_some() {
        "--simulate given".to_string()
    } else {
        let mut found = discover::find(ports, access);
        // A GPU exporter alone is not a server to monitor.
        if found.iter().all(|f| f.kind == ServerKind(&DCGM)) {
            found.clear();
        }
        if !found.is_empty() {
            let names: Vec<String> = found
                .iter()
                .map(|f| format!("{} ({})", f.url, f.kind.as_str()))
                .collect();
            return Ok(Plan {
                urls: found.into_iter().map(|f| f.url).collect(),
                setup: " · found on this machine".into(),
                notes: vec![format!("no --url given: found {}", names.join(", "))],
                default_duration: None,
                default_window: None,
            });
        }
        // Short: with the whole default port list, the line stays within 120 columns.
        format!(
            "no --url, and no server on 127.0.0.1 port(s) {}",
            discover::describe(ports)
        )
    };
    // Late enough that the demo's 10 s window is full before it (figures unmarked by `*`),
    // early enough that its last rows show what a restart does.
    let restart_after = args.simulate_restart_after.map_or(15.0, |d| d.as_secs_f64());
    let simulation = Arc::new(simulator::Simulation::new(Some(restart_after)).with_wave(args.simulate_wave));
    let engine = args.simulate.unwrap_or(crate::engines::ENGINES[0]);
    let bound = simulator::serve(
        "127.0.0.1:0",
        Arc::clone(&simulation),
        engine,
        simulator::ServeAs::Text,
    )
    .map_err(|e| format!("cannot start the simulated server: {e}"))?;
    // Two lines: each within plain mode's 120 columns.
    let mut notes = vec![
        format!("{why}: monitoring the built-in simulator"),
        simulator::describe(engine, Some(restart_after), args.simulate_wave),
    ];
    let mut urls = vec![format!("http://{bound}/metrics")];
    if args.simulate_gpus {
        let dcgm = &crate::engines::DCGM;
        let gpus = simulator::serve("127.0.0.1:0", simulation, dcgm, simulator::ServeAs::Text)
            .map_err(|e| format!("cannot start the simulated DCGM exporter: {e}"))?;
        urls.push(format!("http://{gpus}/metrics"));
        notes.push(simulator::describe(dcgm, None, args.simulate_wave));
    }
    // The demo ends by itself: the setup line (the dashboard's title) says when.
    let setup = match args.duration {
        None => " · built-in simulator for 20s",
        Some(_) => " · built-in simulator",
    };
    Ok(Plan {
        urls,
        setup: setup.into(),
        notes,
        default_duration: Some(Duration::from_secs(20)),
        default_window: Some(Duration::from_secs(10)),
    })
}

/// What every output must say about how the servers are reached.
pub fn warnings(access: &Access) -> Vec<String> {
    match access.trust {
        Trust::Nobody => vec!["TLS certificates are not checked (--insecure)".to_string()],
        _ => Vec::new(),
    }
}
