//! Parameter synthesis: where a property holds for every value of a scenario's timing keys,
//! held to the zone engine's verdict point by point. Outside the regions the synthesis
//! returns, the property must hold at every point, and inside them it must break: both are
//! its proof, so a failure here is a soundness bug.

mod common;

use redlock_lab::check::{Check, Engine, FreeKey, Synthesis};
use redlock_lab::property::Property;
use redlock_lab::scenario::{Scenario, Verdict};
use redlock_lab::sweep::synthesize_keys;

/// A scenario file `advise` would write, small: three nodes, two clients, a TTL of 10, a
/// drift of 2, clock errors of 1, and `$tables`.
macro_rules! scenario {
    ($name:literal, $tables:literal) => {
        concat!(
            "name = \"",
            $name,
            "\"\ntitle = \"",
            $name,
            "\"\nclaim = \"",
            $name,
            "\"\nsource = \"derived\"\nprose = \"",
            $name,
            "\"\n",
            "[lock]\nnodes = 3\nclients = 2\nttl_ticks = 10\ndrift_ticks = 2\n",
            "[clock]\nnode_error_ticks = 1\nclient_error_ticks = 1\n",
            $tables
        )
    };
}

/// The drift family: clock errors alone.
const DRIFT: &str = scenario!("drift", "[expect]\n\"mutual exclusion\" = \"holds\"\n");

/// Zones a synthesis here may explore.
const LIMIT: usize = 2_000_000;

const DRIFT_KEYS: [&str; 4] = [
    "lock.ttl_ticks",
    "lock.drift_ticks",
    "clock.node_error_ticks",
    "clock.client_error_ticks",
];

/// The zone engine's verdict on `property` in `text` with `keys` set to `point`.
fn verdict_at(text: &str, keys: &[&str], point: &[i64], property: Property) -> Verdict {
    let mut text = text.to_owned();
    for (key, value) in keys.iter().zip(point) {
        text = set(&text, key, *value);
    }
    let scenario = Scenario::from_str("point", &text).unwrap();
    let report = Check::new(&scenario)
        .engine(Engine::Zones)
        .unwrap()
        .reach(false)
        .run();
    report.property(property.name()).unwrap().verdict
}

/// `text` with the dotted `key` set to `value`.
fn set(text: &str, key: &str, value: i64) -> String {
    let mut table: toml::Table = toml::from_str(text).unwrap();
    let parts: Vec<&str> = key.split('.').collect();
    let mut here = &mut table;
    for part in &parts[..parts.len() - 1] {
        here = here
            .entry((*part).to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            .as_table_mut()
            .unwrap();
    }
    here.insert(
        parts[parts.len() - 1].to_owned(),
        toml::Value::Integer(value),
    );
    toml::to_string(&table).unwrap()
}

/// Every point of `points` in the synthesis's domain, against the zone engine: each is
/// either proved to hold or proved to break, and the engine must agree. Returns how many
/// points were compared.
fn compare(
    synthesis: &Synthesis,
    text: &str,
    keys: &[&str],
    property: Property,
    points: impl Iterator<Item = Vec<i64>>,
) -> usize {
    let mut compared = 0;
    for point in points.filter(|p| synthesis.covers(p)) {
        let broken = synthesis.proved_broken_at(property, &point);
        assert_ne!(broken, synthesis.proved_at(property, &point), "{point:?}");
        let expected = if broken {
            Verdict::Violated
        } else {
            Verdict::Holds
        };
        assert_eq!(
            verdict_at(text, keys, &point, property),
            expected,
            "at {point:?}"
        );
        compared += 1;
    }
    compared
}

/// The regions of `property`, written with `names`.
fn written(synthesis: &Synthesis, property: Property, names: &[&str]) -> Vec<String> {
    let names: Vec<String> = names.iter().map(|&n| n.to_owned()).collect();
    synthesis
        .regions(property)
        .unwrap()
        .iter()
        .map(|region| {
            let parts: Vec<String> = region
                .iter()
                .map(|i| i.display(&names).to_string())
                .collect();
            parts.join(" and ")
        })
        .collect()
}

#[test]
fn the_drift_allowance_is_proved_for_every_value_and_exact() {
    let synthesis = synthesize_keys("drift", DRIFT, &DRIFT_KEYS, LIMIT, None).unwrap();
    let names = ["ttl", "drift", "ε_n", "ε_c"];
    let property = Property::MutualExclusion;
    assert_eq!(written(&synthesis, property, &names), ["drift < ε_n + ε_c"]);
    let points = [3i64, 5, 8].into_iter().flat_map(|ttl| {
        (0..ttl).flat_map(move |drift| {
            (0..3).flat_map(move |en| (0..3).map(move |ec| vec![ttl, drift, en, ec]))
        })
    });
    let compared = compare(&synthesis, DRIFT, &DRIFT_KEYS, property, points);
    assert!(compared > 100, "{compared} points");
}

/// A node's forward jump as a key too: the drift must cover both clock errors and the jump.
/// A client's backward jump is a key below zero, and the drift must cover its size.
#[test]
fn a_jump_is_a_key_like_the_others() {
    let jumped = DRIFT.replace(
        "[expect]",
        "[faults.clock_jumps]\ntarget = \"node\"\njump_ticks = 2\n\n[expect]",
    );
    let keys = [
        DRIFT_KEYS[1],
        DRIFT_KEYS[2],
        DRIFT_KEYS[3],
        "faults.clock_jumps.jump_ticks",
    ];
    let synthesis = synthesize_keys("jump", &jumped, &keys, LIMIT, None).unwrap();
    let property = Property::MutualExclusion;
    let regions = written(&synthesis, property, &["drift", "ε_n", "ε_c", "J"]);
    assert_eq!(regions, ["drift < ε_n + ε_c + J"]);
    let points = (0..5).flat_map(|drift| {
        (0..2).flat_map(move |en| {
            (0..2).flat_map(move |ec| (1..4).map(move |jump| vec![drift, en, ec, jump]))
        })
    });
    let compared = compare(&synthesis, &jumped, &keys, property, points);
    assert!(compared > 30, "{compared} points");
    let backward = jumped.replace(
        "target = \"node\"\njump_ticks = 2",
        "target = \"client\"\njump_ticks = -2",
    );
    let synthesis = synthesize_keys("back", &backward, &keys, LIMIT, None).unwrap();
    let regions = written(&synthesis, property, &["drift", "ε_n", "ε_c", "J"]);
    assert_eq!(regions, ["drift + J < ε_n + ε_c"]);
    assert!(!synthesis.covers(&[2, 1, 1, 1]), "{:?}", synthesis.domain);
    let points = (0..5).flat_map(|drift| {
        (0..2).flat_map(move |en| {
            (0..2).flat_map(move |ec| (1..4).map(move |jump| vec![drift, en, ec, -jump]))
        })
    });
    let compared = compare(&synthesis, &backward, &keys, property, points);
    assert!(compared > 30, "{compared} points");
}

/// The regions speak of the keys, not of the values they were measured at: a TTL of 10 s in
/// milliseconds gives the same inequalities as a TTL of 10 ticks.
#[test]
fn the_regions_do_not_depend_on_the_values_they_start_from() {
    let large = DRIFT
        .replace("ttl_ticks = 10", "ttl_ticks = 10000")
        .replace("drift_ticks = 2", "drift_ticks = 102")
        .replace("error_ticks = 1", "error_ticks = 50");
    let small = synthesize_keys("drift", DRIFT, &DRIFT_KEYS, LIMIT, None).unwrap();
    let large = synthesize_keys("drift", &large, &DRIFT_KEYS, LIMIT, None).unwrap();
    assert_eq!(small.breaks, large.breaks);
    assert_eq!(small.zones, large.zones);
}

/// The restart scenario `advise` writes, small: one crash without persistence.
const RESTART: &str = scenario!(
    "restart",
    r#"
[faults.crashes]
count = 1
persistence = "none"
restart_delay_ticks = 10
client_guard_ticks = 0

[expect]
"mutual exclusion" = "holds"
"#
);

const RESTART_KEYS: [&str; 4] = [
    "lock.drift_ticks",
    "clock.node_error_ticks",
    "clock.client_error_ticks",
    "faults.crashes.restart_delay_ticks",
];

#[test]
fn the_restart_delay_is_proved_for_every_value_and_exact() {
    let synthesis = synthesize_keys("restart", RESTART, &RESTART_KEYS, LIMIT, None).unwrap();
    let names = ["drift", "ε_n", "ε_c", "R"];
    let property = Property::MutualExclusion;
    // The TTL (10) is not a key here: it stays a number.
    assert_eq!(
        written(&synthesis, property, &names),
        ["drift < ε_n + ε_c", "drift + R ≤ ε_n + ε_c + 9"]
    );
    let points = (0..4).flat_map(|drift| {
        (0..3).flat_map(move |en| {
            (0..3).flat_map(move |ec| [1, 5, 8, 9, 10, 11, 12].map(|r| vec![drift, en, ec, r]))
        })
    });
    let compared = compare(&synthesis, RESTART, &RESTART_KEYS, property, points);
    assert!(compared > 100, "{compared} points");
}

/// `synthesize_keys` with the zone engine's merging switched `on` or off.
fn synthesized(text: &str, keys: &[&str], merging: bool) -> Synthesis {
    let scenario = |text: &str| Scenario::from_str("family", text).unwrap();
    let number = |key: &str| {
        let table: toml::Table = toml::from_str(text).unwrap();
        let mut value = &toml::Value::Table(table);
        for part in key.split('.') {
            value = &value[part];
        }
        value.as_integer().unwrap()
    };
    let free: Vec<FreeKey> = (keys.iter())
        .map(|&key| FreeKey {
            key: key.to_owned(),
            value: number(key),
            stepped: scenario(&set(text, key, number(key) + 1)),
            lowered: (number(key) > 0).then(|| scenario(&set(text, key, number(key) - 1))),
        })
        .collect();
    let at = |point: &[i64]| {
        let edited = (keys.iter().zip(point)).fold(text.to_owned(), |t, (k, v)| set(&t, k, *v));
        Scenario::from_str("family", &edited).ok()
    };
    Check::new(&scenario(text))
        .max_states(LIMIT)
        .zone_merging(merging)
        .synthesize(&free, &at)
        .unwrap()
}

/// Merging two parametric zones adds no valuation of the clocks at any value of the keys, so
/// the regions are the same with it and without it; with it, the exploration stores fewer
/// zones.
#[test]
fn merging_zones_changes_no_region() {
    for (text, keys, names) in [
        (
            RESTART,
            &RESTART_KEYS[..],
            &["drift", "ε_n", "ε_c", "R"][..],
        ),
        (MARGIN, &MARGIN_KEYS[2..], &["ε_c", "M", "P"][..]),
    ] {
        let (merged, plain) = (
            synthesized(text, keys, true),
            synthesized(text, keys, false),
        );
        let mut broken = 0;
        for property in [Property::MutualExclusion, Property::StorageSafety] {
            let regions = |s: &Synthesis| s.regions(property).map(|_| written(s, property, names));
            assert_eq!(regions(&merged), regions(&plain), "{property:?} in {text}");
            broken += regions(&merged).map_or(0, |r| r.len());
        }
        assert!(broken > 0, "no region breaks in {text}");
        assert!(
            merged.zones < plain.zones,
            "{} ≥ {}",
            merged.zones,
            plain.zones
        );
    }
}

/// The check-margin scenario `advise` writes, small: a pause between the check and the
/// write, and a delayed write.
const MARGIN: &str = scenario!(
    "margin",
    r#"
[storage]
protection = "none"
check_margin_ticks = 4
max_delay_ticks = 1

[faults.pauses]
count = 1
max_ticks = 2

[expect]
"mutual exclusion" = "holds"
"storage safety" = "holds"
"#
);

const MARGIN_KEYS: [&str; 5] = [
    "lock.drift_ticks",
    "clock.node_error_ticks",
    "clock.client_error_ticks",
    "storage.check_margin_ticks",
    "faults.pauses.max_ticks",
];

/// Kleppmann's boundary, for every value: with a pause between the check and the write and a
/// delayed write, storage safety breaks exactly when `drift + M ≤ ε_n + ε_c + P + Δ` (the
/// pause `P` is a key too, the delay `Δ` is 1 here): the margin must cover the pause, the
/// delay and both clock errors, less the drift allowance already taken off the lease.
#[test]
fn the_check_margin_is_kleppmanns_boundary_on_both_sides() {
    let synthesis = synthesize_keys("margin", MARGIN, &MARGIN_KEYS, LIMIT, None).unwrap();
    let property = Property::StorageSafety;
    let names = ["drift", "ε_n", "ε_c", "M", "P"];
    assert_eq!(
        written(&synthesis, property, &names),
        ["drift + M ≤ ε_n + ε_c + P + 1"]
    );
    let points = (0..3).flat_map(|drift| {
        (0..2).flat_map(move |en| {
            (0..2).flat_map(move |ec| {
                [1, 3, 4, 6]
                    .into_iter()
                    .flat_map(move |m| [1, 3].map(|pause| vec![drift, en, ec, m, pause]))
            })
        })
    });
    let compared = compare(&synthesis, MARGIN, &MARGIN_KEYS, property, points);
    assert!(compared > 50, "{compared} points");
    assert!(synthesis.proved_broken_at(property, &[2, 1, 1, 3, 2]));
    assert!(synthesis.proved_at(property, &[2, 1, 1, 4, 2]));
}

/// Every key of Kleppmann's boundary free at once, the TTL, the pause and the delay too, at
/// one node (where the exploration takes about a thousand zones): storage safety breaks
/// exactly when `drift + M ≤ ε_n + ε_c + P + Δ`.
#[test]
fn the_check_margin_with_every_key_free_is_kleppmanns_inequality() {
    let one_node = MARGIN.replace("nodes = 3", "nodes = 1");
    let keys = [
        "lock.ttl_ticks",
        MARGIN_KEYS[0],
        MARGIN_KEYS[1],
        MARGIN_KEYS[2],
        MARGIN_KEYS[3],
        MARGIN_KEYS[4],
        "storage.max_delay_ticks",
    ];
    let synthesis = synthesize_keys("margin", &one_node, &keys, LIMIT, None).unwrap();
    let property = Property::StorageSafety;
    let names = ["ttl", "drift", "ε_n", "ε_c", "M", "P", "Δ"];
    assert_eq!(
        written(&synthesis, property, &names),
        ["drift + M ≤ ε_n + ε_c + P + Δ"]
    );
    let points = [8i64, 10].into_iter().flat_map(|ttl| {
        (0..3).flat_map(move |drift| {
            [(0, 0), (1, 1), (1, 0)]
                .into_iter()
                .flat_map(move |(en, ec)| {
                    [(1, 1), (2, 1), (1, 2)]
                        .into_iter()
                        .flat_map(move |(pause, delay)| {
                            let boundary = en + ec + pause + delay - drift;
                            [boundary, boundary + 1]
                                .map(|m| vec![ttl, drift, en, ec, m, pause, delay])
                        })
                })
        })
    });
    let compared = compare(&synthesis, &one_node, &keys, property, points);
    assert!(compared > 50, "{compared} points");
}

/// With the TTL free too: the catalog's
/// inequality, `restart_delay ≥ ttl − drift + ε_n + ε_c`, proved on both sides, and held to
/// the zone engine on each side of it at many points.
#[test]
fn the_restart_delay_with_a_free_ttl_is_the_catalogs_inequality() {
    let keys = [
        "lock.ttl_ticks",
        RESTART_KEYS[0],
        RESTART_KEYS[1],
        RESTART_KEYS[2],
        RESTART_KEYS[3],
    ];
    let synthesis = synthesize_keys("restart", RESTART, &keys, LIMIT, None).unwrap();
    let names = ["ttl", "drift", "ε_n", "ε_c", "R"];
    let property = Property::MutualExclusion;
    assert_eq!(
        written(&synthesis, property, &names),
        ["drift < ε_n + ε_c", "drift + R < ttl + ε_n + ε_c"]
    );
    let points = [5i64, 8].into_iter().flat_map(|ttl| {
        (0..3).flat_map(move |drift| {
            (0..2).flat_map(move |en| {
                (0..2).flat_map(move |ec| {
                    let boundary = ttl - drift + en + ec;
                    [boundary - 1, boundary].map(|r| vec![ttl, drift, en, ec, r])
                })
            })
        })
    });
    let compared = compare(&synthesis, RESTART, &keys, property, points);
    assert!(compared > 30, "{compared} points");
}

/// The forms are measured around the file's values: a key whose zero is another automaton
/// (a restart delay or a client guard of zero is no guard at all) is at least one in the
/// domain, so neither side speaks for the other automaton.
#[test]
fn a_key_whose_zero_removes_a_guard_stays_at_one_or_more() {
    let guarded = RESTART.replace("client_guard_ticks = 0", "client_guard_ticks = 3");
    let keys = [
        "lock.drift_ticks",
        "faults.crashes.restart_delay_ticks",
        "faults.crashes.client_guard_ticks",
    ];
    let synthesis = synthesize_keys("guard", &guarded, &keys, LIMIT, None).unwrap();
    assert!(synthesis.covers(&[2, 10, 3]));
    assert!(synthesis.covers(&[2, 1, 1]));
    assert!(!synthesis.covers(&[2, 10, 0]), "{:?}", synthesis.domain);
    assert!(!synthesis.covers(&[2, 0, 3]), "{:?}", synthesis.domain);
}

/// A search cut short is no proof: the synthesis says so instead of returning what it found.
#[test]
fn a_synthesis_cut_short_is_refused() {
    let error = synthesize_keys("restart", RESTART, &RESTART_KEYS, 100, None).unwrap_err();
    assert!(error.to_string().contains("after 100 zones"), "{error}");
}

/// A free key whose file value sits where the core's arithmetic bends (a capped round
/// timeout), or whose step adds a guard (a client guard of zero), would be measured wrong on
/// one side: both are refused by name.
#[test]
fn a_key_at_a_bend_or_a_guard_that_comes_and_goes_is_refused() {
    let capped = DRIFT.replace(
        "drift_ticks = 2",
        "drift_ticks = 2\nround_timeout_ticks = 8",
    );
    let error = synthesize_keys("capped", &capped, &DRIFT_KEYS, LIMIT, None).unwrap_err();
    assert!(
        error.to_string().contains("capped at the validity"),
        "{error}"
    );
    // The restart file has a delay and no client guard: one tick of guard adds one.
    let error = synthesize_keys(
        "guard",
        RESTART,
        &["faults.crashes.client_guard_ticks"],
        LIMIT,
        None,
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("changes the automaton"),
        "{error}"
    );
}

/// A family of files whose boundary `docs/advise.md` states: its words, its file, its free
/// keys with the names the inequality uses, and the property it bounds.
struct Boundary {
    label: &'static str,
    text: String,
    keys: &'static [&'static str],
    names: &'static [&'static str],
    property: Property,
}

/// The families behind `advise`'s figures, each with every fault that faces its figure: the
/// drift with one and with two node clock jumps (jumps add up), the restart delay with the
/// TTL free, and the check margin with both clock errors and a node clock jump.
fn boundaries() -> Vec<Boundary> {
    let node_jump = |text: &str, count: u32| {
        text.replace(
            "[expect]",
            &format!(
                "[faults.clock_jumps]\ncount = {count}\ntarget = \"node\"\njump_ticks = 1\n\n[expect]"
            ),
        )
    };
    const JUMP_KEYS: &[&str] = &[
        "lock.drift_ticks",
        "clock.node_error_ticks",
        "clock.client_error_ticks",
        "faults.clock_jumps.jump_ticks",
    ];
    const JUMP_NAMES: &[&str] = &["drift", "ε_n", "ε_c", "J"];
    vec![
        Boundary {
            label: "The drift allowance, with one node clock jump of `J`",
            text: node_jump(DRIFT, 1),
            keys: JUMP_KEYS,
            names: JUMP_NAMES,
            property: Property::MutualExclusion,
        },
        Boundary {
            label: "The drift allowance, with two node clock jumps of `J` in one lease",
            text: node_jump(DRIFT, 2),
            keys: JUMP_KEYS,
            names: JUMP_NAMES,
            property: Property::MutualExclusion,
        },
        Boundary {
            label: "The restart delay `R` after a crash without persistence, the TTL free",
            text: RESTART.to_owned(),
            keys: &[
                "lock.ttl_ticks",
                "lock.drift_ticks",
                "clock.node_error_ticks",
                "clock.client_error_ticks",
                "faults.crashes.restart_delay_ticks",
            ],
            names: &["ttl", "drift", "ε_n", "ε_c", "R"],
            property: Property::MutualExclusion,
        },
        Boundary {
            label: "The restart delay `R`, with a node clock jump of `J`",
            text: node_jump(RESTART, 1),
            keys: &[
                "lock.drift_ticks",
                "clock.node_error_ticks",
                "clock.client_error_ticks",
                "faults.crashes.restart_delay_ticks",
                "faults.clock_jumps.jump_ticks",
            ],
            names: &["drift", "ε_n", "ε_c", "R", "J"],
            property: Property::MutualExclusion,
        },
        Boundary {
            label: "The check margin `M`, with a pause `P` before the write, the write delayed by \
                    `Δ`, and a node clock jump of `J`",
            text: node_jump(&MARGIN.replace("nodes = 3", "nodes = 1"), 1),
            keys: &[
                "lock.drift_ticks",
                "clock.node_error_ticks",
                "clock.client_error_ticks",
                "storage.check_margin_ticks",
                "faults.pauses.max_ticks",
                "storage.max_delay_ticks",
                "faults.clock_jumps.jump_ticks",
            ],
            names: &["drift", "ε_n", "ε_c", "M", "P", "Δ", "J"],
            property: Property::StorageSafety,
        },
    ]
}

/// The block of `docs/advise.md` that states the boundaries: each family's regions as the
/// synthesis writes them, and the model they were proved on, read from its file.
fn boundaries_block() -> String {
    let mut block = String::from(
        "\nWhere each property breaks, for every value of the keys at once, as the parameter \
         synthesis proves it (`tests/synthesis.rs` writes these lines from its result and holds \
         both sides of each to the zone engine at many points; the keys are whole ticks, every \
         one of them at least zero):\n\n",
    );
    for family in boundaries() {
        let synthesis = synthesize_keys("family", &family.text, family.keys, LIMIT, None)
            .unwrap_or_else(|e| panic!("{}: {e}", family.label));
        let regions = written(&synthesis, family.property, family.names);
        // Both sides, at points around the file's values (a fixed walk: the same each run).
        let points = (0..24u64).map(|i| {
            (synthesis.base.iter().enumerate())
                .map(|(k, &base)| {
                    let step = (i * 7 + k as u64 * 3 + i / 3) % 4;
                    (base - 1 + step as i64).max(0)
                })
                .collect::<Vec<i64>>()
        });
        let compared = compare(
            &synthesis,
            &family.text,
            family.keys,
            family.property,
            points,
        );
        assert!(compared >= 8, "{}: {compared} points", family.label);
        let scenario = Scenario::from_str("family", &family.text).unwrap();
        let ttl = if family.keys.contains(&"lock.ttl_ticks") {
            String::new()
        } else {
            format!(", ttl = {}", scenario.lock.params.ttl.as_u64())
        };
        let where_ = if regions.is_empty() {
            "nowhere".to_owned()
        } else {
            regions
                .iter()
                .map(|r| format!("`{r}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        };
        block.push_str(&format!(
            "- {} ({} × {}{ttl}): {} breaks exactly where {where_}.\n",
            family.label,
            scenario.lock.nodes(),
            scenario.lock.clients,
            family.property.name(),
        ));
    }
    block.push('\n');
    block
}

/// `docs/advise.md` states each boundary as the synthesis proves it, never by hand
/// (`UPDATE_EXPECT=1` rewrites the block).
#[test]
fn the_docs_state_each_boundary_as_the_synthesis_proves_it() {
    let markers = (
        "<!-- boundaries: tests/synthesis.rs -->",
        "<!-- end of boundaries -->",
    );
    common::generated_block("docs/advise.md", markers, &boundaries_block());
}

/// Where a property holds, as the synthesis proves it: every region's one inequality turned
/// round, joined by "and" (`None` when a region is a conjunction, whose complement is no
/// single inequality).
fn holds_where(regions: &[String]) -> Option<String> {
    let turned: Option<Vec<String>> = (regions.iter())
        .map(|region| {
            let (left, relation, right) = [" < ", " ≤ ", " > ", " ≥ "]
                .into_iter()
                .find_map(|r| region.split_once(r).map(|(a, b)| (a, r, b)))?;
            let turned = match relation {
                " < " => " ≥ ",
                " ≤ " => " > ",
                " > " => " ≤ ",
                _ => " < ",
            };
            (!region.contains(" and ")).then(|| format!("{left}{turned}{right}"))
        })
        .collect();
    Some(turned?.join(" and "))
}

/// Every boundary a catalog file's prose states in symbols is the synthesis's, run on that
/// file with its keys free: the prose carries, in backticks, where the property holds exactly
/// as the synthesis writes it, and so does a mitigation text that states a rule in symbols.
#[test]
fn the_inequalities_catalog_files_state_are_the_synthesis() {
    const DRIFT: &[&str] = &[
        "lock.drift_ticks",
        "clock.node_error_ticks",
        "clock.client_error_ticks",
    ];
    const JUMP: &[&str] = &[
        "lock.drift_ticks",
        "clock.node_error_ticks",
        "faults.clock_jumps.jump_ticks",
    ];
    const RESTART: &[&str] = &[
        "lock.ttl_ticks",
        "lock.drift_ticks",
        "faults.crashes.restart_delay_ticks",
    ];
    const RESTART_ERROR: &[&str] = &[
        "lock.ttl_ticks",
        "lock.drift_ticks",
        "clock.node_error_ticks",
        "faults.crashes.restart_delay_ticks",
    ];
    const MARGIN: &[&str] = &[
        "lock.drift_ticks",
        "storage.check_margin_ticks",
        "faults.pauses.max_ticks",
        "storage.max_delay_ticks",
    ];
    const MARGIN_ERROR: &[&str] = &[
        "lock.drift_ticks",
        "clock.node_error_ticks",
        "storage.check_margin_ticks",
        "faults.pauses.max_ticks",
        "storage.max_delay_ticks",
    ];
    const MARGIN_JUMP: &[&str] = &[
        "lock.drift_ticks",
        "faults.clock_jumps.jump_ticks",
        "storage.check_margin_ticks",
        "faults.pauses.max_ticks",
        "storage.max_delay_ticks",
    ];
    let names = |key: &str| match key {
        "lock.ttl_ticks" => "ttl",
        "lock.drift_ticks" => "drift",
        "clock.node_error_ticks" => "ε_n",
        "clock.client_error_ticks" => "ε_c",
        "faults.clock_jumps.jump_ticks" => "J",
        "faults.crashes.restart_delay_ticks" => "D",
        "storage.check_margin_ticks" => "M",
        "faults.pauses.max_ticks" => "P",
        "storage.max_delay_ticks" => "Δ",
        _ => panic!("no name for {key}"),
    };
    let mutual = Property::MutualExclusion;
    let storage = Property::StorageSafety;
    let files: [(&str, &[&str], Property); 14] = [
        ("clock-drift-covered", DRIFT, mutual),
        ("clock-drift-uncovered", DRIFT, mutual),
        ("clock-error-budget-covered", JUMP, mutual),
        ("node-clock-jump-and-error-share-drift", JUMP, mutual),
        ("crash-delayed-restart-ttl-minus-drift", RESTART, mutual),
        ("crash-delayed-restart-one-tick-short", RESTART, mutual),
        (
            "crash-delayed-restart-node-clock-error",
            RESTART_ERROR,
            mutual,
        ),
        (
            "crash-delayed-restart-covers-node-clock-error",
            RESTART_ERROR,
            mutual,
        ),
        ("synchronous-bounds-margin-2", MARGIN, storage),
        ("synchronous-bounds-margin-3", MARGIN, storage),
        (
            "synchronous-bounds-node-clock-error-margin-2",
            MARGIN_ERROR,
            storage,
        ),
        (
            "synchronous-bounds-node-clock-error-margin-3",
            MARGIN_ERROR,
            storage,
        ),
        (
            "synchronous-bounds-node-clock-jump-margin-2",
            MARGIN_JUMP,
            storage,
        ),
        (
            "synchronous-bounds-node-clock-jump-margin-3",
            MARGIN_JUMP,
            storage,
        ),
    ];
    let mut wrong = Vec::new();
    let mut proved = Vec::new();
    for (name, keys, property) in files {
        let file = redlock_lab::catalog::find(name).expect("a catalog file");
        let synthesis = synthesize_keys(file.file, file.text, keys, LIMIT, None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let names: Vec<&str> = keys.iter().map(|k| names(k)).collect();
        let regions = written(&synthesis, property, &names);
        let holds = holds_where(&regions).unwrap_or_else(|| panic!("{name}: {regions:?}"));
        let scenario = Scenario::from_str(file.file, file.text).unwrap();
        if !scenario.prose.contains(&format!("`{holds}`")) {
            wrong.push(format!(
                "{name}: {} holds exactly where `{holds}`",
                property.name()
            ));
        }
        proved.push(holds.clone());
        // A mitigation that states a rule in symbols states the synthesis's.
        let mitigation = scenario.mitigation.as_ref().map(|m| m.text.as_str());
        let symbolic = mitigation.filter(|t| t.contains(['≥', '≤', '<', '>']));
        if let Some(text) = symbolic.filter(|t| !t.contains(&format!("`{holds}`"))) {
            wrong.push(format!("{name}'s mitigation: `{holds}` (it says {text:?})"));
        }
    }
    wrong.extend(unproved_inequalities(&proved));
    assert!(
        wrong.is_empty(),
        "the prose should say where each holds as the synthesis proves it:\n{}",
        wrong.join("\n")
    );
}

/// Every inequality over the drift in backticks anywhere in the catalog's prose and
/// mitigations and on the zone engine's page (every boundary family bounds the drift) that is
/// not one of the algorithm's own formulas: each must be a boundary in `proved`, so a text that
/// cites another family's boundary cites it as the synthesis proved it.
fn unproved_inequalities(proved: &[String]) -> Vec<String> {
    // The algorithm's formulas, not boundaries: the validity left after a slow round, and a
    // guard in the zone engine's notation.
    const FORMULAS: &[&str] = &["ttl − (T2 − T1) − drift ≤ 0", "x ≤ ttl − drift − 1"];
    let mut wrong = Vec::new();
    let mut texts: Vec<(String, String)> = Vec::new();
    for file in redlock_lab::catalog::CATALOG {
        let scenario = Scenario::from_str(file.file, file.text).unwrap();
        texts.push((file.file.to_owned(), scenario.prose));
        if let Some(mitigation) = scenario.mitigation {
            texts.push((file.file.to_owned(), mitigation.text));
        }
    }
    // The zone engine's page names the boundaries as examples, outside advise.md's block.
    let zones = std::fs::read_to_string("docs/zones.md").expect("docs/zones.md");
    texts.push(("docs/zones.md".to_owned(), zones));
    for (file, text) in &texts {
        let quoted = text.split('`').skip(1).step_by(2);
        let inequalities =
            quoted.filter(|q| q.contains(['≥', '≤', '<', '>']) && q.contains("drift"));
        for formula in inequalities {
            if !FORMULAS.contains(&formula) && !proved.iter().any(|p| p == formula) {
                wrong.push(format!(
                    "{file}: `{formula}` is no boundary the synthesis proved"
                ));
            }
        }
    }
    wrong
}
