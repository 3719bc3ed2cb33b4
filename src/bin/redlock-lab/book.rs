//! `redlock-lab book --out DIR [SCENARIO...]`: the catalog as a static site, one page per
//! scenario and an index grouped by the debate's arguments.
//!
//! Every page is rendered from the checker's own results, never from `[expect]` (which is
//! only compared with them): the claim and its source's words, each property's verdict with
//! how much the checker explored, the counterexample as a timeline whose steps link to the
//! same state in `redlock-lab explore`, the faults it needs (each re-checked without it), the
//! mitigation re-checked with its patch and the violated run's schedule replayed under the
//! patch on the same axis, the command that replays the counterexample on real masters (the
//! replay itself under `--replay`), and the file itself. For the whole catalog it also draws the
//! safe region of each boundary family the parameter synthesis settles. The folder needs no
//! server and fetches nothing: it opens from disk.

mod args;
mod argument;
mod chapter;
pub(crate) mod html;
mod index;
#[cfg(all(unix, feature = "redis"))]
mod live;
mod page;
mod pair;
mod region;
mod write;

pub(crate) use args::Args;
#[cfg(all(unix, feature = "redis"))]
pub(crate) use pair::replay as patched_run;
pub(crate) use write::run;
