//! `--plot FILE.svg`: generation tokens/s over the run, with restarts marked on the time
//! axis and, with `--by`, a line per group.

use chrono::{DateTime, Utc};
use plotters::prelude::*;

use crate::snapshot::History;

/// The points of `values` at `elapsed` seconds, time in the axis' unit.
fn series(elapsed: &[f64], values: &[Option<f64>], axis: TimeAxis) -> Vec<(f64, f64)> {
    elapsed
        .iter()
        .zip(values)
        .filter_map(|(t, v)| Some((*t / axis.unit_s(), (*v)?)))
        .collect()
}

/// The time axis' unit for a run of `span_s` seconds: seconds for a short run, `m:ss` up
/// to an hour, `h:mm` beyond (a multi-hour run in seconds reads as 25,000 s).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeAxis {
    Seconds,
    MinutesSeconds,
    HoursMinutes,
}

impl TimeAxis {
    fn for_span(span_s: f64) -> TimeAxis {
        if span_s <= 600.0 {
            TimeAxis::Seconds
        } else if span_s <= 3600.0 {
            TimeAxis::MinutesSeconds
        } else {
            TimeAxis::HoursMinutes
        }
    }

    /// The axis' title, from the run's start (a replay's `--from`, so that a point's
    /// clock time is read off the chart).
    fn description(self, started: DateTime<Utc>) -> String {
        let start = started.format("%Y-%m-%d %H:%M:%S UTC");
        match self {
            TimeAxis::Seconds => format!("seconds since {start}"),
            TimeAxis::MinutesSeconds => format!("time since {start} (m:ss)"),
            TimeAxis::HoursMinutes => format!("time since {start} (h:mm)"),
        }
    }

    /// Seconds per unit of the chart's x coordinate: ticks fall on whole minutes or hours.
    fn unit_s(self) -> f64 {
        match self {
            TimeAxis::Seconds => 1.0,
            TimeAxis::MinutesSeconds => 60.0,
            TimeAxis::HoursMinutes => 3600.0,
        }
    }

    /// A tick's label, `x` in the axis' unit.
    fn label(self, x: f64) -> String {
        let whole = (x * self.unit_s()).max(0.0).round() as u64;
        match self {
            TimeAxis::Seconds => format!("{whole}"),
            TimeAxis::MinutesSeconds => format!("{}:{:02}", whole / 60, whole % 60),
            TimeAxis::HoursMinutes => format!("{}:{:02}", whole / 3600, whole % 3600 / 60),
        }
    }
}

/// Writes the run's plot to `path`: `h` from the run's start, `started`.
pub fn write(path: &str, h: &History, started: DateTime<Utc>) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let max_t = h.elapsed.iter().copied().fold(1.0, f64::max);
    let axis = TimeAxis::for_span(max_t);
    let max_y = h
        .generation
        .iter()
        .chain(&h.ewma)
        .chain(h.groups.iter().flat_map(|(_, v)| v))
        .flatten()
        .copied()
        .fold(1.0, f64::max)
        * 1.1;
    let root = SVGBackend::new(path, (960, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(e)?;
    let mut chart = ChartBuilder::on(&root)
        .margin(20)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .caption("generation tokens/s", ("sans-serif", 20))
        .build_cartesian_2d(0.0..max_t / axis.unit_s(), 0.0..max_y)
        .map_err(e)?;
    let x_label = |t: &f64| axis.label(*t);
    chart
        .configure_mesh()
        .x_desc(axis.description(started))
        .x_label_formatter(&x_label)
        .y_desc("tokens/s")
        .draw()
        .map_err(e)?;
    for (i, t) in h.restarts.iter().map(|t| t / axis.unit_s()).enumerate() {
        let marker = chart
            .draw_series(LineSeries::new(
                [(t, 0.0), (t, max_y)],
                BLACK.mix(0.5).stroke_width(2),
            ))
            .map_err(e)?;
        if i == 0 {
            marker
                .label("restart")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 20, y)], BLACK.mix(0.5)));
        }
    }
    let mut lines = vec![
        (
            "total, window rate".to_string(),
            series(&h.elapsed, &h.generation, axis),
        ),
        ("total, EWMA".to_string(), series(&h.elapsed, &h.ewma, axis)),
    ];
    for (name, values) in &h.groups {
        lines.push((name.clone(), series(&h.elapsed, values, axis)));
    }
    for (i, (label, points)) in lines.into_iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        chart
            .draw_series(LineSeries::new(points, color.stroke_width(2)))
            .map_err(e)?
            .label(label)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], color));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(e)?;
    root.present().map_err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multi_hour_run_is_labelled_in_hours_and_minutes() {
        assert_eq!(TimeAxis::for_span(30.0).label(12.4), "12");
        assert_eq!(TimeAxis::for_span(1800.0).label(754.0 / 60.0), "12:34");
        let hours = TimeAxis::for_span(25_000.0);
        assert_eq!(
            (hours.label(2.0), hours.label(25_000.0 / 3600.0)),
            ("2:00".into(), "6:56".into())
        );

        let mut h = History::default();
        for i in 0..=700 {
            h.elapsed.push(f64::from(i) * 36.0);
            h.generation.push(Some(1500.0));
            h.ewma.push(Some(1500.0));
        }
        h.restarts.push(9000.0);
        let path = std::env::temp_dir().join(format!("vllm-monitor-plot-{}.svg", std::process::id()));
        let started = DateTime::from_timestamp(1_796_335_200, 0).unwrap();
        write(path.to_str().unwrap(), &h, started).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        // plotters writes each label's text on a line of its own.
        let texts: Vec<&str> = svg.lines().map(str::trim).collect();
        assert!(
            texts.contains(&"2:00") && texts.contains(&"time since 2026-12-03 22:00:00 UTC (h:mm)"),
            "{svg}"
        );
        assert!(
            !texts
                .iter()
                .any(|t| t.starts_with("20000") || t.starts_with("25000")),
            "{svg}"
        );
    }
}
