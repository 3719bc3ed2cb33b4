//! `redlock-lab replay`: the checker's counterexample executed on real `redis-server` masters.

mod command;
mod execute;
mod masters;

pub use command::{Args, run};
