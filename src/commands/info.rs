//! `trestle info`: what the file was read as (`trestle_verify::describe`).

use crate::args::InfoArgs;
use crate::output::print_json;
use crate::{CliResult, Outcome};

pub fn run(a: &InfoArgs) -> CliResult {
    let sys = super::load(&a.system)?;
    if a.system.json {
        print_json(&trestle_verify::describe::describe(&sys));
    } else {
        print!("{}", trestle_verify::describe::text(&sys));
    }
    Ok(Outcome::Done)
}
