//! The timelines of the Explorer's paths, served on a loopback port of their own.
//!
//! `GET /timeline/0/3/1` is the path the Explorer calls `#/steps/0/3/1` (the initial state's
//! index, then each step's index among the steps enabled before it), drawn as a timeline
//! page whose every step links back to its state in the Explorer. Anything else is a 404;
//! a path that does not exist is a 404 naming the first index that does not apply.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};

use redlock_lab::model::{RedlockModel, Step, World, breaks};
use redlock_lab::property::Property;
use redlock_lab::report::{Story, Timeline};
use stateright::{Expectation, Model};

/// Serves timelines of `model`'s paths on `listener` until the process ends, linking each
/// step to the Explorer at `explorer` (`http://127.0.0.1:3000`).
pub(super) fn serve(listener: TcpListener, model: RedlockModel, explorer: String) {
    for stream in listener.incoming().flatten() {
        // One request per connection, answered in turn: a reader clicks one link at a time.
        if let Err(error) = answer(stream, &model, &explorer) {
            errln!("timeline server: {error}");
        }
    }
}

/// Reads one request and writes its answer.
fn answer(stream: TcpStream, model: &RedlockModel, explorer: &str) -> std::io::Result<()> {
    // A client that connects and says nothing must not hold the one thread for ever.
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    let target = request.split_whitespace().nth(1).unwrap_or_default();
    let (status, body) = match target.strip_prefix("/timeline/") {
        Some(path) if request.starts_with("GET ") => match page(model, path, explorer) {
            Ok(html) => ("200 OK", html),
            Err(why) => ("404 Not Found", why),
        },
        _ => (
            "404 Not Found",
            "not a timeline: ask for /timeline/INDICES, as the Explorer's links do".to_owned(),
        ),
    };
    let kind = if status.starts_with("200") {
        "text/html; charset=utf-8"
    } else {
        "text/plain; charset=utf-8"
    };
    let mut stream = stream;
    write!(
        stream,
        "HTTP/1.0 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

/// The timeline page of the path `encoded` names.
fn page(model: &RedlockModel, encoded: &str, explorer: &str) -> Result<String, String> {
    let path = follow(model, encoded)?;
    let always: Vec<&'static str> = model
        .properties()
        .iter()
        .filter(|p| p.expectation == Expectation::Always)
        .map(|p| p.name)
        .collect();
    // The property the path breaks, if any, else the first it is judged by.
    let broken = always.iter().copied().find(|name| {
        Property::from_name(name).is_some_and(|p| path.iter().any(|(w, _)| breaks(p, w)))
    });
    let property = broken
        .or(always.first().copied())
        .unwrap_or("mutual exclusion");
    let story = Story::from_path(model, property, &path);
    let links = (1..path.len())
        .map(|n| {
            let prefix: Vec<&str> = encoded.trim_matches('/').split('/').take(n + 1).collect();
            format!("{explorer}/#/steps/{}", prefix.join("/"))
        })
        .collect();
    let mut timeline = Timeline::new(model, &story, &path).with_explorer(links);
    if broken.is_none() {
        timeline = timeline.with_caption(format!(
            "the path chosen in the Explorer, {} steps: {property} does not break on it",
            path.len() - 1
        ));
    }
    Ok(timeline.to_html())
}

/// The states the Explorer's path `encoded` visits, with the step taken from each.
fn follow(model: &RedlockModel, encoded: &str) -> Result<Vec<(World, Option<Step>)>, String> {
    let mut indices = encoded.trim_matches('/').split('/').map(|i| {
        i.parse::<usize>()
            .map_err(|_| format!("{i:?} is not a step index"))
    });
    let first = indices.next().ok_or("no initial state")??;
    let mut state = model
        .init_states()
        .into_iter()
        .nth(first)
        .ok_or_else(|| format!("no initial state {first}"))?;
    let mut path = Vec::new();
    for index in indices {
        let index = index?;
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        let step = *actions
            .get(index)
            .ok_or_else(|| format!("step {} has no enabled step {index}", path.len() + 1))?;
        let next = model
            .next_state(&state, step)
            .ok_or_else(|| format!("step {} ({index}) does not apply", path.len() + 1))?;
        path.push((state, Some(step)));
        state = next;
    }
    path.push((state, None));
    Ok(path)
}
