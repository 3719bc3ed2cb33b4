//! Named configurations: the worlds the simulator tests run, replayable by name.
//!
//! Each preset says what it expects. The `replay` test of `tests/simulator.rs` takes a preset
//! name and a seed from the environment, so a failure report can print one command.

use super::config::{ClockConfig, CrashConfig, NetworkConfig, SimConfig, WorkloadConfig};
use super::fault::{Budget, Fault, FaultBudget, FaultPlan, Process, ScheduledFault};
use crate::node::Persistence;
use crate::proto::{Config, DriftPolicy, UnlockMode, ValidityCheck};
use crate::storage::Protection;
use crate::time::Millis;

/// Every preset name, in the order of the table in [`by_name`].
pub const NAMES: [&str; 14] = [
    "antirez-safe",
    "antirez-safe-fsync",
    "drift-covered",
    "drift-too-small",
    "node-clock-jump",
    "client-clock-jump-backward",
    "crash-no-persistence",
    "pause-past-validity",
    "pause-past-validity-fenced",
    "pause-within-margin",
    "validity-check-off",
    "delayed-restart",
    "delayed-restart-clock-jump",
    "unlock-with-del",
];

/// The preset called `name`, if there is one.
///
/// | name | world | expected |
/// |---|---|---|
/// | `antirez-safe` | 5 nodes, 3 clients, 1% clock rate error covered by the drift, loss, partitions, any pauses, delayed storage ops, crashes without persistence and a restart delay of one TTL, fencing | every property holds |
/// | `antirez-safe-fsync` | the same with `fsync=always` and immediate restarts | every property holds |
/// | `drift-covered` | 3 nodes, 10% clock rate error, long holds, a fast network, drift 22 ms = `2ρ·ttl + 2` | every property holds |
/// | `drift-too-small` | the same with drift 2 ms | mutual exclusion violated |
/// | `node-clock-jump` | 3 nodes, node clocks jump forward by more than the drift | mutual exclusion violated |
/// | `client-clock-jump-backward` | 3 nodes, client clocks jump backward by more than the drift | mutual exclusion violated |
/// | `crash-no-persistence` | 3 nodes crash, lose their keys and restart at once | mutual exclusion violated |
/// | `pause-past-validity` | client pauses longer than the TTL, no fencing | mutual exclusion holds; lost updates |
/// | `pause-past-validity-fenced` | the same with fencing tokens | every property holds |
/// | `pause-within-margin` | pauses of at most 60 ms, holders stop issuing storage ops 75 ms before their deadline, no fencing | every property holds |
/// | `validity-check-off` | pauses of 50–300 ms, the step-3 validity check skipped | mutual exclusion violated |
/// | `delayed-restart` | a node crashes every 150 ms, no persistence, restart delay of one TTL | every property holds |
/// | `delayed-restart-clock-jump` | the same, and the node's clock jumps forward by a TTL during the delay | mutual exclusion violated |
/// | `unlock-with-del` | plain `DEL` unlock under contention and loss | mutual exclusion violated |
pub fn by_name(name: &str) -> Option<SimConfig> {
    let mut config = base(name)?;
    match name {
        "antirez-safe" => {}
        "antirez-safe-fsync" => {
            config.crash = CrashConfig {
                persistence: Persistence::FsyncAlways,
                fsync_period: Millis(0),
                restart_delay: Millis(0),
                client_guard: Millis(0),
                failover: None,
            };
        }
        "drift-covered" | "drift-too-small" => {
            // Holders keep the lock to their deadline and rivals poll fast, so the window
            // between a fast node's expiry and a slow client's deadline gets hit.
            config.lock.node_count = 3;
            config.clocks.rate_error_ppm_max = 100_000;
            config.lock.drift =
                DriftPolicy::fixed(Millis(if name == "drift-covered" { 22 } else { 2 }));
            config.network = NetworkConfig {
                delay_min: Millis(1),
                delay_max: Millis(2),
                loss_per_mille: 0,
            };
            config.lock.retry.delay_min = Millis(1);
            config.lock.retry.delay_max = Millis(3);
            config.workload.cycles_per_lock = 1_000;
            config.workload.think_max = Millis(3);
            config.faults = FaultPlan::Generated(FaultBudget::NONE);
        }
        "node-clock-jump" => {
            config.lock.node_count = 3;
            config.faults = FaultPlan::Generated(FaultBudget {
                node_jumps_forward: Budget::new(8, Millis(11), Millis(100)),
                ..FaultBudget::NONE
            });
        }
        "client-clock-jump-backward" => {
            config.lock.node_count = 3;
            config.faults = FaultPlan::Generated(FaultBudget {
                client_jumps_backward: Budget::new(8, Millis(11), Millis(100)),
                ..FaultBudget::NONE
            });
        }
        "crash-no-persistence" => {
            config.lock.node_count = 3;
            config.crash.restart_delay = Millis(0);
            config.faults = FaultPlan::Generated(FaultBudget {
                crashes: Budget::new(8, Millis(0), Millis(20)),
                ..FaultBudget::NONE
            });
        }
        "pause-past-validity" | "pause-past-validity-fenced" => {
            config.lock.node_count = 3;
            config.clients = 2;
            config.network.loss_per_mille = 0;
            config.workload.cycles_per_lock = 3;
            config.workload.protection = if name == "pause-past-validity" {
                Protection::None
            } else {
                Protection::FencingToken
            };
            config.faults = FaultPlan::Generated(FaultBudget {
                pauses: Budget::new(8, Millis(100), Millis(300)),
                ..FaultBudget::NONE
            });
        }
        "pause-within-margin" => {
            // Timing condition (I6): a pause P after the check plus a delivery delay Δ stay
            // below the margin M, so a stale op lands before any newer holder exists.
            config.lock.node_count = 3;
            config.clients = 2;
            config.workload.cycles_per_lock = 1_000;
            config.workload.op_margin = Millis(75);
            config.workload.protection = Protection::None;
            config.faults = FaultPlan::Generated(FaultBudget {
                pauses: Budget::new(20, Millis(1), Millis(60)),
                ..FaultBudget::NONE
            });
        }
        "validity-check-off" => {
            config.lock.node_count = 3;
            config.lock.validity_check = ValidityCheck::Off;
            config.faults = FaultPlan::Generated(FaultBudget {
                pauses: Budget::new(20, Millis(50), Millis(300)),
                ..FaultBudget::NONE
            });
        }
        "delayed-restart" | "delayed-restart-clock-jump" => {
            config.lock.node_count = 3;
            config.crash.restart_delay = config.ttl;
            let jump = name == "delayed-restart-clock-jump";
            config.faults = FaultPlan::Explicit(crash_every_150_ms(&config, jump));
        }
        "unlock-with-del" => {
            config.lock.node_count = 3;
            config.lock.unlock = UnlockMode::PlainDel;
            config.faults = FaultPlan::Generated(FaultBudget::NONE);
        }
        _ => return None,
    }
    Some(config)
}

/// A crash of each node in turn every 150 ms with no downtime; with `jump`, the crashed node's
/// clock jumps forward by one TTL a tick later, inside its restart delay (the key was already
/// lost, so the jump only cuts the delay short).
fn crash_every_150_ms(config: &SimConfig, jump: bool) -> Vec<ScheduledFault> {
    let mut schedule = Vec::new();
    for (i, at) in (100..config.duration.0).step_by(150).enumerate() {
        let node = i % config.nodes();
        schedule.push(ScheduledFault {
            at: Millis(at),
            fault: Fault::Crash {
                node,
                downtime: Millis(0),
            },
        });
        if jump {
            schedule.push(ScheduledFault {
                at: Millis(at + 1),
                fault: Fault::ClockJump {
                    process: Process::Node(node),
                    by_ms: config.ttl.0 as i64,
                },
            });
        }
    }
    schedule
}

/// What every preset shares: TTL 100 ms with a fixed 10 ms drift allowance that covers a 1%
/// clock rate error (`2 · 1% · 100 + 2 = 4 ms`), 1–8 ms delays with 10% loss, three clients
/// in contention, two seconds of true time, and antirez's world of faults (no clock jumps).
fn base(name: &str) -> Option<SimConfig> {
    let name = NAMES.iter().find(|n| **n == name)?;
    Some(SimConfig {
        name: (*name).to_owned(),
        lock: Config {
            drift: DriftPolicy::fixed(Millis(10)),
            node_count: 5,
            ..SimConfig::default().lock
        },
        clients: 3,
        ttl: Millis(100),
        duration: Millis(2_000),
        clocks: ClockConfig {
            rate_error_ppm_max: 10_000,
            client_rate_error_ppm_max: None,
            offset_max: Millis(1_000),
        },
        network: NetworkConfig {
            delay_min: Millis(1),
            delay_max: Millis(8),
            loss_per_mille: 100,
        },
        crash: CrashConfig {
            persistence: Persistence::None,
            fsync_period: Millis(0),
            restart_delay: Millis(100),
            client_guard: Millis(0),
            failover: None,
        },
        workload: WorkloadConfig {
            extensions: 0,
            counter_node: false,
            protection: Protection::FencingToken,
            ..WorkloadConfig::default()
        },
        faults: FaultPlan::Generated(FaultBudget {
            crashes: Budget::new(3, Millis(0), Millis(50)),
            isolations: Budget::new(4, Millis(10), Millis(200)),
            pauses: Budget::new(4, Millis(1), Millis(300)),
            storage_delays: Budget::new(3, Millis(0), Millis(200)),
            ..FaultBudget::NONE
        }),
        ..SimConfig::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_valid_and_named_after_itself() {
        for name in NAMES {
            let config = by_name(name).unwrap_or_else(|| panic!("{name} is listed"));
            config.validate().unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(config.name, name);
        }
        assert!(by_name("no-such-preset").is_none());
    }

    #[test]
    fn drift_too_small_does_not_cover_its_clock_error() {
        let config = by_name("drift-too-small").unwrap();
        assert!(config.lock_params().unwrap().drift < config.drift_covering_clock_error());
    }

    #[test]
    fn the_safe_presets_cover_their_clock_error() {
        for name in [
            "antirez-safe",
            "antirez-safe-fsync",
            "drift-covered",
            "delayed-restart",
        ] {
            let config = by_name(name).unwrap();
            let params = config.lock_params().unwrap();
            assert!(params.drift >= config.drift_covering_clock_error());
            assert!(
                config.crash.persistence == Persistence::FsyncAlways
                    || config.crash.restart_delay >= config.ttl
            );
        }
    }
}
