//! `redlock-lab advise`: safe settings for a deployment, each found by the checker.
//!
//! The deployment's durations become ticks of 1 ms, so a figure is exact to the millisecond;
//! a fault with a finer part is rounded *up* to whole ticks, so the model is at least as harsh
//! as the deployment. For each figure a
//! scenario family is generated whose one free parameter is the figure: the drift allowance,
//! the restart delay (or the client's restart guard), the check margin before each write.
//! `sweep::search` finds the smallest value at which the properties hold, with the checker's
//! verdicts on both sides of the boundary. The zone engine models every family, so the
//! constants' size costs nothing (a check takes well under a second); `--ticks N` scales the
//! TTL down to `N` ticks instead, as the discrete engine's small models are. `--out DIR`
//! writes both sides as scenario files, so `redlock-lab check DIR` proves every figure again.

mod args;
mod family;
mod figure;
mod figures;
mod json;
mod scale;
mod settings;
mod texts;
mod whole;
mod wrap;

pub(crate) use args::Args;
pub(crate) use figures::run;
