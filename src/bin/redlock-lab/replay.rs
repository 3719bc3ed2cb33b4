//! `redlock-lab replay`: the checker's counterexample executed on real `redis-server` masters.

mod command;
mod execute;
mod masters;
mod page;
mod replication;
mod store;

pub(crate) use command::{Args, Format, Request, prepare, run};
