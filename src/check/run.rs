//! One run of the search: stateright's checkers or the depth-first engine, under the limits, to a report.

use std::collections::BTreeSet;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use stateright::{Checker, Expectation, HasDiscoveries, Model, Path};

use crate::model::{MAX_USER_INVARIANTS, Mode, RedlockModel, Step, World};
use crate::scenario::{Verdict, property};
use crate::search::{Bounded, DepthFirst, MAX_PROPERTIES, Shell};

use super::engine::{DISCRETE_TICKS, Engine, largest_constant};
use super::options::*;
use super::report::*;

// The stop switch forwards every property of the lock's model: the three built-in `always`
// properties, `lock acquired` and the user invariants.
const _: () = assert!(4 + MAX_USER_INVARIANTS <= MAX_PROPERTIES);

/// One [`Check::run`]: the budgets left and what the runs so far explored.
impl Check {
    /// Runs the checker until every property is settled or a limit is reached, and collects
    /// the verdicts and, unless [`Check::reach`] is off, how far each reaches.
    pub fn run(&self) -> Report {
        let mut report = self.run_verdicts();
        if self.reach {
            let start = Instant::now();
            self.attach_reach(&mut report);
            report.seconds += start.elapsed().as_secs_f64();
        }
        report
    }

    /// The verdicts alone.
    fn run_verdicts(&self) -> Report {
        if let Some(config) = &self.zones {
            return self.run_zones(config);
        }
        if largest_constant(&self.scenario) > DISCRETE_TICKS {
            return self.beyond_discrete();
        }
        let mut run = Run {
            check: self,
            shell: self.shell(),
            unique_states: 0,
            max_depth: 0,
            stopped: None,
        };
        let (mut properties, cutoff, split) = match run.cut_safety() {
            Some(settled) => (settled, true, false),
            None => match run.split_safety() {
                Some(settled) => (settled, false, true),
                None => (run.safety(self.build(Mode::Safety)), false, false),
            },
        };
        if self
            .scenario
            .expected(property::EVENTUALLY_ACQUIRED)
            .is_some()
        {
            properties.extend(run.liveness());
        }
        Report {
            file: self.scenario.file.clone(),
            name: self.scenario.name.clone(),
            nodes: self.scenario.lock.nodes(),
            clients: usize::from(self.scenario.lock.clients),
            unique_states: run.unique_states,
            max_depth: run.max_depth,
            seconds: run.shell.start().elapsed().as_secs_f64(),
            stopped: run.stopped,
            properties,
            cutoff,
            split,
            engine: Engine::Discrete,
        }
    }
}

impl Check {
    /// The report of a check the discrete engine must not run: every property incomplete.
    fn beyond_discrete(&self) -> Report {
        let mut names: Vec<&str> = self
            .build(Mode::Safety)
            .properties()
            .iter()
            .map(|p| p.name)
            .collect();
        if self
            .scenario
            .expected(property::EVENTUALLY_ACQUIRED)
            .is_some()
        {
            names.push(property::EVENTUALLY_ACQUIRED);
        }
        let properties = names
            .into_iter()
            .map(|name| {
                PropertyReport::bare(name, self.scenario.expected(name), Verdict::Incomplete)
            })
            .collect();
        Report {
            file: self.scenario.file.clone(),
            name: self.scenario.name.clone(),
            nodes: self.scenario.lock.nodes(),
            clients: usize::from(self.scenario.lock.clients),
            unique_states: 0,
            max_depth: 0,
            seconds: 0.0,
            stopped: Some(StopReason::DiscreteLimit),
            cutoff: false,
            split: false,
            properties,
            engine: Engine::Discrete,
        }
    }
}

struct Run<'a> {
    check: &'a Check,
    /// The limits and progress, over every walk of the check.
    shell: Shell<'a>,
    unique_states: usize,
    max_depth: usize,
    stopped: Option<StopReason>,
}

/// What one checker run found, with the paths already rebuilt (so the checker and its
/// fingerprint table can be dropped before the next run starts).
struct Explored {
    /// The model the paths belong to (descriptions and stories read its shape).
    model: RedlockModel,
    discoveries: Vec<(&'static str, Path<World, Step>)>,
    stopped: Option<StopReason>,
    /// Whether the run was cut at its state budget (`Search::Probe`).
    cut: bool,
    /// The unique states this run explored (already added to the check's count).
    unique_states: usize,
}

impl Explored {
    fn discovery(&self, name: &str) -> Option<&Path<World, Step>> {
        self.discoveries
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, path)| path)
    }
}

impl Run<'_> {
    /// The safety run with two clients and phantom refusals, when the cutoff applies and
    /// settles every property: an `always` property that holds, or whose shortest
    /// counterexample needs no refusal; `lock acquired` never reached (then no client can
    /// reach it), or reached and confirmed by a witness in the full model (a breadth-first
    /// search that stops at the first one). Anything else falls back to the full model
    /// (`None`); the states explored either way are counted.
    fn cut_safety(&mut self) -> Option<Vec<PropertyReport>> {
        let check = self.check;
        if !check.cutoff {
            return None;
        }
        let cut = check.build(Mode::Safety).with_phantom_clients()?;
        let reports = self.safety(cut);
        let settled = reports.iter().all(|r| {
            r.verdict != Verdict::Incomplete
                && !r.counterexample_not_shortest
                && !r
                    .steps
                    .as_ref()
                    .is_some_and(|steps| steps.iter().any(|s| matches!(s, Step::Refuse { .. })))
        });
        if !settled {
            return None;
        }
        let acquired = reports
            .iter()
            .any(|r| r.name == property::LOCK_ACQUIRED && r.verdict == Verdict::Holds);
        if acquired {
            let names = BTreeSet::from([property::LOCK_ACQUIRED]);
            let search = Search::Shortest {
                names,
                max_depth: 10_000,
            };
            let witness = self.explore(check.build(Mode::Safety), 1, search);
            witness.discovery(property::LOCK_ACQUIRED)?;
        }
        Some(reports)
    }

    /// The safety run of a scenario with three or more clients (which make the full model
    /// explode) split in two, when the storage properties hold on nodes that answer anything
    /// ([`RedlockModel::with_chaos_nodes`]): then they hold, and the other properties are
    /// settled without them, so that the search may stop as soon as those are, first on two
    /// clients ([`RedlockModel::with_fewer_clients`]), which settles a violation or a
    /// witness. `None` when the split does not apply or the storage properties do not
    /// hold there; the states explored are counted either way.
    fn split_safety(&mut self) -> Option<Vec<PropertyReport>> {
        let check = self.check;
        if !check.cutoff {
            return None;
        }
        let model = check.build(Mode::Safety);
        // With two clients the scenario's own model stays small, and its count stays the one
        // the Explorer shows.
        if model.client_count() < 3 {
            return None;
        }
        let chaos = model.with_chaos_nodes()?;
        let storage = self.safety(chaos);
        if storage.iter().any(|r| r.verdict != Verdict::Holds) {
            return None;
        }
        let lock = model.without_storage_properties();
        let mut others = None;
        if let Some(two) = lock.with_fewer_clients(2) {
            let reports = self.safety(two);
            // Only violations and witnesses carry over to more clients.
            let settled = reports.iter().all(|r| {
                let always = r.name != property::LOCK_ACQUIRED;
                (always && r.verdict == Verdict::Violated)
                    || (!always && r.verdict == Verdict::Holds)
            });
            if settled {
                // A run with more clients might break it in fewer steps.
                others = Some(
                    reports
                        .into_iter()
                        .map(|mut r| {
                            r.counterexample_not_shortest |= r.verdict == Verdict::Violated;
                            r
                        })
                        .collect(),
                );
            }
        }
        let others = match others {
            Some(others) => others,
            None => self.safety(lock),
        };
        let mut reports: Vec<PropertyReport> = others.into_iter().chain(storage).collect();
        let order: Vec<&str> = model.properties().iter().map(|p| p.name).collect();
        reports.sort_by_key(|r| order.iter().position(|name| *name == r.name));
        Some(reports)
    }

    fn safety(&mut self, model: RedlockModel) -> Vec<PropertyReport> {
        let check = self.check;
        let properties = model.properties();
        let always: BTreeSet<&'static str> = properties
            .iter()
            .filter(|p| p.expectation == Expectation::Always)
            .map(|p| p.name)
            .collect();
        let probe = match self.probe(&model, &properties) {
            ControlFlow::Break(reports) => return reports,
            ControlFlow::Continue(probe) => probe,
        };
        let verdicts = match check.strategy {
            Strategy::BreadthFirst => self.explore(model, check.threads, Search::BreadthFirst),
            Strategy::DepthFirst => self.explore(model, check.threads, Search::DepthFirst),
        };
        let mut shortest = probe;
        let violated: BTreeSet<&'static str> = always
            .iter()
            .copied()
            .filter(|name| verdicts.discovery(name).is_some())
            .filter(|name| {
                shortest
                    .as_ref()
                    .is_none_or(|probe| probe.discovery(name).is_none())
            })
            .collect();
        if check.strategy == Strategy::DepthFirst && !violated.is_empty() {
            // Depth first found a violation but maybe not the shortest: breadth first on one
            // thread finds the same counterexample plain breadth first would (the model's
            // `always` conditions keep the first violating state, and one thread visits states
            // in the same order), and the depth-first path bounds how deep it has to go.
            shortest = Some(self.shortest(&verdicts, &violated, shortest));
        } else if check.strategy == Strategy::BreadthFirst {
            // Plain breadth first: its own paths are the shortest.
            return self.reports(&properties, &verdicts, Some(&verdicts));
        }
        self.reports(&properties, &verdicts, shortest.as_ref())
    }

    /// Depth first's probe: breadth first on one thread within `probe_states`. Breaks with
    /// the reports when it settles everything it can; else continues with what it found
    /// (nothing without a probe).
    fn probe(
        &mut self,
        model: &RedlockModel,
        properties: &[stateright::Property<RedlockModel>],
    ) -> ControlFlow<Vec<PropertyReport>, Option<Explored>> {
        let check = self.check;
        if check.strategy == Strategy::DepthFirst && check.probe_states > 0 {
            let budget = check
                .max_states
                .map_or(check.probe_states, |max| max.min(check.probe_states));
            let mut explored = self.explore(model.fresh(), 1, Search::Probe { max_states: budget });
            let all_found = properties
                .iter()
                .all(|p| explored.discovery(p.name).is_some());
            if explored.cut && check.max_states.is_some_and(|max| max <= budget) {
                // The probe used the whole state limit: depth first would stop at once.
                explored.stopped = Some(StopReason::StateLimit);
                self.stopped = self.stopped.or(explored.stopped);
            }
            // Exhausted within the budget, stopped by a limit, or every property already
            // found: breadth first on one thread has settled everything it can.
            if !explored.cut || explored.stopped.is_some() || all_found {
                return ControlFlow::Break(self.reports(properties, &explored, Some(&explored)));
            }
            // Depth first starts again from the initial states and explores every state the
            // probe did. The probe is cut wherever its threads see the stop, a few hundred
            // states past the budget depending on timing: counting it would make the
            // check's count differ between runs of one file.
            self.unique_states -= explored.unique_states;
            return ControlFlow::Continue(Some(explored));
        }
        ControlFlow::Continue(None)
    }

    /// The shortest counterexamples of `violated`, which depth first found in `verdicts`,
    /// added to the probe's (`shortest`).
    fn shortest(
        &mut self,
        verdicts: &Explored,
        violated: &BTreeSet<&'static str>,
        shortest: Option<Explored>,
    ) -> Explored {
        let depth = violated
            .iter()
            .filter_map(|name| verdicts.discovery(name))
            .map(|path| path.clone().into_actions().len())
            .max()
            .unwrap_or(0);
        // stateright counts the initial state as depth 1 and skips states at the target.
        let search = Search::Shortest {
            names: violated.clone(),
            max_depth: depth + 2,
        };
        let found = self.explore(verdicts.model.fresh(), 1, search);
        // Keep the probe's counterexamples, add the new ones.
        match shortest {
            Some(mut probe) => {
                probe.discoveries.extend(
                    found
                        .discoveries
                        .into_iter()
                        .filter(|(name, _)| violated.contains(name)),
                );
                probe
            }
            None => found,
        }
    }

    /// The reports for `properties` from the run that settled them (`verdicts`) and the
    /// breadth-first run that holds their shortest counterexamples, if any.
    fn reports(
        &self,
        properties: &[stateright::Property<RedlockModel>],
        verdicts: &Explored,
        shortest: Option<&Explored>,
    ) -> Vec<PropertyReport> {
        let mut reports = Vec::new();
        for p in properties {
            // A property the probe settled stays settled when depth first stops at a limit.
            let discovered = verdicts
                .discovery(p.name)
                .or_else(|| shortest.and_then(|s| s.discovery(p.name)));
            let report = match (&p.expectation, discovered) {
                (Expectation::Sometimes, Some(_)) => self.settled(p.name, Verdict::Holds),
                (_, None) if verdicts.stopped.is_some() => {
                    self.settled(p.name, Verdict::Incomplete)
                }
                (Expectation::Sometimes, None) => self.settled(p.name, Verdict::Violated),
                (_, None) => self.settled(p.name, Verdict::Holds),
                (_, Some(path)) => match shortest.and_then(|s| s.discovery(p.name)) {
                    Some(short) => self.violated(&verdicts.model, p.name, short, false),
                    // The search for the shortest was stopped by a limit.
                    None => self.violated(&verdicts.model, p.name, path, true),
                },
            };
            reports.push(report);
        }
        reports
    }

    fn liveness(&mut self) -> Vec<PropertyReport> {
        // Breadth first on one thread, as it always was: the run is bounded by the horizon
        // and small, and stateright's `eventually` is judged at terminal states, which depth
        // first on several threads would reach in a different order.
        let model = self.check.build(Mode::Liveness);
        let properties = model.properties();
        let explored = self.explore(model, 1, Search::BreadthFirst);
        properties
            .iter()
            .map(|p| match explored.discovery(p.name) {
                Some(path) => self.violated(&explored.model, p.name, path, false),
                None if explored.stopped.is_some() => self.settled(p.name, Verdict::Incomplete),
                None => self.settled(p.name, Verdict::Holds),
            })
            .collect()
    }

    fn settled(&self, name: &str, verdict: Verdict) -> PropertyReport {
        PropertyReport::bare(name, self.check.scenario.expected(name), verdict)
    }

    fn violated(
        &self,
        model: &RedlockModel,
        name: &str,
        path: &Path<World, Step>,
        not_shortest: bool,
    ) -> PropertyReport {
        // The report's own story, told by the model that found the path (with the user's
        // invariants, so theirs is marked too); `check::story_path` chooses among stories.
        let path = path.clone().into_vec();
        let steps = model.describe_path(&path);
        let actions = path.iter().filter_map(|(_, step)| *step).collect();
        let story = crate::report::Story::from_path(model, name, &path);
        PropertyReport {
            steps: Some(actions),
            story: Some(story),
            counterexample: Some(steps),
            counterexample_not_shortest: not_shortest,
            ..self.settled(name, Verdict::Violated)
        }
    }

    /// Runs one checker over `model` under the check's limits, and collects its discoveries.
    fn explore(&mut self, model: RedlockModel, threads: usize, search: Search) -> Explored {
        let stop = Arc::new(AtomicBool::new(false));
        let model = Bounded::new(model, stop.clone());
        let builder = match search {
            // Depth first is the crate's own engine; the rest are stateright's.
            Search::DepthFirst => {
                let explored = self.watch(DepthFirst::spawn(model, threads), &stop, None);
                return self.stopped_by(explored);
            }
            _ => model.checker().threads(threads),
        };
        let explored = match search {
            Search::DepthFirst => unreachable!("started above"),
            Search::BreadthFirst => self.watch(builder.spawn_bfs(), &stop, None),
            // Not stateright's `target_state_count`, which counts generated successors, not
            // unique states.
            Search::Probe { max_states } => {
                self.watch(builder.spawn_bfs(), &stop, Some(max_states))
            }
            Search::Shortest { names, max_depth } => self.watch(
                builder
                    .finish_when(HasDiscoveries::AllOf(names))
                    .target_max_depth(max_depth)
                    .spawn_bfs(),
                &stop,
                None,
            ),
        };
        self.stopped_by(explored)
    }

    /// Records why `explored` stopped, if it did, as the check's reason.
    fn stopped_by(&mut self, explored: Explored) -> Explored {
        self.stopped = self.stopped.or(explored.stopped);
        explored
    }

    /// Joins `checker`, reporting progress and enforcing the limits while it runs; with
    /// `cut_at`, the run is also cut (not stopped: nothing is incomplete because of it) once it
    /// has that many unique states.
    fn watch<R: Running>(
        &mut self,
        checker: R,
        stop: &AtomicBool,
        cut_at: Option<usize>,
    ) -> Explored {
        let check = self.check;
        let budget = check
            .max_states
            .map(|max| max.saturating_sub(self.unique_states));
        let mut cut = false;
        let watching = self.shell.watching() || cut_at.is_some();
        let mut stopped = None;
        // Eventually discoveries taken before the stop: after it, states whose successors were
        // cut off look terminal, and stateright would report false `eventually` violations.
        let mut before_stop: Option<Vec<(&'static str, Path<World, Step>)>> = None;
        if watching {
            let poll = Duration::from_millis(5).min(check.progress_interval);
            while !checker.is_done() {
                // Poll finely, so that a short run is not stretched to the polling period.
                std::thread::sleep(poll);
                let count = checker.unique_state_count();
                self.shell.report(self.unique_states + count);
                if stopped.is_some() || cut {
                    continue;
                }
                if cut_at.is_some_and(|at| checker.unique_state_count() >= at) {
                    cut = true;
                    stop.store(true, Ordering::Relaxed);
                    continue;
                }
                stopped = self.shell.limit(count, budget).map(StopReason::from);
                if stopped.is_some() {
                    before_stop = Some(checker.eventually_discovered());
                    // From now on no state has successors: the threads drain what they hold
                    // (checking it, so those verdicts stay sound) and finish.
                    stop.store(true, Ordering::Relaxed);
                }
            }
        }
        let ran = checker.finish(stop);
        self.unique_states += ran.unique_states;
        self.max_depth = self.max_depth.max(ran.max_depth.saturating_sub(1));
        let mut discoveries = ran.discoveries;
        if before_stop.is_some() {
            discoveries.retain(|(name, _)| !ran.eventually.contains(name));
        }
        discoveries.extend(before_stop.unwrap_or_default());
        Explored {
            model: ran.model,
            discoveries,
            stopped,
            cut,
            unique_states: ran.unique_states,
        }
    }
}

/// What a finished checker run found, its paths rebuilt.
struct Ran {
    model: RedlockModel,
    unique_states: usize,
    /// stateright's count: an initial state has depth 1.
    max_depth: usize,
    discoveries: Vec<(&'static str, Path<World, Step>)>,
    /// The names of the model's `eventually` properties.
    eventually: Vec<&'static str>,
}

/// A checker run in progress, as [`Run::watch`] sees it: stateright's checkers, and the
/// crate's own depth-first engine.
trait Running {
    fn is_done(&self) -> bool;
    fn unique_state_count(&self) -> usize;
    /// The `eventually` properties found so far, with their paths.
    fn eventually_discovered(&self) -> Vec<(&'static str, Path<World, Step>)>;
    /// Waits for the run's threads, turns `stop` off again (paths are rebuilt by replaying the
    /// model's actions, which the switch would hide) and collects what the run found.
    fn finish(self, stop: &AtomicBool) -> Ran;
}

impl<C: Checker<Bounded<RedlockModel>>> Running for C {
    fn is_done(&self) -> bool {
        Checker::is_done(self)
    }

    fn unique_state_count(&self) -> usize {
        Checker::unique_state_count(self)
    }

    fn eventually_discovered(&self) -> Vec<(&'static str, Path<World, Step>)> {
        self.model()
            .properties()
            .iter()
            .filter(|p| p.expectation == Expectation::Eventually)
            .filter_map(|p| self.discovery(p.name).map(|path| (p.name, path)))
            .collect()
    }

    fn finish(self, stop: &AtomicBool) -> Ran {
        let checker = self.join();
        stop.store(false, Ordering::Relaxed);
        let properties = checker.model().properties();
        Ran {
            model: checker.model().inner().clone(),
            unique_states: checker.unique_state_count(),
            max_depth: checker.max_depth(),
            discoveries: properties
                .iter()
                .filter_map(|p| checker.discovery(p.name).map(|path| (p.name, path)))
                .collect(),
            eventually: properties
                .iter()
                .filter(|p| p.expectation == Expectation::Eventually)
                .map(|p| p.name)
                .collect(),
        }
    }
}

impl Running for DepthFirst<Bounded<RedlockModel>> {
    fn is_done(&self) -> bool {
        DepthFirst::is_done(self)
    }

    fn unique_state_count(&self) -> usize {
        DepthFirst::unique_state_count(self)
    }

    fn eventually_discovered(&self) -> Vec<(&'static str, Path<World, Step>)> {
        // The engine refuses `eventually` properties.
        Vec::new()
    }

    fn finish(self, stop: &AtomicBool) -> Ran {
        let finished = self.join();
        stop.store(false, Ordering::Relaxed);
        let properties = finished.model().properties();
        Ran {
            model: finished.model().inner().clone(),
            unique_states: finished.unique_states,
            max_depth: finished.max_depth,
            discoveries: properties
                .iter()
                .filter_map(|p| finished.discovery(p.name).map(|path| (p.name, path)))
                .collect(),
            eventually: Vec::new(),
        }
    }
}

/// Which stateright checker one run uses.
enum Search {
    DepthFirst,
    BreadthFirst,
    /// Breadth first on one thread until every property has a discovery or `max_states`
    /// states are explored.
    Probe {
        max_states: usize,
    },
    /// Breadth first on one thread until every named property has a counterexample, never
    /// deeper than `max_depth` (stateright's count: the initial state is depth 1).
    Shortest {
        names: BTreeSet<&'static str>,
        max_depth: usize,
    },
}
