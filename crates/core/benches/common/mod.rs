//! What the benchmarks share.

/// A fixed pseudo-random sequence (xorshift) of uniform values in [0, 1) from `seed`.
pub fn uniform(mut x: u64) -> impl FnMut() -> f64 {
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}
