//! The cart-pole benchmark's controller, `configs/systems/networks/cartpole-relu.onnx`, is the
//! output of `examples/cartpole_controller.rs` byte for byte, reads back as the same network and
//! imitates its law.

#[path = "../examples/cartpole_controller.rs"]
mod cartpole_controller;

use std::path::Path;

#[test]
fn shipped_cartpole_controller_is_the_generators_output() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs/systems/networks/cartpole-relu.onnx");
    let bytes = std::fs::read(&shipped).expect("the cart-pole controller is shipped");
    let (net, loss) = cartpole_controller::network();
    assert_eq!(bytes, trestle_nn::encode_onnx(&net).unwrap(), "regenerate it with the example's command");
    let back = trestle_nn::load_onnx(&shipped).unwrap();
    assert_eq!(back.layers, net.layers);
    assert!(loss < 0.05, "training loss {loss}");
    // It pushes the way the law does near the upright rest and saturates like it far away.
    for s in [[0.0, 0.0, 0.1, 0.0], [0.0, 0.0, -0.1, 0.0], [0.5, 0.5, 0.4, 0.4], [-0.5, -0.5, -0.4, -0.4]] {
        let (u, want) = (back.eval(&s).unwrap()[0], cartpole_controller::law(s));
        assert!((u - want).abs() < 0.5, "at {s:?}: network {u}, law {want}");
    }
}
