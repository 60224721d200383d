//! The README walkthrough's controller, `examples/networks/double-integrator.onnx`, is the output of
//! `crates/nn/examples/double_integrator.rs` byte for byte, and reads back as the same network.

#[path = "../examples/double_integrator.rs"]
mod double_integrator;

use std::path::Path;

#[test]
fn shipped_walkthrough_controller_is_the_generators_output() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/networks/double-integrator.onnx");
    let bytes = std::fs::read(&shipped).expect("the walkthrough's controller is shipped");
    let net = double_integrator::network();
    assert_eq!(bytes, trestle_nn::encode_onnx(&net).unwrap(), "regenerate it with the example's command");
    let back = trestle_nn::load_onnx(&shipped).unwrap();
    assert_eq!(back.layers, net.layers);
    // The saturated PD law at three points: linear, saturated high, saturated low.
    for (x, v, u) in [(0.2, 0.2, -0.5), (-2.0, 0.0, 1.0), (1.0, 1.0, -1.0)] {
        assert_eq!(back.eval(&[x, v]).unwrap(), vec![u]);
    }
}
