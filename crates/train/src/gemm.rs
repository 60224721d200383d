//! `C += A · B` in f32, fast and bit-reproducible.
//!
//! Every entry `c[i][j]` is updated as `c = (((c + a[i][0] b[0][j]) + a[i][1] b[1][j]) + ...)`: the
//! products taken in increasing `p`, each product and each sum rounded once (no FMA), whatever the
//! blocking and the instruction set. Blocking only decides *which* entries are worked on together
//! (register tiles of `MR x NR`, `KC`-long slices of `p` that continue from the stored partial
//! sums), never the order of the additions into one entry, so the result is the same bits on
//! every machine: the AVX2 copy of the kernel and the baseline copy perform the same IEEE
//! operations in the same order, lane by lane. Rust never contracts `a * b + c` into an FMA, and
//! the FMA target feature is not enabled here.
//!
//! The BLIS scheme, reduced to what training needs: both operands are packed (which also handles
//! transposed operands, given as strided views), and a register-tiled micro-kernel computes one
//! `MR x NR` tile of `C` over a `KC`-long slice.

/// Rows of a register tile.
const MR: usize = 6;
/// Columns of a register tile (two 8-lane AVX registers per row).
const NR: usize = 16;
/// Length of the slice of the inner dimension packed at a time (keeps a packed panel of B in L1).
const KC: usize = 256;

/// A read-only strided view of a matrix: entry `(i, j)` is `data[i * row_stride + j * col_stride]`.
#[derive(Clone, Copy, Debug)]
pub struct MatRef<'a> {
    data: &'a [f32],
    rows: usize,
    cols: usize,
    row_stride: usize,
    col_stride: usize,
}

impl<'a> MatRef<'a> {
    /// A row-major `rows x cols` matrix.
    pub fn new(data: &'a [f32], rows: usize, cols: usize) -> MatRef<'a> {
        assert!(data.len() >= rows * cols, "matrix view: {} values for {rows} x {cols}", data.len());
        MatRef { data, rows, cols, row_stride: cols, col_stride: 1 }
    }

    /// The transpose, without copying.
    pub fn t(self) -> MatRef<'a> {
        MatRef {
            data: self.data,
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
        }
    }

    #[inline(always)]
    fn at(&self, i: usize, j: usize) -> f32 {
        self.data[i * self.row_stride + j * self.col_stride]
    }
}

/// `c += a · b`, with `c` row-major `a.rows x b.cols`. See the module docs for the exact order of
/// operations.
pub fn gemm_acc(a: MatRef, b: MatRef, c: &mut [f32]) {
    assert_eq!(a.cols, b.rows, "gemm: inner dimensions differ");
    assert_eq!(c.len(), a.rows * b.cols, "gemm: output size");
    if a.rows == 0 || b.cols == 0 || a.cols == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2, checked just above.
        return unsafe { gemm_avx2(a, b, c) };
    }
    gemm_body(a, b, c);
}

/// [`gemm_body`] compiled with AVX2 available (same operations, same order).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn gemm_avx2(a: MatRef, b: MatRef, c: &mut [f32]) {
    gemm_body(a, b, c);
}

#[inline(always)]
fn gemm_body(a: MatRef, b: MatRef, c: &mut [f32]) {
    let (m, k, n) = (a.rows, a.cols, b.cols);
    let (m_panels, n_panels) = (m.div_ceil(MR), n.div_ceil(NR));
    let mut a_pack = vec![0.0f32; m_panels * MR * KC.min(k)];
    let mut b_pack = vec![0.0f32; n_panels * NR * KC.min(k)];
    for p0 in (0..k).step_by(KC) {
        let kc = KC.min(k - p0);
        pack_a(a, p0, kc, &mut a_pack);
        pack_b(b, p0, kc, &mut b_pack);
        for jp in 0..n_panels {
            let b_panel = &b_pack[jp * kc * NR..(jp + 1) * kc * NR];
            for ip in 0..m_panels {
                let a_panel = &a_pack[ip * kc * MR..(ip + 1) * kc * MR];
                tile(a_panel, b_panel, c, n, ip * MR, jp * NR, m, n);
            }
        }
    }
}

/// Packs rows of `a` by panels of `MR`: `out[ip][p][i] = a[ip * MR + i][p0 + p]`, zero past the
/// last row.
#[inline(always)]
fn pack_a(a: MatRef, p0: usize, kc: usize, out: &mut [f32]) {
    for (ip, panel) in out.chunks_exact_mut(kc * MR).take(a.rows.div_ceil(MR)).enumerate() {
        for (p, slot) in panel.chunks_exact_mut(MR).enumerate() {
            for (i, v) in slot.iter_mut().enumerate() {
                let row = ip * MR + i;
                *v = if row < a.rows { a.at(row, p0 + p) } else { 0.0 };
            }
        }
    }
}

/// Packs columns of `b` by panels of `NR`: `out[jp][p][j] = b[p0 + p][jp * NR + j]`, zero past the
/// last column.
#[inline(always)]
fn pack_b(b: MatRef, p0: usize, kc: usize, out: &mut [f32]) {
    for (jp, panel) in out.chunks_exact_mut(kc * NR).take(b.cols.div_ceil(NR)).enumerate() {
        for (p, slot) in panel.chunks_exact_mut(NR).enumerate() {
            let full = jp * NR + NR <= b.cols;
            if full && b.col_stride == 1 {
                let start = (p0 + p) * b.row_stride + jp * NR;
                slot.copy_from_slice(&b.data[start..start + NR]);
            } else {
                for (j, v) in slot.iter_mut().enumerate() {
                    let col = jp * NR + j;
                    *v = if col < b.cols { b.at(p0 + p, col) } else { 0.0 };
                }
            }
        }
    }
}

/// One `MR x NR` tile of `c` (row stride `ldc`) at `(i0, j0)`, continued over a packed slice.
/// Entries outside `m x n` are computed on zero padding and discarded.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn tile(a_panel: &[f32], b_panel: &[f32], c: &mut [f32], ldc: usize, i0: usize, j0: usize, m: usize, n: usize) {
    let rows = MR.min(m - i0);
    let cols = NR.min(n - j0);
    let mut acc = [[0.0f32; NR]; MR];
    for (i, acc_row) in acc.iter_mut().enumerate().take(rows) {
        acc_row[..cols].copy_from_slice(&c[(i0 + i) * ldc + j0..(i0 + i) * ldc + j0 + cols]);
    }
    for (ap, bp) in a_panel.chunks_exact(MR).zip(b_panel.chunks_exact(NR)) {
        let ap: &[f32; MR] = ap.try_into().expect("MR chunk");
        let bp: &[f32; NR] = bp.try_into().expect("NR chunk");
        for (acc_row, &ai) in acc.iter_mut().zip(ap) {
            for (cij, &bj) in acc_row.iter_mut().zip(bp) {
                *cij += ai * bj;
            }
        }
    }
    for (i, acc_row) in acc.iter().enumerate().take(rows) {
        c[(i0 + i) * ldc + j0..(i0 + i) * ldc + j0 + cols].copy_from_slice(&acc_row[..cols]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference: the same order of operations, one entry at a time.
    fn naive(a: MatRef, b: MatRef, c: &mut [f32]) {
        for i in 0..a.rows {
            for j in 0..b.cols {
                let mut s = c[i * b.cols + j];
                for p in 0..a.cols {
                    s += a.at(i, p) * b.at(p, j);
                }
                c[i * b.cols + j] = s;
            }
        }
    }

    fn values(n: usize, seed: u32) -> Vec<f32> {
        // Deterministic values of mixed magnitude and sign, so a change of order would show.
        (0..n as u32)
            .map(|i| {
                let h = (i.wrapping_mul(2_654_435_761) ^ seed.wrapping_mul(40_503)).rotate_left(7);
                (h % 20_011) as f32 / 997.0 - 10.0 + 1.0 / (1.0 + (h % 13) as f32)
            })
            .collect()
    }

    #[test]
    fn bit_identical_to_the_sequential_order_for_all_shapes_and_transposes() {
        for &(m, k, n) in &[(1, 1, 1), (7, 3, 17), (6, 256, 16), (13, 300, 33), (64, 513, 40), (2, 1024, 5)] {
            let a = values(m * k, 1);
            let b = values(k * n, 2);
            let at = values(k * m, 3);
            let bt = values(n * k, 4);
            let c0 = values(m * n, 5);
            let cases = [
                (MatRef::new(&a, m, k), MatRef::new(&b, k, n)),
                (MatRef::new(&at, k, m).t(), MatRef::new(&b, k, n)),
                (MatRef::new(&a, m, k), MatRef::new(&bt, n, k).t()),
                (MatRef::new(&at, k, m).t(), MatRef::new(&bt, n, k).t()),
            ];
            for (x, y) in cases {
                let (mut fast, mut slow) = (c0.clone(), c0.clone());
                gemm_acc(x, y, &mut fast);
                naive(x, y, &mut slow);
                let same = fast.iter().zip(&slow).all(|(p, q)| p.to_bits() == q.to_bits());
                assert!(same, "m={m} k={k} n={n}: blocked result differs from the sequential one");
            }
        }
    }

    #[test]
    fn the_baseline_kernel_matches_the_dispatched_one() {
        let (m, k, n) = (20, 700, 50);
        let (a, b) = (values(m * k, 7), values(k * n, 8));
        let (mut x, mut y) = (vec![0.5; m * n], vec![0.5; m * n]);
        gemm_acc(MatRef::new(&a, m, k), MatRef::new(&b, k, n), &mut x);
        gemm_body(MatRef::new(&a, m, k), MatRef::new(&b, k, n), &mut y);
        assert!(x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits()));
    }
}
