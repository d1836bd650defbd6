//! `--plot FILE.svg`: generation tokens/s over the run, with restarts marked on the time
//! axis and, with `--by`, a line per group.

use plotters::prelude::*;

use crate::interval::History;

fn series(elapsed: &[f64], values: &[Option<f64>]) -> Vec<(f64, f64)> {
    elapsed
        .iter()
        .zip(values)
        .filter_map(|(t, v)| Some((*t, (*v)?)))
        .collect()
}

pub fn write(path: &str, h: &History) -> Result<(), String> {
    let e = |e: DrawingAreaErrorKind<_>| e.to_string();
    let max_t = h.elapsed.iter().copied().fold(1.0, f64::max);
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
        .build_cartesian_2d(0.0..max_t, 0.0..max_y)
        .map_err(e)?;
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("tokens/s")
        .draw()
        .map_err(e)?;
    for (i, &t) in h.restarts.iter().enumerate() {
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
            series(&h.elapsed, &h.generation),
        ),
        ("total, EWMA".to_string(), series(&h.elapsed, &h.ewma)),
    ];
    for (name, values) in &h.groups {
        lines.push((name.clone(), series(&h.elapsed, values)));
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
