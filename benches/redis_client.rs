//! Benchmark placeholder.

fn main() {}
