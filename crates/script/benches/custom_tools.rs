//! Benchmarks of custom tools (written later).

fn main() {}
