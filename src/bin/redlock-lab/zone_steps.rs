//! The zone engine's counterexample as text: its steps, numbered (it has no story yet).

/// `property`'s counterexample in `scenario`, as the zone engine found it.
pub fn text(scenario: &str, property: &str, steps: &[String]) -> String {
    let mut out = format!(
        "{scenario}: {property} is violated (zone engine; in any run that takes these steps in \
         order, with the clocks at some of the times the zones allow):\n"
    );
    for (i, step) in steps.iter().enumerate() {
        out.push_str(&format!("  {:>2}. {step}\n", i + 1));
    }
    out
}
