//! Kyle Julian's NNet text format (as written and read by sisl/NNet).
//!
//! Layout after any `//` comment lines (fields comma separated, a trailing comma allowed, blank
//! lines ignored):
//!
//! 1. `numLayers,inputSize,outputSize,maxLayerSize`
//! 2. the `numLayers + 1` layer sizes, input first
//! 3. a flag line (historically "symmetric"; ignored)
//! 4. input minimums (`inputSize` values), 5. input maximums (`inputSize` values)
//! 6. means (`inputSize + 1` values: the inputs, then one for all outputs)
//! 7. ranges (`inputSize + 1` values, likewise)
//! 8. per layer: one line per output neuron holding its weight row, then one line per bias.
//!
//! Hidden layers are ReLU, the last layer is linear. Numbers are parsed as f64 (Rust's parser is
//! correctly rounded), so a decimal that is the exact value of an f32 or f64 gives that value.
//! Lines are read whole, whatever their length.

use crate::NnetNormalization;
use crate::affine::{Affine, ChainBuilder, Linear, MAX_DIAGONAL_WIDTH};
use crate::error::LoadError;
use std::str::FromStr;
use trestle_ir::network::{Layer, Matrix, Network};

/// The header values of an NNet file.
#[derive(Clone, Debug, PartialEq)]
pub struct NnetHeader {
    /// Layer sizes, input first.
    pub sizes: Vec<usize>,
    pub mins: Vec<f64>,
    pub maxes: Vec<f64>,
    /// `inputSize + 1` values: input means, then the output mean.
    pub means: Vec<f64>,
    /// `inputSize + 1` values: input ranges, then the output range.
    pub ranges: Vec<f64>,
}

/// Iterates over the data lines (skipping comments and blank lines), tracking line numbers.
struct Lines<'a> {
    file: &'a str,
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    last: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str, file: &'a str) -> Lines<'a> {
        Lines { file, lines: text.lines().enumerate(), last: 0 }
    }

    fn err(&self, line: usize, problem: impl Into<String>) -> LoadError {
        LoadError::Nnet { file: self.file.to_string(), line, problem: problem.into() }
    }

    /// The next data line as `(line number, text)`, or an error naming what was expected.
    fn next(&mut self, what: &str) -> Result<(usize, &'a str), LoadError> {
        for (i, text) in self.lines.by_ref() {
            self.last = i + 1;
            let t = text.trim();
            if !(t.is_empty() || t.starts_with("//")) {
                return Ok((i + 1, t));
            }
        }
        Err(self.err(self.last + 1, format!("the file ends early: expected {what}")))
    }

    /// The next line's fields, exactly `count` of them, parsed as `T`.
    fn fields<T: FromStr>(&mut self, count: usize, what: &str) -> Result<(usize, Vec<T>), LoadError> {
        let (line, text) = self.next(what)?;
        let mut parts: Vec<&str> = text.split(',').map(str::trim).collect();
        if parts.last() == Some(&"") {
            parts.pop();
        }
        if parts.len() != count {
            return Err(self.err(line, format!("{what}: expected {count} values, found {}", parts.len())));
        }
        let mut values = Vec::with_capacity(count);
        for (k, p) in parts.iter().enumerate() {
            let v = p.parse().map_err(|_| self.err(line, format!("{what}: value {} {p:?} is not a number", k + 1)))?;
            values.push(v);
        }
        Ok((line, values))
    }

    /// Like [`Lines::fields`] for f64, rejecting NaN and infinities.
    fn floats(&mut self, count: usize, what: &str) -> Result<(usize, Vec<f64>), LoadError> {
        let (line, values) = self.fields::<f64>(count, what)?;
        if let Some((k, v)) = values.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(self.err(line, format!("{what}: value {} is {v}, numbers must be finite", k + 1)));
        }
        Ok((line, values))
    }

    /// Errors if any data is left.
    fn expect_end(&mut self) -> Result<(), LoadError> {
        match self.next("") {
            Ok((line, _)) => Err(self.err(line, "unexpected data after the last layer's biases")),
            Err(_) => Ok(()),
        }
    }
}

/// Parses NNet text. `source` names the file in messages and becomes the network's `source`.
///
/// All data is read and checked before any layer is built, so sizes in the header that the data
/// does not back up are reported at their line and never allocated.
pub fn parse_nnet(text: &str, source: &str, normalization: NnetNormalization) -> Result<Network, LoadError> {
    let mut lines = Lines::new(text, source);
    let (header, header_line) = parse_header(&mut lines)?;
    let count = header.sizes.len() - 1;
    let maps = (0..count)
        .map(|k| parse_layer(&mut lines, k, header.sizes[k], header.sizes[k + 1]))
        .collect::<Result<Vec<_>, _>>()?;
    lines.expect_end()?;
    let layers = build(&header, maps, normalization).map_err(|problem| lines.err(header_line, problem))?;
    Ok(Network::new(source, layers)?)
}

/// The layers: optional input normalisation, the raw network (ReLU on hidden layers), optional
/// output de-normalisation.
fn build(header: &NnetHeader, maps: Vec<Affine>, normalization: NnetNormalization) -> Result<Vec<Layer>, String> {
    let mut chain = ChainBuilder::new(header.sizes[0]);
    if normalization == NnetNormalization::Header {
        input_normalisation(&mut chain, header)?;
    }
    let count = maps.len();
    for (k, map) in maps.into_iter().enumerate() {
        chain.affine(map)?;
        if k + 1 < count {
            chain.relu()?;
        }
    }
    if normalization == NnetNormalization::Header {
        output_denormalisation(&mut chain, header)?;
    }
    chain.finish()
}

/// Reads the header lines (sizes through ranges) and checks their consistency; also returns the
/// line number of the first header line.
fn parse_header(lines: &mut Lines) -> Result<(NnetHeader, usize), LoadError> {
    let (first_line, counts) = lines.fields::<usize>(4, "numLayers,inputSize,outputSize,maxLayerSize")?;
    let (num_layers, n_in, n_out, line) = (counts[0], counts[1], counts[2], first_line);
    if num_layers == 0 {
        return Err(lines.err(line, "numLayers is 0"));
    }
    let size_count = num_layers.checked_add(1).ok_or_else(|| lines.err(line, "numLayers is too large"))?;
    let (line, sizes) = lines.fields::<usize>(size_count, "layer sizes")?;
    if sizes[0] != n_in || sizes[num_layers] != n_out {
        let problem = format!(
            "layer sizes start at {} and end at {}, but the header says inputSize {n_in} and outputSize {n_out}",
            sizes[0], sizes[num_layers]
        );
        return Err(lines.err(line, problem));
    }
    if let Some(k) = sizes.iter().position(|&s| s == 0) {
        return Err(lines.err(line, format!("layer size {} is 0", k + 1)));
    }
    lines.next("the flag line")?;
    let (_, mins) = lines.floats(n_in, "input minimums")?;
    let (line, maxes) = lines.floats(n_in, "input maximums")?;
    if let Some(i) = (0..n_in).find(|&i| mins[i] > maxes[i]) {
        return Err(lines.err(line, format!("input {} has maximum {} below its minimum {}", i + 1, maxes[i], mins[i])));
    }
    let (_, means) = lines.floats(n_in + 1, "means (inputs, then output)")?;
    let (line, ranges) = lines.floats(n_in + 1, "ranges (inputs, then output)")?;
    if let Some(i) = ranges.iter().position(|&r| r == 0.0) {
        return Err(lines.err(line, format!("range {} is 0, cannot normalise", i + 1)));
    }
    Ok((NnetHeader { sizes, mins, maxes, means, ranges }, first_line))
}

/// Reads one layer: `rows` weight lines of `cols` values, then `rows` bias lines.
fn parse_layer(lines: &mut Lines, k: usize, cols: usize, rows: usize) -> Result<Affine, LoadError> {
    let mut data = Vec::new();
    for r in 0..rows {
        let what = format!("layer {} weight row {} of {rows} ({cols} values)", k + 1, r + 1);
        data.extend(lines.floats(cols, &what)?.1);
    }
    let mut bias = Vec::new();
    for r in 0..rows {
        let what = format!("layer {} bias {} of {rows}", k + 1, r + 1);
        bias.extend(lines.floats(1, &what)?.1);
    }
    Ok(Affine::new(Linear::Full(Matrix::new(rows, cols, data)), bias))
}

/// Clipping to `[min, max]` then `(x - mean) / range`, as explicit layers (see the crate docs).
fn input_normalisation(chain: &mut ChainBuilder, h: &NnetHeader) -> Result<(), String> {
    let n = h.sizes[0];
    if n > MAX_DIAGONAL_WIDTH {
        return Err(format!("{n} inputs: header normalisation is supported up to {MAX_DIAGONAL_WIDTH} inputs"));
    }
    clamp(chain, &h.mins, &h.maxes)?;
    let (means, ranges) = (&h.means[..n], &h.ranges[..n]);
    if means.iter().all(|&m| m == 0.0) && ranges.iter().all(|&r| r == 1.0) {
        return Ok(());
    }
    // Both constants are correctly rounded: exact when the range is a power of two.
    let scale = ranges.iter().map(|&r| 1.0 / r).collect();
    let shift = means.iter().zip(ranges).map(|(&m, &r)| -m / r).collect();
    chain.affine(Affine::new(Linear::Diagonal(scale), shift))
}

/// `clamp(x, lo, hi) = hi - relu(hi - (lo + relu(x - lo)))`: `max(x, lo)` then `min(.., hi)`, each
/// by one ReLU, as four affine maps whose constants are the header's own values (so the layers
/// mean the exact clamp; two maps merge only where that is exact).
///
/// Why not one ReLU layer (`lo + relu(x - lo) - relu(x - hi)`): its two ReLUs cancel for every
/// `x` above `hi`, and in f64 that cancellation is catastrophic for huge inputs (`x = 1e20`
/// gave `lo` instead of `hi`), so the f64 evaluation disagreed with the exact one. Here, above
/// `hi` the outer ReLU's input is negative and the output is `hi` exactly; below `lo` the inner
/// ReLU is exactly 0; in between every intermediate value is bounded by the header's magnitudes,
/// so f64 rounding errors are a few ulps of `max(|lo|, |hi|)` whatever the input.
fn clamp(chain: &mut ChainBuilder, lo: &[f64], hi: &[f64]) -> Result<(), String> {
    let n = lo.len();
    let neg = |v: &[f64]| v.iter().map(|x| -x).collect::<Vec<f64>>();
    chain.affine(Affine::new(Linear::Identity(n), neg(lo)))?;
    chain.relu()?;
    chain.affine(Affine::new(Linear::Identity(n), lo.to_vec()))?;
    chain.affine(Affine::new(Linear::Diagonal(vec![-1.0; n]), hi.to_vec()))?;
    chain.relu()?;
    chain.affine(Affine::new(Linear::Diagonal(vec![-1.0; n]), hi.to_vec()))
}

/// `y * range_out + mean_out`, exact (both constants come from the file), unless it is the identity.
fn output_denormalisation(chain: &mut ChainBuilder, h: &NnetHeader) -> Result<(), String> {
    let (mean, range) = (h.means[h.sizes[0]], h.ranges[h.sizes[0]]);
    if mean == 0.0 && range == 1.0 {
        return Ok(());
    }
    let m = chain.width();
    chain.affine(Affine::new(Linear::Diagonal(vec![range; m]), vec![mean; m]))
}

/// Reads only the header of NNet text (for tools that want the normalisation constants).
pub fn parse_nnet_header(text: &str, source: &str) -> Result<NnetHeader, LoadError> {
    Ok(parse_header(&mut Lines::new(text, source))?.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str = "// a comment\n// another\n2,2,1,3,\n2,3,1,\n0,\n-1.0,0.0,\n1.0,10.0,\n0.5,4.0,1.0,\n2.0,8.0,3.0,\n\
        1.0,-1.0,\n0.5,0.25,\n-2.0,1.0,\n0.0,\n1.0,\n-1.0,\n1.0,1.0,-1.0,\n0.5,\n";

    fn raw(x: &[f64]) -> f64 {
        let h =
            [(x[0] - x[1]).max(0.0), (0.5 * x[0] + 0.25 * x[1] + 1.0).max(0.0), (-2.0 * x[0] + x[1] - 1.0).max(0.0)];
        h[0] + h[1] - h[2] + 0.5
    }

    /// The sisl/NNet evaluator: clip, normalise, raw network, de-normalise.
    fn sisl(x: &[f64]) -> f64 {
        let (mins, maxes, means, ranges) = ([-1.0, 0.0], [1.0, 10.0], [0.5, 4.0, 1.0], [2.0, 8.0, 3.0]);
        let xn: Vec<f64> = (0..2).map(|i| (x[i].clamp(mins[i], maxes[i]) - means[i]) / ranges[i]).collect();
        raw(&xn) * ranges[2] + means[2]
    }

    #[test]
    fn raw_and_header_semantics() {
        let none = parse_nnet(TINY, "tiny.nnet", NnetNormalization::None).unwrap();
        let header = parse_nnet(TINY, "tiny.nnet", NnetNormalization::Header).unwrap();
        assert_eq!(none.sizes(), vec![2, 3, 1]);
        for x in [[0.3, 2.0], [-5.0, 20.0], [5.0, -3.0], [0.9, 9.9], [-1.0, 0.0]] {
            assert_eq!(none.eval(&x).unwrap(), vec![raw(&x)]);
            let got = header.eval(&x).unwrap()[0];
            assert!((got - sisl(&x)).abs() < 1e-12, "{x:?}: {got} vs {}", sisl(&x));
        }
        // The clip is two ReLU layers (max with lo, then min with hi). Ranges 2 and 8 are powers
        // of two, so the normalisation folds exactly into the clip's last map; the
        // de-normalisation (x3 + 1) folds exactly into the last raw layer.
        assert_eq!(header.sizes(), vec![2, 2, 2, 2, 3, 1]);
    }

    #[test]
    fn wide_inputs_are_refused_for_header_normalisation_only() {
        let n = crate::affine::MAX_DIAGONAL_WIDTH + 1;
        // n values on a line, plus `extra` more (the output's mean and range).
        let row = |v: &str, extra: usize| format!("{}\n", format!("{v},").repeat(n + extra));
        let (mins, maxes, means, ranges, weights) =
            (row("-1", 0), row("1", 0), row("0", 1), row("1", 1), row("0.25", 0));
        let text = format!("1,{n},1,{n},\n{n},1,\n0,\n{mins}{maxes}{means}{ranges}{weights}0.5,\n");
        let net = parse_nnet(&text, "wide.nnet", NnetNormalization::None).unwrap();
        assert_eq!(net.sizes(), vec![n, 1]);
        let msg = parse_nnet(&text, "wide.nnet", NnetNormalization::Header).unwrap_err().to_string();
        assert_eq!(msg, format!("wide.nnet: line 1: {n} inputs: header normalisation is supported up to 8192 inputs"));
    }

    #[test]
    fn identity_normalisation_is_skipped() {
        let text = "1,1,1,1,\n1,1,\n0,\n-3.0,\n3.0,\n0.0,0.0,\n1.0,1.0,\n2.0,\n0.5,\n";
        let net = parse_nnet(text, "id.nnet", NnetNormalization::Header).unwrap();
        assert_eq!(net.sizes(), vec![1, 1, 1, 1, 1]);
        assert_eq!(net.eval(&[10.0]).unwrap(), vec![6.5]);
        assert_eq!(net.eval(&[1.0]).unwrap(), vec![2.5]);
    }

    #[test]
    fn errors_name_the_line() {
        let cases = [
            (
                TINY.replace("0.5,0.25,", "0.5,"),
                "line 11: layer 1 weight row 2 of 3 (2 values): expected 2 values, found 1",
            ),
            (TINY.replace("-2.0,1.0,", "-2.0,nan,"), "line 12: layer 1 weight row 3 of 3 (2 values): value 2 is NaN"),
            (TINY.replace("2.0,8.0,3.0", "2.0,0.0,3.0"), "line 9: range 2 is 0"),
            (
                TINY.replace("1.0,1.0,-1.0,\n0.5,\n", "1.0,1.0,-1.0,\n"),
                "line 17: the file ends early: expected layer 2 bias 1 of 1",
            ),
            (format!("{TINY}7.0,\n"), "line 18: unexpected data"),
            (TINY.replace("2,3,1,", "3,3,1,"), "line 4: layer sizes start at 3"),
            (
                TINY.replace("0.0,\n1.0,\n-1.0", "0.0,\nx1\n-1.0"),
                "line 14: layer 1 bias 2 of 3: value 1 \"x1\" is not a number",
            ),
        ];
        for (text, want) in cases {
            let msg = parse_nnet(&text, "bad.nnet", NnetNormalization::None).unwrap_err().to_string();
            assert!(msg.starts_with("bad.nnet: ") && msg.contains(want), "{msg}");
        }
        let msg =
            parse_nnet("1,100000000,1,1,\n100000000,1,\n0,\n0,\n", "huge.nnet", NnetNormalization::None).unwrap_err();
        assert!(msg.to_string().contains("line 4: input minimums: expected 100000000 values, found 1"), "{msg}");
        let msg = parse_nnet("", "empty.nnet", NnetNormalization::None).unwrap_err().to_string();
        assert_eq!(
            msg,
            "empty.nnet: line 1: the file ends early: expected numLayers,inputSize,outputSize,maxLayerSize"
        );
    }
}
