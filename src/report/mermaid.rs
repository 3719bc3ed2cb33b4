//! A [`Story`] as a Mermaid `sequenceDiagram`: clients and nodes as participants, a message
//! per delivery or storage op, a note per local event, faults marked, the break highlighted.

use super::Story;

/// Mermaid's sequence-diagram grammar ends a statement at `;` and reads `#…;` as an entity,
/// so message text keeps neither.
fn clean(text: &str) -> String {
    text.replace(';', ",").replace('#', "no. ")
}

impl Story {
    /// The story as a Mermaid `sequenceDiagram`.
    pub fn to_mermaid(&self) -> String {
        render(self)
    }
}

fn render(story: &Story) -> String {
    let mut out = String::from("sequenceDiagram\n");
    for lane in &story.lanes {
        out.push_str(&format!("    participant {lane}\n"));
    }
    for line in &story.lines {
        let mark = if line.fault { "⚡ " } else { "" };
        let clock = line
            .clock
            .map(|c| format!(" [{}'s clock: {c}]", line.actor))
            .unwrap_or_default();
        let text = clean(&format!("t={} {mark}{}{clock}", line.t, line.action));
        match &line.from {
            Some(from) => out.push_str(&format!("    {from}->>{}: {text}\n", line.actor)),
            None if line.actor == "time" => {
                out.push_str(&format!(
                    "    Note over {},{}: {text}\n",
                    story.lanes[0],
                    story.lanes[story.lanes.len() - 1]
                ));
            }
            None => out.push_str(&format!("    Note over {}: {text}\n", line.actor)),
        }
        if let Some(property) = &line.breaks {
            let detail = line.detail.as_deref().unwrap_or("");
            out.push_str(&format!(
                "    Note over {},{}: ✗ {property}: {}\n",
                story.lanes[0],
                story.lanes[story.lanes.len() - 1],
                clean(detail)
            ));
        }
    }
    out
}
