//! The scenario files `advise` checks: the deployment's faults in ticks, and one file per
//! family and value.

use std::fmt::Write as _;

use super::args::Args;
use super::scale::Scale;

/// The deployment in ticks of one scale.
#[derive(Clone, Debug)]
pub(super) struct Faults {
    pub scale: Scale,
    pub clock_error: u32,
    pub jump: u32,
    pub pause: Option<u32>,
    pub delay: Option<u32>,
    pub persistence: String,
}

impl Faults {
    /// The deployment's faults in ticks of `scale`.
    pub(super) fn of(args: &Args, scale: Scale) -> Faults {
        Faults {
            scale,
            clock_error: scale.fault(args.clock_error),
            jump: scale.fault(args.max_jump),
            pause: scale.bound(args.max_pause),
            delay: scale.bound(args.network_delay),
            persistence: args.restart_persistence.clone(),
        }
    }
}

/// The header and `[lock]`/`[clock]` shared by every family.
pub(super) fn base(faults: &Faults, name: &str, title: &str, prose: &str, drift: u32) -> String {
    let resolution = faults
        .scale
        .resolution()
        .map(|tick| format!("resolution = \"{tick}\"\n"))
        .unwrap_or_default();
    let mut text = format!(
        "name = \"{name}\"\ntitle = \"{title}\"\n\
         claim = \"redlock-lab advise: the smallest safe value, and one tick less\"\n\
         source = \"derived\"\nprose = \"\"\"\n{prose}\n{}\n\"\"\"\n{resolution}\n\
         [lock]\nnodes = 3\nclients = 2\nttl_ticks = {}\ndrift_ticks = {drift}\n",
        scaling_note(faults),
        faults.scale.ttl_ticks()
    );
    if faults.clock_error > 0 {
        let _ = write!(
            text,
            "\n[clock]\nnode_error_ticks = {0}\nclient_error_ticks = {0}\n",
            faults.clock_error
        );
    }
    text
}

fn scaling_note(faults: &Faults) -> String {
    format!(
        "Scaled by redlock-lab advise: 1 tick = {} (the TTL is {} ticks); faults rounded up to whole ticks.",
        faults.scale.show(1),
        faults.scale.ttl_ticks()
    )
}

/// A forward jump of a node's clock (`target = "node"`) or a backward one of a client's.
pub(super) fn jump_table(faults: &Faults, target: &str) -> String {
    let sign = if target == "client" { "-" } else { "" };
    format!(
        "\n[faults.clock_jumps]\ntarget = \"{target}\"\njump_ticks = {sign}{}\n",
        faults.jump
    )
}

/// The drift family's scenario: clock error, and a jump on `target` when there is one.
pub(super) fn drift_text(faults: &Faults, drift: u32, target: &str) -> String {
    let (name, title, prose) = if target == "client" {
        (
            "advise-drift-client-jump",
            "The drift allowance against the clock error and a client's backward jump",
            "Mutual exclusion against bounded clock error and one backward step of a holder's clock.",
        )
    } else {
        (
            "advise-drift",
            "The drift allowance against the clock error and a node's forward jump",
            "Mutual exclusion against bounded clock error on every node and client and one forward step of a node's clock.",
        )
    };
    let mut text = base(faults, name, title, prose, drift);
    if faults.jump > 0 {
        text.push_str(&jump_table(faults, target));
    }
    text
}

/// The crash family's scenario: one crash, with a restart delay or a client guard.
pub(super) fn crash_text(
    faults: &Faults,
    drift: u32,
    name: &str,
    delay: u32,
    guard: u32,
) -> String {
    let mut text = base(
        faults,
        name,
        "A node crashes and restarts",
        "Mutual exclusion when one node crashes, with the advised drift allowance.",
        drift,
    );
    let _ = write!(
        text,
        "\n[faults.crashes]\ncount = 1\npersistence = \"{}\"\nrestart_delay_ticks = {delay}\nclient_guard_ticks = {guard}\n",
        faults.persistence
    );
    if faults.jump > 0 {
        text.push_str(&jump_table(faults, "node"));
    }
    text
}

/// The storage family's scenario: a holder that may pause between its check and its write,
/// and a write that may be delayed, with a check margin and a protection.
pub(super) fn storage_text(faults: &Faults, drift: u32, margin: u32, protection: &str) -> String {
    let name = if protection == "none" {
        "advise-check-margin"
    } else {
        "advise-fencing"
    };
    let mut text = base(
        faults,
        name,
        "A holder checks its lease before each write to the storage",
        "Storage safety when a holder may pause between its check and its write and the write may be delayed.",
        drift,
    );
    let delay = faults
        .delay
        .map_or("\"unbounded\"".to_owned(), |d| d.to_string());
    let _ = write!(
        text,
        "\n[storage]\nprotection = \"{protection}\"\ncheck_margin_ticks = {margin}\nmax_delay_ticks = {delay}\n"
    );
    match faults.pause {
        Some(0) => {}
        Some(pause) => {
            let _ = write!(text, "\n[faults.pauses]\ncount = 1\nmax_ticks = {pause}\n");
        }
        None => text.push_str("\n[faults.pauses]\ncount = 1\nmax_ticks = \"unbounded\"\n"),
    }
    // The jump the deployment declared faces the margin too: a node's clock that steps forward
    // frees the key early, while the holder still counts its lease.
    if faults.jump > 0 {
        text.push_str(&jump_table(faults, "node"));
    }
    text
}
