//! The `redlock-lab` command line.

fn main() {
    println!("redlock-lab {}", env!("CARGO_PKG_VERSION"));
}
