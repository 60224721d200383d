//! Enclosure width against the Taylor order and the number of sub-steps (run with
//! `--nocapture` to see the table). The figure is the overestimation: the largest, over the
//! state coordinates, of the enclosure's width minus the width of the reference images of the
//! box's corners (those images lie inside the true image, so this bounds the excess from
//! above). Every enclosure of the table holds those images, and the table's shape is checked:
//! low orders are wider (truncation), the automatic choice is close to the best.

mod common;

use common::*;
use rug::Float;
use std::time::Instant;
use trestle_flow::{Flow, FlowSettings};
use trestle_ir::Interval;
use trestle_ir::num::parse_rational;

/// The rows (order, sub-steps, overestimation) of the table; the automatic choice last as
/// (0, 0, ...). Also asserts that every state coordinate of the automatic enclosure is within 2%
/// of the narrowest of the table.
fn table(what: &str, f: &Flow, b: &[Interval], period: &str) -> Vec<(usize, usize, f64)> {
    let n = f.tape().state_dim();
    let period = parse_rational(period).unwrap();
    let corners = sample_points(&mut rng(0), b, 0);
    let images: Vec<Vec<Float>> = corners
        .iter()
        .map(|y| f.simulate_big(&exact(&y[..n]), &exact(&y[n..]), &[], &period, PREC, 30).unwrap())
        .collect();
    let mut rows = Vec::new();
    let mut narrowest = vec![f64::INFINITY; n];
    eprintln!("{what}: overestimation (and time per enclosure) by order and sub-steps");
    eprintln!("{:>6} {:>24} {:>24} {:>24} {:>24}", "order", "1 sub-step", "2", "4", "16");
    for order in [2usize, 3, 4, 6, 8, 12, 16] {
        let mut line = format!("{order:>6}");
        for substeps in [1usize, 2, 4, 16] {
            let settings = FlowSettings { order: Some(order), substeps: Some(substeps), ..FlowSettings::default() };
            let start = Instant::now();
            let e = f.enclose(&b[..n], &b[n..], &[], &period, &settings).unwrap();
            let micros = start.elapsed().as_secs_f64() * 1e6;
            for (y, r) in corners.iter().zip(&images) {
                assert_enclosed(what, &e, &y[..n], &y[n..], r);
            }
            for (w, v) in narrowest.iter_mut().zip(&e.state) {
                *w = w.min(v.width());
            }
            let width = excess(&e.state, &images);
            line += &format!(" {width:>14.6e} ({micros:>5.0} us)");
            rows.push((order, substeps, width));
        }
        eprintln!("{line}");
    }
    let auto = f.enclose(&b[..n], &b[n..], &[], &period, &FlowSettings::default()).unwrap();
    for (w, v) in narrowest.iter().zip(&auto.state) {
        assert!(v.width() <= 1.02 * w, "{what}: automatic width {} vs {w} with some fixed settings", v.width());
    }
    let width = excess(&auto.state, &images);
    eprintln!("automatic: order {}, {} sub-steps, width {width:.6e}", auto.order, auto.substeps);
    rows.push((0, 0, width));
    rows
}

/// The largest excess of an enclosure's width over the width of the sampled images.
fn excess(state: &[Interval], images: &[Vec<Float>]) -> f64 {
    (0..state.len())
        .map(|i| {
            let lo = images.iter().map(|r| r[i].to_f64()).fold(f64::INFINITY, f64::min);
            let hi = images.iter().map(|r| r[i].to_f64()).fold(f64::NEG_INFINITY, f64::max);
            state[i].width() - (hi - lo)
        })
        .fold(0.0, f64::max)
}

fn width(rows: &[(usize, usize, f64)], order: usize, substeps: usize) -> f64 {
    rows.iter().find(|r| r.0 == order && r.1 == substeps).unwrap().2
}

#[test]
fn pendulum_width_by_order_and_substeps() {
    let f = flow(&["th", "w"], &["u"], &["w", "-9.81 * sin(th) + u"]);
    let b = [Interval::new(0.5, 0.6), Interval::new(-0.1, 0.1), Interval::new(0.1, 0.2)];
    let rows = table("pendulum, period 0.05", &f, &b, "0.05");
    let best = rows.iter().map(|r| r.2).fold(f64::INFINITY, f64::min);
    // Order 2 in one step leaves a visible truncation remainder; order 12 does not; more
    // sub-steps reduce the mean-value form's second-order overestimation.
    assert!(width(&rows, 2, 1) > 1.2 * width(&rows, 12, 1), "{rows:?}");
    assert!(width(&rows, 12, 16) < width(&rows, 12, 1), "{rows:?}");
    assert!(rows.last().unwrap().2 < 1.1 * best, "{rows:?}");
}

#[test]
fn tora_width_by_order_and_substeps() {
    let f = flow(&["x1", "x2", "x3", "x4"], &["f"], &["x2", "-x1 + 0.1*sin(x3)", "x4", "f - 10"]);
    let b = [
        Interval::new(0.6, 0.7),
        Interval::new(-0.7, -0.6),
        Interval::new(-0.4, -0.3),
        Interval::new(0.5, 0.6),
        Interval::new(9.9, 10.1),
    ];
    let rows = table("TORA, period 1", &f, &b, "1");
    let best = rows.iter().map(|r| r.2).fold(f64::INFINITY, f64::min);
    assert!(width(&rows, 3, 1) > 2.0 * width(&rows, 12, 1), "{rows:?}");
    assert!(width(&rows, 12, 16) < 0.5 * width(&rows, 12, 1), "{rows:?}");
    assert!(rows.last().unwrap().2 < 3.0 * best, "{rows:?}");
}
