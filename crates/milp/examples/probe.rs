use good_lp::Expression;
use std::time::Instant;
use trestle_bounds::{InputBox, Method};
use trestle_milp::{MilpModel, Sense, SolveOptions, encode_network_with, layer_bounds};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let ov = trestle_config::Overrides::parse(&[format!("controller.model={path}")]).unwrap();
    let sys = trestle_config::load_system(std::path::Path::new("/work/main/configs/systems/peer-maze-det.toml"), &ov).unwrap();
    let net = sys.networks[0].network.clone();
    let ibox = InputBox::new(vec![0.25, 0.55], vec![0.95, 0.95]);
    let pieces: usize = std::env::var("PIECES").ok().and_then(|s| s.parse().ok()).unwrap_or(1);
    for (name, m) in [("ibp", Method::Ibp), ("crown", Method::Crown), ("alpha", "alpha-crown".parse().unwrap())] {
        let t = Instant::now();
        let lb = layer_bounds(&net, &ibox, &trestle_milp::BoundOptions { method: m, pieces }).unwrap();
        let unstable: Vec<usize> = lb.iter().map(|l| l.lo.iter().zip(&l.hi).filter(|(a, b)| **a < 0.0 && **b > 0.0).count()).collect();
        println!("{name}: unstable per layer {unstable:?} ({:.2?}); out {:?} {:?}", t.elapsed(), lb.last().unwrap().lo, lb.last().unwrap().hi);
    }
    if std::env::var("SKIP").is_ok() { return; }
    let method = match args.get(2).map(String::as_str) { Some("alpha") => "alpha-crown".parse().unwrap(), _ => Method::Crown };
    let mut model = MilpModel::new();
    let x = model.continuous(0.25, 0.95, "x").unwrap();
    let y = model.continuous(0.55, 0.95, "y").unwrap();
    let enc = encode_network_with(&mut model, &net, &[Expression::from(x), Expression::from(y)], &ibox, &trestle_milp::BoundOptions { method, pieces }).unwrap();
    let obj = Expression::from(y) + 0.1 * enc.outputs[1].clone() - 0.95;
    let mut so = SolveOptions::default();
    for kv in args.iter().skip(3) {
        let (k, v) = kv.split_once('=').unwrap();
        let val = if let Ok(i) = v.parse::<i32>() { trestle_milp::model::HighsValue::Int(i) } else if let Ok(f) = v.parse::<f64>() { trestle_milp::model::HighsValue::Float(f) } else if v == "true" || v == "false" { trestle_milp::model::HighsValue::Bool(v == "true") } else { trestle_milp::model::HighsValue::Text(v.into()) };
        so.highs_options.push((k.into(), val));
    }
    let t = Instant::now();
    let out = model.solve(Sense::Maximise, &obj, &so).unwrap();
    println!("y' face: {:?} bound {:?} primal {:?} in {:.2?} ({} binaries)", out.status, out.bound, out.primal, t.elapsed(), model.num_binaries());
}
