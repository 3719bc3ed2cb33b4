//! The Explorer's page with a landing view a newcomer can read: the scenario, its claim and
//! what to do, one click to the shortest counterexample, the breaking step marked in the
//! path, and the sequence diagram kept within the window.
//!
//! stateright serves its page from the binary, or from `./ui/index.htm` when that file exists
//! (its mode for developing the page). `explore` fetches the page the server embeds, adds
//! this view to it, writes it to a folder of its own and serves from there, so the
//! Explorer's own script, API and updates stay stateright's; only the page around them is
//! this crate's.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use redlock_lab::report::escape;
use redlock_lab::scenario::{Scenario, Verdict};

/// `original` (stateright's page) with the landing view for `scenario`, its style and its
/// script.
pub(super) fn page(scenario: &Scenario, original: &str) -> Result<String> {
    let title = format!("<title>{} · Explorer</title>", escape(&scenario.name));
    let head = original.replacen("<title>Stateright Explorer</title>", &title, 1);
    let header_end = head
        .find("</header>")
        .context("stateright's page has no </header>")?
        + "</header>".len();
    let body_end = head
        .rfind("</body>")
        .context("stateright's page has no </body>")?;
    let target = target(scenario);
    Ok(format!(
        "{}{}{}<style>{STYLE}</style><script>{}</script>{}",
        &head[..header_end],
        view(scenario, target),
        &head[header_end..body_end],
        script(target),
        &head[body_end..]
    ))
}

/// The property the one click is about: the first `[expect]` entry that is violated.
fn target(scenario: &Scenario) -> Option<&str> {
    (scenario.expect.iter())
        .find(|(_, verdict)| *verdict == Verdict::Violated)
        .map(|(name, _)| name.as_str())
}

/// The landing section: name, title, claim, and what to do.
fn view(scenario: &Scenario, target: Option<&str>) -> String {
    let action = match target {
        Some(p) => format!(
            "<button id='redlock-shortest' onclick='redlockShortest()'>Show the shortest counterexample to {}</button> \
             (it runs the search to completion, then opens the path: the step where {0} breaks is marked ✗)",
            escape(p)
        ),
        None => "<button id='redlock-shortest' onclick='redlockShortest()'>Check every property</button> \
             (it runs the search to completion; each property then says whether it holds)"
            .to_owned(),
    };
    format!(
        "<section id='redlock-landing'><h2>{}: {}</h2><p class='claim'>{}</p>\
         <p>{action}</p><p class='how'>Or step by hand: pick a first action under <b>Next Action Choices</b>, \
         read the state and the sequence diagram on the right, and follow the path; \
         <b>Run to completion</b>, then <b>Properties</b>, lists each counterexample found.</p></section>",
        escape(&scenario.name),
        escape(&scenario.title),
        escape(&scenario.claim)
    )
}

/// The view's style, and the diagram kept within the window (it is as wide as its lanes).
const STYLE: &str = "#redlock-landing{padding:6px 12px;border-bottom:solid 1px var(--contrast-dim)}\
#redlock-landing h2{margin:2px 0}#redlock-landing p{margin:4px 0;max-width:110ch}\
#redlock-landing .claim{font-style:italic}#redlock-landing button{font-size:14px}\
.main-flex-right{min-width:0}.main-flex-left{min-width:0}\
.hscroll svg{max-width:100%;height:auto}\
.path-list a.breaks{font-weight:bold;border-left:4px solid #ff6b6b;padding-left:4px}\
.path-list .breaks-why{display:block;color:#ffb3b3;font-size:12px}";

/// The script: the one click (also `#/steps?shortest` in the URL), and the breaking step marked in
/// the path (the step whose outcome the model begins with ✗).
fn script(target: Option<&str>) -> String {
    let target = serde_json::to_string(&target).unwrap_or_else(|_| "null".to_owned());
    format!(
        r#"
async function redlockShortest() {{
  const target = {target};
  const button = document.getElementById('redlock-shortest');
  button.disabled = true;
  button.textContent = 'Searching…';
  await fetch('/.runtocompletion', {{method: 'POST'}});
  for (;;) {{
    const status = await (await fetch('/.status')).json();
    const found = status.properties.find(p => p[1] === target && p[2]);
    if (found) {{ window.location.hash = '#/steps/' + found[2]; button.textContent = 'Shown below: ' + target; return; }}
    if (status.done) {{ button.textContent = target ? 'No counterexample to ' + target : 'Done: see Properties'; return; }}
    await new Promise(r => setTimeout(r, 250));
  }}
}}
function redlockMark() {{
  const steps = window.app.farthestStep().pathSteps();
  document.querySelectorAll('.path-list li').forEach((li, i) => {{
    const step = steps[i];
    const line = step && (step.outcome || '').split('\n').find(l => l.startsWith('✗'));
    const a = li.querySelector('a');
    li.querySelectorAll('.breaks-why').forEach(e => e.remove());
    a.classList.toggle('breaks', !!line);
    if (line) {{ const why = document.createElement('span'); why.className = 'breaks-why'; why.textContent = line; li.appendChild(why); }}
  }});
  document.body.dataset.fits = String(document.documentElement.scrollWidth <= window.innerWidth);
}}
window.app.showPerStateProperties(true);
window.app.farthestStep.subscribe(() => setTimeout(redlockMark, 0));
window.app.selectedStep.subscribe(() => setTimeout(redlockMark, 0));
if (window.location.hash === '#/steps?shortest') redlockShortest();
"#
    )
}

/// stateright's own page, from its server at `port` (which serves it as soon as it listens).
pub(super) fn fetch_page(port: u16) -> Result<String> {
    let start = Instant::now();
    let mut stream = loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(stream) => break stream,
            Err(_) if start.elapsed() < Duration::from_secs(10) => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(error) => bail!("the Explorer did not start on port {port}: {error}"),
        }
    };
    write!(
        stream,
        "GET / HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    // The headers end at the first empty line.
    while reader.read_line(&mut line)? > 0 && line != "\r\n" {
        line.clear();
    }
    let mut body = String::new();
    reader.read_to_string(&mut body)?;
    Ok(body)
}

/// Writes `page` as `ui/index.htm` under a folder of this process's own, and returns the
/// folder (the Explorer serves the page from there once it is the working directory).
pub(super) fn write_page(page: &str) -> Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!("redlock-lab-explorer-{}", std::process::id()));
    let ui = dir.join("ui");
    std::fs::create_dir_all(&ui).with_context(|| format!("cannot create {}", ui.display()))?;
    let file: &Path = &ui.join("index.htm");
    std::fs::write(file, page).with_context(|| format!("cannot write {}", file.display()))?;
    Ok(dir)
}
