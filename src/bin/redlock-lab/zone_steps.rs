//! The zone engine's counterexample as text: its steps, numbered, each at the time a concrete
//! run takes it (it has no story with diagrams yet).

/// `property`'s counterexample in `scenario`, as the zone engine found it.
pub(crate) fn text(scenario: &str, property: &str, steps: &[String]) -> String {
    let mut out = format!(
        "{scenario}: {property} is violated (zone engine; one run, each step at the earliest \
         time a run that breaks the property can take it):\n"
    );
    for (i, step) in steps.iter().enumerate() {
        out.push_str(&format!("  {:>2}. {step}\n", i + 1));
    }
    out
}
