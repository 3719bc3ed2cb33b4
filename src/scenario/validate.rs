//! From the file as serde sees it to a [`Scenario`]: every check a file must pass, each
//! refusal with its byte span, and the core's rules for the lock applied once.

use std::collections::BTreeMap;
use std::path::Path;

use toml::Spanned;

use super::raw::{
    RawBound, RawCheckAndApply, RawClientFaults, RawContact, RawCrashWhen, RawDecision,
    RawExpectValue, RawExtensionQuorum, RawFailover, RawJumps, RawLock, RawPersistence,
    RawProtection, RawQuorum, RawScenario, RawScheduled, RawSimFaults, RawSimulate, RawSteps,
    RawTokenSource, RawUnlock, RawValidityCheck, RawWait,
};
use crate::actor::Process;
use crate::fault::{ClientFaultAim, CrashWhen};
use crate::node::Persistence;
use crate::proto::{
    Config, Contact, DriftPolicy, ExtensionQuorum, FailedRound, NodeId, NodeSet, RetryPolicy,
    RetryToken, RoundDecision, UnlockMode, ValidityCheck, quorum,
};
use crate::sim::{
    Fault, FaultBudget, FaultClass, FaultPlan, KindBudget, MAX_DURATION, MAX_RATE_ERROR_PPM,
    MAX_SPAN, NetworkConfig, ScheduledFault,
};
use crate::storage::{CheckAndApply, Protection, TokenSource};
use crate::time::Millis;

use super::error::{Location, ScenarioError};
use super::ingredient::Ingredient;
use super::property;
use super::resolution::{self, Resolution};
use super::settings::*;

impl Scenario {
    /// Reads and validates a scenario file.
    pub fn load(path: impl AsRef<Path>) -> Result<Scenario, ScenarioError> {
        let path = path.as_ref();
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| ScenarioError::Read {
            file: file.clone(),
            message: e.to_string(),
        })?;
        Scenario::from_str(&file, ScenarioError::text(&file, &bytes)?)
    }

    /// Parses and validates scenario text; `file` names it in errors and reports.
    #[allow(clippy::should_implement_trait)] // two arguments: not `FromStr`
    pub fn from_str(file: &str, text: &str) -> Result<Scenario, ScenarioError> {
        let mut raw: RawScenario =
            toml::from_str(text).map_err(|e| ScenarioError::from_toml(file, text, &e))?;
        let mut validator = Validator {
            file,
            text,
            resolution: Resolution::default(),
        };
        validator.resolution = resolution::resolve(file, text, &mut raw)?;
        validator.scenario(raw)
    }
}

pub(super) struct Validator<'a> {
    pub(super) file: &'a str,
    pub(super) text: &'a str,
    /// The file's tick and the keys it wrote as durations, so a range error can say both.
    pub(super) resolution: Resolution,
}

/// A `[simulate]` key's milliseconds as the simulator's span.
fn ms(ms: u32) -> Millis {
    Millis(u64::from(ms))
}

impl Validator<'_> {
    fn at<T>(&self, spanned: &Spanned<T>) -> Location {
        Location::of_offset(self.file, self.text, spanned.span().start)
    }

    /// A refusal of `value`, at its line and column.
    fn refuse<T, V>(
        &self,
        value: &Spanned<V>,
        message: impl Into<String>,
    ) -> Result<T, ScenarioError> {
        Err(ScenarioError::OutOfRange {
            at: self.at(value),
            message: message.into(),
        })
    }

    fn range(
        &self,
        value: &Spanned<u32>,
        min: u32,
        max: u32,
        what: &str,
    ) -> Result<u32, ScenarioError> {
        let v = *value.get_ref();
        if v < min || v > max {
            let message = match (self.resolution.written(what), self.resolution.tick) {
                (Some(text), Some(tick)) => format!(
                    "{} = {text:?} is {v} ticks of {tick} (the file's resolution), but must lie in {min}..={max} ticks",
                    what.strip_suffix("_ticks").unwrap_or(what),
                ),
                _ => format!("{what} is {v}, but must lie in {min}..={max}"),
            };
            return self.refuse(value, message);
        }
        Ok(v)
    }

    /// `[expect]` (or `[simulate.expect]`, where `mechanism` is refused): the verdicts and
    /// the declared mechanism.
    fn expect(
        &self,
        table: &BTreeMap<Spanned<String>, RawExpectValue>,
        has_storage: bool,
        allow_mechanism: bool,
    ) -> Result<(Expectations, Vec<Ingredient>), ScenarioError> {
        let mut expect = Vec::new();
        let mut mechanism = Vec::new();
        for (key, value) in table {
            let property = key.get_ref().as_str();
            let verdict = match (property, value) {
                ("mechanism", RawExpectValue::List(names)) if allow_mechanism => {
                    mechanism = self.mechanism(key, names)?;
                    continue;
                }
                ("mechanism", RawExpectValue::List(_)) => {
                    return Err(ScenarioError::Mechanism {
                        at: self.at(key),
                        message: "the simulator's expectation names properties only; a mechanism belongs in [expect]".to_owned(),
                    });
                }
                ("mechanism", RawExpectValue::Verdict(_)) => {
                    return Err(ScenarioError::Mechanism {
                        at: self.at(key),
                        message: "mechanism is a list of ingredient names, e.g. [\"crash\", \"clock jump\"]".to_owned(),
                    });
                }
                (_, RawExpectValue::Verdict(verdict)) => verdict,
                (_, RawExpectValue::List(_)) => {
                    return Err(ScenarioError::WrongType {
                        at: self.at(key),
                        message: format!(
                            "{property:?} takes \"holds\" or \"violated\", not a list"
                        ),
                    });
                }
            };
            if !property::ALL.contains(&property) {
                return Err(ScenarioError::UnknownProperty {
                    at: self.at(key),
                    name: property.to_owned(),
                    reason: format!("known: {}", property::ALL.join(", ")),
                });
            }
            let needs_storage =
                property == property::STORAGE_SAFETY || property == property::NO_LOST_UPDATE;
            if needs_storage && !has_storage {
                return Err(ScenarioError::UnknownProperty {
                    at: self.at(key),
                    name: property.to_owned(),
                    reason: "a storage property needs a [storage] table".to_owned(),
                });
            }
            expect.push((property.to_owned(), *verdict));
        }
        Ok((expect, mechanism))
    }

    /// `source`, `quote` and `builds_on`: the sentence the claim rests on, and whose it is.
    ///
    /// A claim credited to a source must quote it, so a reader (and `tests/sources.rs`, for the
    /// seed) can check that the source says what the file claims. A `derived` claim may name
    /// the source it builds on, and then quotes the statement it starts from.
    fn citation(&self, raw: &RawScenario) -> Result<Option<Citation>, ScenarioError> {
        let source = raw
            .source
            .as_ref()
            .map_or(Source::Derived, |s| *s.get_ref());
        let cited = match (source, &raw.builds_on) {
            (Source::Derived, None) => None,
            (Source::Derived, Some(on)) if *on.get_ref() == Source::Derived => {
                return Err(ScenarioError::Citation {
                    at: self.at(on),
                    message: "builds_on names the source a derivation starts from: \"seed\", \"redis.io\", \"Kleppmann\" or \"antirez\"".to_owned(),
                });
            }
            (Source::Derived, Some(on)) => Some(*on.get_ref()),
            (_, Some(on)) => {
                return Err(ScenarioError::Citation {
                    at: self.at(on),
                    message: format!(
                        "builds_on belongs to a \"derived\" claim; this one is {source}'s own"
                    ),
                });
            }
            (_, None) => Some(source),
        };
        match (cited, &raw.quote) {
            (None, None) => Ok(None),
            (None, Some(quote)) => Err(ScenarioError::Citation {
                at: self.at(quote),
                message: "a derived claim quotes only the source it builds on: add builds_on = \"redis.io\" (or the seed, Kleppmann, antirez), or drop quote".to_owned(),
            }),
            (Some(cited), None) => Err(ScenarioError::Citation {
                at: match (&raw.builds_on, &raw.source) {
                    (Some(on), _) => self.at(on),
                    (None, Some(source)) => self.at(source),
                    (None, None) => self.top(),
                },
                message: format!(
                    "a claim resting on {cited} needs the sentence it rests on: quote = \"…\""
                ),
            }),
            (Some(_), Some(quote)) if quote.get_ref().trim().is_empty() => {
                Err(ScenarioError::Citation {
                    at: self.at(quote),
                    message: "quote is empty: give the source's sentence".to_owned(),
                })
            }
            (Some(cited), Some(quote)) => Ok(Some(Citation {
                source: cited,
                quote: quote.get_ref().clone(),
            })),
        }
    }

    /// `[simulate]`, every value range-checked here so a bad one points at its key.
    fn simulate(
        &self,
        table: &Spanned<RawSimulate>,
        lock: &LockSettings,
        (has_storage, has_failover): (bool, bool),
    ) -> Result<SimulateSettings, ScenarioError> {
        let raw = table.get_ref();
        let span = MAX_SPAN.0 as u32;
        let ms_per_tick = match &raw.ms_per_tick {
            Some(r) => Some(self.range(r, 1, 1_000, "ms_per_tick")?),
            None => None,
        };
        let [delay_min, delay_max, retry_delay_min, retry_delay_max] =
            self.simulate_delays(raw)?.map(ms);
        let faults = self.simulate_faults(raw, lock, has_failover)?;
        let expect = match &raw.expect {
            Some(table) => self.expect(table.get_ref(), has_storage, false)?.0,
            None => Vec::new(),
        };
        let max_duration = MAX_DURATION.0 as u32;
        let duration = self.opt_range(&raw.duration_ms, 1_000, 1, max_duration, "duration_ms")?;
        let loss = self.opt_range(&raw.loss_per_mille, 0, 0, 1_000, "loss_per_mille")?;
        Ok(SimulateSettings {
            ms_per_tick,
            duration: ms(duration),
            network: NetworkConfig {
                delay_min,
                delay_max,
                loss_per_mille: loss as u16,
            },
            clock_rate_error_ppm: match &raw.clock_rate_error_ppm {
                Some(ppm) => {
                    Some(self.range(ppm, 0, MAX_RATE_ERROR_PPM, "clock_rate_error_ppm")?)
                }
                None => None,
            },
            clock_offset_max: ms(self.opt_range(
                &raw.clock_offset_max_ms,
                0,
                0,
                span,
                "clock_offset_max_ms",
            )?),
            retry_delay_min,
            retry_delay_max,
            think_max: ms(self.opt_range(&raw.think_max_ms, 20, 0, span, "think_max_ms")?),
            cycles_per_lock: self.opt_range(
                &raw.cycles_per_lock,
                if has_storage { 2 } else { 0 },
                0,
                if has_storage { 100_000 } else { 0 },
                "cycles_per_lock (storage cycles need a [storage] table)",
            )?,
            faults,
            expect,
        })
    }

    /// `[simulate]`'s message delays and retry delays, in that order, each range above the
    /// one before it.
    fn simulate_delays(&self, raw: &RawSimulate) -> Result<[u32; 4], ScenarioError> {
        let span = MAX_SPAN.0 as u32;
        let delay_min_ms = self.opt_range(&raw.delay_min_ms, 1, 1, span, "delay_min_ms")?;
        let delay_max_ms = self.opt_range(
            &raw.delay_max_ms,
            5.max(delay_min_ms),
            delay_min_ms,
            span,
            "delay_max_ms",
        )?;
        let retry_delay_min_ms =
            self.opt_range(&raw.retry_delay_min_ms, 5, 0, span, "retry_delay_min_ms")?;
        let retry_delay_max_ms = self.opt_range(
            &raw.retry_delay_max_ms,
            20.max(retry_delay_min_ms),
            retry_delay_min_ms,
            span,
            "retry_delay_max_ms",
        )?;
        Ok([
            delay_min_ms,
            delay_max_ms,
            retry_delay_min_ms,
            retry_delay_max_ms,
        ])
    }

    /// `[simulate]`'s faults: a schedule, or budgets drawn at random, never both.
    fn simulate_faults(
        &self,
        raw: &RawSimulate,
        lock: &LockSettings,
        has_failover: bool,
    ) -> Result<FaultPlan, ScenarioError> {
        let generated = [
            (&raw.crashes, FaultClass::Crash),
            (&raw.isolations, FaultClass::Isolation),
            (&raw.pauses, FaultClass::Pause),
            (&raw.storage_delays, FaultClass::StorageDelay),
            (&raw.node_jumps_forward, FaultClass::NodeJumpForward),
            (&raw.client_jumps_backward, FaultClass::ClientJumpBackward),
        ];
        let Some(schedule) = &raw.schedule else {
            let mut budget = FaultBudget::NONE;
            for (raw, class) in generated {
                budget[class] = self.sim_budget(raw, class)?;
            }
            return Ok(FaultPlan::Generated(budget));
        };
        if let Some(budget) = generated.iter().find_map(|(b, _)| b.as_ref()) {
            return Err(ScenarioError::WrongType {
                at: self.at(budget),
                message: "[simulate] lists its faults in schedule or budgets them, not both"
                    .to_owned(),
            });
        }
        let nodes = u32::from(lock.params.node_count);
        let mut listed = Vec::new();
        for entry in schedule.get_ref() {
            listed.push(self.scheduled_fault(entry, nodes, has_failover)?);
        }
        Ok(FaultPlan::Explicit(listed))
    }

    /// One generated fault budget of `[simulate]`, keyed by its class's name (none when the
    /// table is absent).
    fn sim_budget(
        &self,
        b: &Option<Spanned<RawSimFaults>>,
        class: FaultClass,
    ) -> Result<KindBudget, ScenarioError> {
        let (span, what) = (MAX_SPAN.0 as u32, class.key());
        match b {
            None => Ok(KindBudget::NONE),
            Some(b) => {
                let b = b.get_ref();
                let count = self.range(&b.count, 0, 1_000, &format!("{what}.count"))?;
                let min_ms = self.opt_range(&b.min_ms, 0, 0, span, &format!("{what}.min_ms"))?;
                let max_ms = self.range(&b.max_ms, min_ms, span, &format!("{what}.max_ms"))?;
                Ok(KindBudget::new(count, ms(min_ms), ms(max_ms)))
            }
        }
    }

    /// One entry of `[simulate] schedule`: a crash of a node, or a jump of its clock.
    fn scheduled_fault(
        &self,
        entry: &Spanned<RawScheduled>,
        nodes: u32,
        has_failover: bool,
    ) -> Result<ScheduledFault, ScenarioError> {
        let span = MAX_SPAN.0 as u32;
        let e = entry.get_ref();
        let at = ms(self.range(&e.at_ms, 0, MAX_DURATION.0 as u32, "at_ms")?);
        if let Some(node) = &e.failover {
            self.scheduled_failover(entry, node, has_failover)?;
            return Ok(ScheduledFault {
                at,
                fault: Fault::Failover,
            });
        }
        let fault = match (&e.crash, &e.jump_node, &e.by_ms, &e.downtime_ms) {
            (Some(node), None, None, downtime) => Fault::Crash {
                node: self.range(node, 0, nodes - 1, "crash (a node index)")? as usize,
                downtime: ms(self.opt_range(downtime, 0, 0, span, "downtime_ms")?),
            },
            (None, Some(node), Some(by), None) => {
                let v = *by.get_ref();
                if v == 0 || v.unsigned_abs() > span {
                    return self.refuse(
                        by,
                        format!("by_ms is {v}, but must be nonzero and lie in -{span}..={span}"),
                    );
                }
                let node = self.range(node, 0, nodes - 1, "jump_node (a node index)")?;
                Fault::ClockJump {
                    process: Process::node(node as usize),
                    by_ms: i64::from(v),
                }
            }
            _ => {
                return Err(ScenarioError::WrongType {
                    at: self.at(entry),
                    message: "a schedule entry is either crash = <node> (with an optional downtime_ms), jump_node = <node> with by_ms, or failover = 0".to_owned(),
                });
            }
        };
        Ok(ScheduledFault { at, fault })
    }

    /// A schedule entry `failover = <node>`: only the replicated master of `[failover]`,
    /// node 0, fails over, and only alone in its entry.
    fn scheduled_failover(
        &self,
        entry: &Spanned<RawScheduled>,
        node: &Spanned<u32>,
        has_failover: bool,
    ) -> Result<(), ScenarioError> {
        let e = entry.get_ref();
        if e.crash.is_some()
            || e.jump_node.is_some()
            || e.by_ms.is_some()
            || e.downtime_ms.is_some()
        {
            return Err(ScenarioError::WrongType {
                at: self.at(entry),
                message: "a failover entry has at_ms and failover = 0 only".to_owned(),
            });
        }
        if !has_failover {
            return self.refuse(
                node,
                "failover = 0 needs a [failover] table (the replicated master)",
            );
        }
        self.range(node, 0, 0, "failover (the replicated master, node 0)")?;
        Ok(())
    }

    fn opt_range(
        &self,
        value: &Option<Spanned<u32>>,
        default: u32,
        min: u32,
        max: u32,
        what: &str,
    ) -> Result<u32, ScenarioError> {
        match value {
            Some(v) => self.range(v, min, max, what),
            None => Ok(default),
        }
    }

    /// The start of the file: where an error about the whole file points.
    fn top(&self) -> Location {
        Location::of_offset(self.file, self.text, 0)
    }

    /// A file without `name` is named after itself: its stem, in kebab case (`My Deploy.toml`
    /// is `my-deploy`).
    fn name_from_file(&self) -> String {
        let stem = std::path::Path::new(self.file)
            .file_stem()
            .map_or_else(String::new, |stem| stem.to_string_lossy().to_lowercase());
        let kebab: String = stem
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        match kebab.trim_matches('-') {
            "" => "scenario".to_owned(),
            name => name.to_owned(),
        }
    }

    fn kebab(&self, value: &Spanned<String>, what: &str) -> Result<String, ScenarioError> {
        let name = value.get_ref().clone();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return self.refuse(
                value,
                format!("{what} {name:?} must be kebab-case: a-z, 0-9 and '-'"),
            );
        }
        Ok(name)
    }

    pub(super) fn scenario(&self, raw: RawScenario) -> Result<Scenario, ScenarioError> {
        let name = match &raw.name {
            Some(name) => self.kebab(name, "name")?,
            None => self.name_from_file(),
        };
        let aliases = raw
            .aliases
            .iter()
            .map(|alias| self.kebab(alias, "alias"))
            .collect::<Result<Vec<_>, _>>()?;
        let mitigation = self.mitigation(&raw)?;
        let mut lock = self.lock(&raw, raw.failover.is_some())?;
        let failover = match &raw.failover {
            Some(f) => Some(self.failover(f.get_ref(), lock.nodes() as u32)?),
            None => None,
        };
        let clock = self.clock(&raw)?;
        let network = self.network(&raw, &lock)?;
        let storage = self.storage(&raw, &lock)?;
        // The fencing rule is the lock's, but `[storage]` says which token the storage reads.
        lock.params.fencing = storage
            .as_ref()
            .map_or(TokenSource::Ideal, |s| s.token_source)
            .fencing();
        let faults = self.faults(&raw, &lock)?;
        let liveness = self.liveness(&raw, &lock)?;
        let simulate = match &raw.simulate {
            Some(table) => {
                Some(self.simulate(table, &lock, (storage.is_some(), failover.is_some()))?)
            }
            None => None,
        };
        let citation = self.citation(&raw)?;
        let (expect, mechanism) =
            self.scenario_expect(&raw, storage.is_some(), simulate.as_ref())?;
        let scenario = Scenario {
            file: self.file.to_owned(),
            name,
            title: raw.title,
            claim: raw.claim,
            source: raw
                .source
                .as_ref()
                .map_or(Source::Derived, |s| *s.get_ref()),
            citation,
            prose: raw.prose,
            summary: raw.summary,
            lock,
            clock,
            network,
            storage,
            faults,
            failover,
            liveness,
            symmetry: raw.check.symmetry.unwrap_or(true),
            resolution: self.resolution.tick,
            simulate,
            expect,
            mechanism,
            aliases,
            mitigation,
        };
        self.mechanism_granted(&raw.expect, &scenario)?;
        Ok(scenario)
    }

    /// `[mitigation]`: its text, the scenario that applies it, and the keys it sets.
    fn mitigation(&self, raw: &RawScenario) -> Result<Option<Mitigation>, ScenarioError> {
        Ok(match &raw.mitigation {
            Some(m) => Some(Mitigation {
                text: m.text.clone(),
                scenario: m
                    .scenario
                    .as_ref()
                    .map(|name| self.kebab(name, "mitigation scenario"))
                    .transpose()?,
                set: m
                    .set
                    .iter()
                    .map(|(key, value)| (key.clone(), value.to_string()))
                    .collect(),
            }),
            None => None,
        })
    }

    /// `[clock]`: each side's error bound.
    fn clock(&self, raw: &RawScenario) -> Result<ClockSettings, ScenarioError> {
        Ok(ClockSettings {
            node_error_ticks: self.opt_range(
                &raw.clock.node_error_ticks,
                0,
                0,
                MAX_TICKS,
                "node_error_ticks",
            )?,
            client_error_ticks: self.opt_range(
                &raw.clock.client_error_ticks,
                0,
                0,
                MAX_TICKS,
                "client_error_ticks",
            )?,
        })
    }

    /// `[storage]`: the protection, the token the storage reads, the check margin and the
    /// longest delay of a write.
    fn storage(
        &self,
        raw: &RawScenario,
        lock: &LockSettings,
    ) -> Result<Option<StorageSettings>, ScenarioError> {
        let Some(s) = &raw.storage else {
            return Ok(None);
        };
        // The model lets a get-then-del holder release only once its requests are in (a
        // connection is FIFO, so its `GET` cannot overtake a late `SET`); a holder's storage
        // cycle releases from within its steps, where that wait is not modelled.
        if lock.params.unlock == UnlockMode::GetThenDel {
            return Err(ScenarioError::Lock {
                at: self.at(s),
                reason: "[storage] cannot be combined with unlock = \"get-then-del\" yet: the model releases such a holder only once its requests are in, which its storage cycle does not wait for".to_owned(),
            });
        }
        let inner = s.get_ref();
        let check_margin_ticks = match &inner.check_margin_ticks {
            // A margin is part of the lease: past `ttl − drift` no holder could act (and the
            // margin guard's bound, `ttl − drift − margin + 1`, would fall below zero).
            Some(m) => Some(
                self.range(
                    m,
                    1,
                    lock.params.max_validity().0 as u32,
                    "check_margin_ticks",
                )
                .map_err(|e| e.explained("the lease, ttl − drift"))?,
            ),
            None => None,
        };
        let max_delay = inner.max_delay_ticks.map_or(Bound::Ticks(0), Bound::from);
        let protection = match inner.protection.unwrap_or(RawProtection::None) {
            RawProtection::None => Protection::None,
            RawProtection::FencingToken => Protection::FencingToken,
            RawProtection::FencingOnWritesOnly => Protection::FencingOnWritesOnly,
            RawProtection::RandomTokenCas => Protection::RandomTokenCas,
        };
        let token_source = match inner.token_source.as_ref().map(|t| *t.get_ref()) {
            None | Some(RawTokenSource::Ideal) => TokenSource::Ideal,
            Some(RawTokenSource::CounterAfterAcquire) => TokenSource::CounterAfterAcquire,
            Some(RawTokenSource::LockQuorumMaxOnly) => TokenSource::LockQuorumMaxOnly,
            Some(RawTokenSource::LockQuorum) => TokenSource::LockQuorum,
        };
        let fenced = matches!(
            protection,
            Protection::FencingToken | Protection::FencingOnWritesOnly
        );
        if let Some(source) = &inner.token_source
            && token_source != TokenSource::Ideal
            && !fenced
        {
            return Err(ScenarioError::WrongType {
                at: self.at(source),
                message: "token_source needs protection = \"fencing-token\" or \"fencing-on-writes-only\": nothing else reads the token".to_owned(),
            });
        }
        Ok(Some(StorageSettings {
            protection,
            token_source,
            check_margin_ticks,
            max_delay,
            check: match inner.check.unwrap_or(RawCheckAndApply::Atomic) {
                RawCheckAndApply::Atomic => CheckAndApply::Atomic,
                RawCheckAndApply::TwoStep => CheckAndApply::TwoStep,
            },
        }))
    }

    /// `[liveness]`: the horizon, isolated rounds and the client whose acquisition counts.
    fn liveness(
        &self,
        raw: &RawScenario,
        lock: &LockSettings,
    ) -> Result<LivenessSettings, ScenarioError> {
        Ok(LivenessSettings {
            horizon_ticks: self.opt_range(
                &raw.liveness.horizon_ticks,
                3 * lock.params.ttl.0 as u32,
                1,
                200,
                "horizon_ticks",
            )?,
            isolated_rounds: raw.liveness.isolated_rounds.unwrap_or(false),
            client: match &raw.liveness.client {
                Some(c) => Some(
                    self.range(c, 1, u32::from(lock.clients), "liveness client (1-based)")? as u8
                        - 1,
                ),
                None => None,
            },
        })
    }

    /// `[expect]`'s verdicts and mechanism; a file must expect something, here or in
    /// `[simulate.expect]`.
    fn scenario_expect(
        &self,
        raw: &RawScenario,
        has_storage: bool,
        simulate: Option<&SimulateSettings>,
    ) -> Result<(Expectations, Vec<Ingredient>), ScenarioError> {
        let empty = BTreeMap::new();
        let table = raw.expect.as_ref().map_or(&empty, |t| t.get_ref());
        let (expect, mechanism) = self.expect(table, has_storage, true)?;
        if expect.is_empty() && simulate.is_none_or(|s| s.expect.is_empty()) {
            let at = match &raw.expect {
                Some(table) => self.at(table),
                None => Location::of_offset(self.file, self.text, 0),
            };
            return Err(ScenarioError::MissingKey {
                at,
                message: "[expect] names no property; add e.g. \"mutual exclusion\" = \"holds\""
                    .to_owned(),
            });
        }
        Ok((expect, mechanism))
    }

    /// Refuses a declared mechanism whose ingredient `scenario` does not grant.
    fn mechanism_granted(
        &self,
        expect: &Option<Spanned<BTreeMap<Spanned<String>, RawExpectValue>>>,
        scenario: &Scenario,
    ) -> Result<(), ScenarioError> {
        // A declared ingredient the file does not grant could never be necessary.
        if let Some(absent) = scenario.mechanism.iter().find(|i| !i.is_in(scenario)) {
            let key = expect
                .as_ref()
                .expect("a mechanism was declared in [expect]")
                .get_ref()
                .keys()
                .find(|k| k.get_ref() == "mechanism")
                .expect("a mechanism was declared");
            return Err(ScenarioError::Mechanism {
                at: self.at(key),
                message: format!(
                    "{:?} is not in this scenario (it grants: {})",
                    absent.name(),
                    names_or_none(&Ingredient::present(scenario))
                ),
            });
        }
        Ok(())
    }

    fn mechanism(
        &self,
        key: &Spanned<String>,
        names: &[String],
    ) -> Result<Vec<Ingredient>, ScenarioError> {
        let mut out = Vec::new();
        for name in names {
            let Some(ingredient) = Ingredient::from_name(name) else {
                let known: Vec<&str> = Ingredient::all().map(|i| i.name()).collect();
                return Err(ScenarioError::Mechanism {
                    at: self.at(key),
                    message: format!("unknown ingredient {name:?} (known: {})", known.join(", ")),
                });
            };
            if out.contains(&ingredient) {
                return Err(ScenarioError::Mechanism {
                    at: self.at(key),
                    message: format!("{name:?} is listed twice"),
                });
            }
            out.push(ingredient);
        }
        if out.is_empty() {
            return Err(ScenarioError::Mechanism {
                at: self.at(key),
                message: "the list is empty; leave mechanism out instead".to_owned(),
            });
        }
        Ok(out)
    }

    /// `[failover]`: the promotion delay, how many replicas n1 has, and how many of them the
    /// master waits for (`wait = true` is the first spelling of `wait = 1`); whether every
    /// node has a replica, and how many nodes may fail over.
    fn failover(&self, f: &RawFailover, nodes: u32) -> Result<FailoverSettings, ScenarioError> {
        let every_node = f.every_node.as_ref().is_some_and(|e| *e.get_ref());
        let replicas = match &f.replicas {
            Some(r) if every_node && *r.get_ref() != 1 => {
                return self.refuse(r, "with every_node = true each node has one replica");
            }
            Some(r) => self.range(r, 1, MAX_REPLICAS as u32, "replicas")? as u8,
            None => 1,
        };
        let failovers = match &f.failovers {
            None => 1,
            Some(k) if !every_node && *k.get_ref() > 1 => {
                return self.refuse(k, "only n1 has replicas, so it fails over once at most; every_node = true gives every node one");
            }
            // One failover a node at most: a promoted replica has no replica of its own.
            Some(k) => self.range(k, 1, if every_node { nodes } else { 1 }, "failovers")?,
        } as u8;
        let wait = match f.wait.as_ref().map(|w| (w, *w.get_ref())) {
            None | Some((_, RawWait::Flag(false))) => 0,
            Some((_, RawWait::Flag(true))) => 1,
            Some((_, RawWait::Count(k))) if k <= u32::from(replicas) => k as u8,
            Some((w, RawWait::Count(k))) => {
                return self.refuse(
                    w,
                    format!(
                        "wait = {k} waits for more replicas than n1 has (replicas = {replicas})"
                    ),
                );
            }
        };
        Ok(FailoverSettings {
            promotion_delay_ticks: f.promotion_delay_ticks.unwrap_or(0),
            replicas,
            wait,
            every_node,
            failovers,
        })
    }

    /// `failover`: whether the file has `[failover]` (which a shared token cannot join).
    fn lock(&self, raw: &RawScenario, failover: bool) -> Result<LockSettings, ScenarioError> {
        let l = &raw.lock;
        let nodes = self.opt_range(&l.nodes, 3, 1, MAX_MODEL_NODES as u32, "nodes")?;
        let clients = self.opt_range(&l.clients, 2, 1, MAX_MODEL_CLIENTS as u32, "clients")?;
        let quorums = self.quorums(l, nodes, clients)?;
        let (ttl_ticks, drift_ticks) = self.ttl_and_drift(raw)?;
        let round_timeout_ticks = self.opt_range(
            &l.round_timeout_ticks,
            1,
            1,
            MAX_TICKS,
            "round_timeout_ticks",
        )?;
        let attempts = self.opt_range(&l.attempts, 1, 1, 4, "attempts")?;
        let retry_delay_ticks =
            self.opt_range(&l.retry_delay_ticks, 0, 0, MAX_TICKS, "retry_delay_ticks")?;
        let extensions = self.extensions(l)?;
        let token = self.token(l, failover)?;
        let config = Config {
            drift: DriftPolicy::fixed(Millis(u64::from(drift_ticks))),
            round_timeout: Millis(u64::from(round_timeout_ticks)),
            // The least back-off: the model lets time pass between any two steps, which
            // covers every longer delay (the simulator draws its own).
            retry: RetryPolicy {
                attempts,
                delay_min: Millis(u64::from(retry_delay_ticks)),
                delay_max: Millis(u64::from(retry_delay_ticks)),
            },
            // The core keeps the first round's value for the retries; the shared value is
            // the model's entropy, not a choice of the core.
            retry_token: if token == Tokens::Reused {
                RetryToken::Kept
            } else {
                RetryToken::Fresh
            },
            ..lock_modes(l, Config::new(nodes as usize))
        };
        // The one resolution of the lock configuration, by the core's own rules.
        let params = config
            .params(Millis(u64::from(ttl_ticks)))
            .map_err(|reason| ScenarioError::Lock {
                at: self.top(),
                reason: reason.to_string(),
            })?;
        Ok(LockSettings {
            params,
            client_quorums: Vec::new(),
            clients: clients as u8,
            extensions,
            token,
        }
        .with_quorums(&quorums))
    }

    /// `[lock] quorum`: one count for every client, or an array of one per client, each in
    /// `1..=nodes` (default the majority); one value per client in client order.
    fn quorums(&self, l: &RawLock, nodes: u32, clients: u32) -> Result<Vec<usize>, ScenarioError> {
        let majority = quorum(nodes as usize) as u32;
        let one = match &l.quorum {
            None => majority,
            Some(spanned) => match spanned.get_ref() {
                RawQuorum::One(q) => {
                    self.range(&Spanned::new(spanned.span(), *q), 1, nodes, "quorum")?
                }
                RawQuorum::PerClient(values) => {
                    if values.len() != clients as usize {
                        return self.refuse(spanned, format!(
                                "quorum lists {} values, but there are {clients} clients: give one per client",
                                values.len()
                            ));
                    }
                    let mut quorums = Vec::with_capacity(values.len());
                    for (c, value) in values.iter().enumerate() {
                        let what = format!("quorum of c{}", c + 1);
                        quorums.push(self.range(value, 1, nodes, &what)? as usize);
                    }
                    return Ok(quorums);
                }
            },
        };
        Ok(vec![one as usize; clients as usize])
    }

    /// `[lock] ttl_ticks` and `drift_ticks`: a lease needs a TTL above its drift.
    fn ttl_and_drift(&self, raw: &RawScenario) -> Result<(u32, u32), ScenarioError> {
        let l = &raw.lock;
        let ttl_ticks = self.opt_range(&l.ttl_ticks, 10, 1, MAX_TICKS, "ttl_ticks")?;
        let drift_ticks = self.opt_range(&l.drift_ticks, 1, 0, MAX_TICKS, "drift_ticks")?;
        if ttl_ticks <= drift_ticks {
            let at = match (&l.ttl_ticks, &l.drift_ticks) {
                (Some(t), _) => self.at(t),
                (None, Some(d)) => self.at(d),
                (None, None) => self.top(),
            };
            return Err(ScenarioError::TtlNotAboveDrift {
                at,
                ttl_ticks,
                drift_ticks,
            });
        }
        Ok((ttl_ticks, drift_ticks))
    }

    /// `[lock] extensions`: at most 3, or unbounded.
    fn extensions(&self, l: &RawLock) -> Result<u8, ScenarioError> {
        Ok(match &l.extensions {
            None => 0,
            Some(e) => match *e.get_ref() {
                RawBound::Unbounded => UNBOUNDED_EXTENSIONS,
                RawBound::Ticks(n) if n > 3 => {
                    return self.refuse(
                        e,
                        format!("extensions is {n}, but must lie in 0..=3, or be \"unbounded\""),
                    );
                }
                RawBound::Ticks(n) => n as u8,
            },
        })
    }

    /// `[lock] token`: unique or shared, and never shared with a failover.
    fn token(&self, l: &RawLock, failover: bool) -> Result<Tokens, ScenarioError> {
        let token = l.token.as_ref().map_or(Tokens::Unique, |t| *t.get_ref());
        if let Some(at) = l
            .token
            .as_ref()
            .filter(|_| failover && token == Tokens::Shared)
        {
            // The replica's key is told by its token alone, which a shared value no longer
            // ties to one client.
            return self.refuse(at, "token = \"shared\" cannot be combined with [failover]");
        }
        Ok(token)
    }

    fn network(
        &self,
        raw: &RawScenario,
        lock: &LockSettings,
    ) -> Result<NetworkSettings, ScenarioError> {
        let all = NodeSet::first(lock.nodes());
        let mut reach = vec![all; lock.clients as usize];
        if let Some(spanned) = &raw.network.reach {
            let lists = spanned.get_ref();
            if lists.len() != lock.clients as usize {
                return Err(ScenarioError::TooManyFaults {
                    at: self.at(spanned),
                    message: format!(
                        "reach lists {} clients, but there are {}: give one list of nodes per client",
                        lists.len(),
                        lock.clients
                    ),
                });
            }
            for (client, list) in lists.iter().enumerate() {
                let mut set = NodeSet::EMPTY;
                for node in list.get_ref() {
                    let n = self.range(
                        node,
                        1,
                        u32::from(lock.params.node_count),
                        "a node in reach (1-based)",
                    )?;
                    set.insert(NodeId(n as u8 - 1));
                }
                reach[client] = set;
            }
        }
        let message_loss = self.opt_range(&raw.network.message_loss, 0, 0, 4, "message_loss")?;
        Ok(NetworkSettings {
            reach,
            message_loss: message_loss as u8,
        })
    }

    fn faults(
        &self,
        raw: &RawScenario,
        lock: &LockSettings,
    ) -> Result<FaultSettings, ScenarioError> {
        let f = &raw.faults;
        let pauses = match &f.pauses {
            None => None,
            Some(p) => Some(PauseSettings {
                count: self.opt_range(&p.count, 1, 0, 3, "pauses.count")? as u8,
                max: p.max_ticks.map_or(Bound::Unbounded, Bound::from),
            }),
        };
        let clock_jumps = self.clock_jumps(raw, lock)?;
        let crashes = self.crashes(raw, lock)?;
        let client_crashes = self.client_fault(
            f.client_crashes.as_ref(),
            ("client_crashes", "dies once"),
            lock,
        )?;
        let client_partitions = self.client_fault(
            f.client_partitions.as_ref(),
            ("client_partitions", "is cut off once"),
            lock,
        )?;
        Ok(FaultSettings {
            pauses,
            clock_jumps,
            crashes,
            client_crashes,
            client_partitions,
        })
    }

    /// `[faults.clock_jumps]`: how many, of whom, pinned to which process, and how far.
    fn clock_jumps(
        &self,
        raw: &RawScenario,
        lock: &LockSettings,
    ) -> Result<Option<JumpSettings>, ScenarioError> {
        Ok(match &raw.faults.clock_jumps {
            None => None,
            Some(j) => {
                let jump_ticks = self.jump_ticks(j)?;
                let count = self.jump_count(j, &jump_ticks)?;
                let target = j.target.unwrap_or(JumpTarget::Any);
                let index = match (&j.index, target) {
                    (None, _) => None,
                    (Some(i), JumpTarget::Node) => Some(
                        self.range(
                            i,
                            1,
                            u32::from(lock.params.node_count),
                            "clock_jumps.index (a node, 1-based)",
                        )? as u8
                            - 1,
                    ),
                    (Some(i), JumpTarget::Client) => Some(
                        self.range(
                            i,
                            1,
                            lock.clients as u32,
                            "clock_jumps.index (a client, 1-based)",
                        )? as u8
                            - 1,
                    ),
                    (Some(i), JumpTarget::Any) => {
                        return Err(ScenarioError::TooManyFaults {
                            at: self.at(i),
                            message: "clock_jumps.index pins a jump to one process; set target = \"node\" or \"client\" with it".to_owned(),
                        });
                    }
                };
                Some(JumpSettings {
                    count,
                    target,
                    index,
                    jump_ticks,
                })
            }
        })
    }

    /// `jump_ticks`: one size, or a list of distinct sizes, each nonzero and within range.
    fn jump_ticks(&self, j: &RawJumps) -> Result<JumpTicks, ScenarioError> {
        let Some(written) = &j.jump_ticks else {
            return Err(ScenarioError::MissingKey {
                at: self.top(),
                message: "[faults.clock_jumps] needs the size of a jump: jump_ticks = 2, or jump = \"50ms\"".to_owned(),
            });
        };
        let size = |size: i32, at: Location| {
            if size == 0 || size.unsigned_abs() > MAX_TICKS {
                return Err(ScenarioError::OutOfRange {
                    at,
                    message: format!(
                        "jump_ticks is {size}, but must be nonzero and within ±{MAX_TICKS}"
                    ),
                });
            }
            Ok(size)
        };
        let items = match written.get_ref() {
            RawSteps::One(one) => return size(*one, self.at(written)).map(JumpTicks::Every),
            RawSteps::List(items) => items,
        };
        if items.is_empty() || items.len() > 3 {
            return self.refuse(
                written,
                format!(
                    "jump_ticks lists {} sizes, but a run has 1..=3 jumps",
                    items.len()
                ),
            );
        }
        let mut sizes = Vec::with_capacity(items.len());
        for item in items {
            let value = size(*item.get_ref(), self.at(item))?;
            if sizes.contains(&value) {
                return self.refuse(item, format!(
                        "jump_ticks lists {value} twice: each size is used at most once, so list it once and raise count only with a single size"
                    ));
            }
            sizes.push(value);
        }
        Ok(JumpTicks::EachOnce(sizes))
    }

    /// `count`: 1 by default for one size, the list's length for a list, which it may not
    /// exceed (each size is used at most once).
    fn jump_count(&self, j: &RawJumps, jump_ticks: &JumpTicks) -> Result<u8, ScenarioError> {
        let count = match jump_ticks {
            JumpTicks::Every(_) => self.opt_range(&j.count, 1, 0, 3, "clock_jumps.count")?,
            JumpTicks::EachOnce(sizes) => {
                let listed = sizes.len() as u32;
                match &j.count {
                    Some(count) if *count.get_ref() > listed => {
                        return self.refuse(count, format!(
                                "clock_jumps.count is {}, but jump_ticks lists {listed} sizes and each is used at most once",
                                count.get_ref()
                            ));
                    }
                    Some(count) => *count.get_ref(),
                    None => listed,
                }
            }
        };
        Ok(count as u8)
    }

    /// `[faults.crashes]`: how many nodes crash, what they keep, and when they serve again.
    fn crashes(
        &self,
        raw: &RawScenario,
        lock: &LockSettings,
    ) -> Result<Option<CrashSettings>, ScenarioError> {
        Ok(match &raw.faults.crashes {
            None => None,
            Some(c) => {
                let count = self.opt_range(&c.count, 1, 0, 3, "crashes.count")?;
                if count > u32::from(lock.params.node_count) {
                    return Err(ScenarioError::TooManyFaults {
                        at: self.at(c.count.as_ref().expect("a count above 1 was written")),
                        message: format!("{count} crashes is more than the {} nodes", lock.nodes()),
                    });
                }
                Some(CrashSettings {
                    count: count as u8,
                    persistence: match c.persistence.unwrap_or(RawPersistence::None) {
                        RawPersistence::None => Persistence::None,
                        RawPersistence::FsyncAlways => Persistence::FsyncAlways,
                        RawPersistence::FsyncPeriodic => Persistence::FsyncPeriodic,
                    },
                    restart_delay_ticks: self.opt_range(
                        &c.restart_delay_ticks,
                        0,
                        0,
                        MAX_TICKS,
                        "restart_delay_ticks",
                    )?,
                    restart: c.restart.unwrap_or(true),
                    client_guard_ticks: self.opt_range(
                        &c.client_guard_ticks,
                        0,
                        0,
                        MAX_TICKS,
                        "client_guard_ticks",
                    )?,
                })
            }
        })
    }

    /// `[faults.client_crashes]` or `[faults.client_partitions]` (the `table`, one key
    /// set for both): how many clients crash for good or are cut off for good, which and when;
    /// `once` says why one client takes one such fault at most.
    fn client_fault(
        &self,
        raw: Option<&RawClientFaults>,
        (table, once): (&str, &str),
        lock: &LockSettings,
    ) -> Result<Option<ClientFaultSettings>, ScenarioError> {
        let Some(c) = raw else {
            return Ok(None);
        };
        let count = self.opt_range(&c.count, 1, 0, 3, &format!("{table}.count"))?;
        let plural = table.replace('_', " ");
        if count > u32::from(lock.clients) {
            return Err(ScenarioError::TooManyFaults {
                at: self.at(c.count.as_ref().expect("a count above 1 was written")),
                message: format!("{count} {plural} is more than the {} clients", lock.clients),
            });
        }
        let client = match &c.client {
            None => None,
            Some(i) => {
                let what = format!("{table}.client (a client, 1-based)");
                let index = self.range(i, 1, lock.clients as u32, &what)?;
                // A process dies once, and a client cut off from every node has nothing left
                // to lose: a second fault aimed at the same client has nothing to strike.
                if count > 1 {
                    return Err(ScenarioError::TooManyFaults {
                        at: self.at(i),
                        message: format!(
                            "{table}.client aims every fault at one client, which {once}, but count is {count}"
                        ),
                    });
                }
                Some(index as u8 - 1)
            }
        };
        let when = match c.when.unwrap_or(RawCrashWhen::Any) {
            RawCrashWhen::Any => CrashWhen::Any,
            RawCrashWhen::Holding => CrashWhen::Holding,
        };
        Ok(Some(ClientFaultSettings {
            count: count as u8,
            aim: ClientFaultAim { client, when },
        }))
    }
}

fn names_or_none(ingredients: &[Ingredient]) -> String {
    if ingredients.is_empty() {
        return "none".to_owned();
    }
    let names: Vec<&str> = ingredients.iter().map(|i| i.name()).collect();
    names.join(", ")
}

/// `config` with the `[lock]` table's choices of algorithm (each default the correct one):
/// `unlock`, `validity_check`, `release_after_failed_round`, `decision`, `contact`,
/// `extension_quorum`.
fn lock_modes(l: &RawLock, config: Config) -> Config {
    Config {
        unlock: match l.unlock.unwrap_or(RawUnlock::CompareAndDelete) {
            RawUnlock::CompareAndDelete => UnlockMode::CompareAndDelete,
            RawUnlock::Del => UnlockMode::PlainDel,
            RawUnlock::GetThenDel => UnlockMode::GetThenDel,
        },
        validity_check: match l.validity_check {
            None | Some(RawValidityCheck::Flag(true)) => ValidityCheck::On,
            Some(RawValidityCheck::Flag(false)) => ValidityCheck::Off,
            Some(RawValidityCheck::AcquisitionOnly) => ValidityCheck::AcquisitionOnly,
        },
        failed_round: if l.release_after_failed_round.unwrap_or(true) {
            FailedRound::Release
        } else {
            FailedRound::Keep
        },
        decision: match l.decision.unwrap_or(RawDecision::AtQuorum) {
            RawDecision::AtQuorum => RoundDecision::AtQuorum,
            RawDecision::AllReplies => RoundDecision::AllReplies,
        },
        contact: match l.contact.unwrap_or(RawContact::Multiplexed) {
            RawContact::Multiplexed => Contact::Multiplexed,
            RawContact::Sequential => Contact::Sequential,
        },
        extension_quorum: match l.extension_quorum.unwrap_or(RawExtensionQuorum::Majority) {
            RawExtensionQuorum::Majority => ExtensionQuorum::Majority,
            RawExtensionQuorum::AnyNode => ExtensionQuorum::AnyNode,
        },
        ..config
    }
}
