//! A replica's replication link, through the replay: real Redis replication whose moments the
//! story chooses.
//!
//! A replica connects to the link's port as if it were its master; the link connects on to
//! the master and relays both ways. The replica's side (PSYNC, `REPLCONF ACK`) always
//! passes. The master's stream to the replica passes while the link is open (the first full
//! sync), is held from then on, and reaches the replica only at the story's `receives c1's
//! key from n1` (a [`Link::flush`]), as the model's `Replicate` step: asynchronous
//! replication, with the moment of the copy chosen. When the master fails, [`Link::cut`]
//! drops what it still held, so a write the replica had not received is lost, as it is when
//! a real master dies with its replication buffer.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread;
use std::time::Duration;

use anyhow::{Context, Result};

/// What the link's threads share.
#[derive(Default)]
struct Gate {
    /// The master's stream passes at once (the first sync) instead of being held.
    open: bool,
    /// The master has failed: nothing passes any more, and held bytes are dropped.
    cut: bool,
    /// The master's stream not yet delivered.
    held: Vec<u8>,
    /// The replica's end of the current connection, where held bytes go.
    to_replica: Option<TcpStream>,
    /// Every socket of the link, shut down when it is cut.
    sockets: Vec<TcpStream>,
}

/// One replica's link to the master.
pub(super) struct Link {
    /// Where the replica connects (its `--replicaof` port).
    pub port: u16,
    gate: Arc<Mutex<Gate>>,
}

impl Link {
    /// Listens on a free loopback port and relays every connection to `master_port`; open
    /// until [`Link::hold`].
    pub(super) fn start(master_port: u16) -> Result<Link> {
        let listener = TcpListener::bind("127.0.0.1:0").context("bind a replication port")?;
        let port = listener.local_addr()?.port();
        // Non-blocking, so the accepting thread sees the cut and ends.
        listener.set_nonblocking(true)?;
        let gate = Arc::new(Mutex::new(Gate {
            open: true,
            ..Gate::default()
        }));
        let shared = Arc::clone(&gate);
        thread::spawn(move || accept(&listener, master_port, &shared));
        Ok(Link { port, gate })
    }

    /// From now on the master's stream waits for [`Link::flush`].
    pub(super) fn hold(&self) {
        lock(&self.gate).open = false;
    }

    /// Delivers everything the master sent so far to the replica.
    pub(super) fn flush(&self) -> io::Result<()> {
        let mut gate = lock(&self.gate);
        deliver(&mut gate)
    }

    /// The master failed: drops what was held and closes every connection for good.
    pub(super) fn cut(&self) {
        let mut gate = lock(&self.gate);
        gate.cut = true;
        gate.held.clear();
        for socket in gate.sockets.drain(..) {
            let _ = socket.shutdown(Shutdown::Both);
        }
        gate.to_replica = None;
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.cut();
    }
}

fn lock(gate: &Mutex<Gate>) -> MutexGuard<'_, Gate> {
    gate.lock().unwrap_or_else(PoisonError::into_inner)
}

fn deliver(gate: &mut Gate) -> io::Result<()> {
    if gate.held.is_empty() {
        return Ok(());
    }
    let held = std::mem::take(&mut gate.held);
    match gate.to_replica.as_mut() {
        Some(replica) => replica.write_all(&held),
        None => Ok(()),
    }
}

/// Accepts the replica's connections until the link is cut.
fn accept(listener: &TcpListener, master_port: u16, gate: &Arc<Mutex<Gate>>) {
    loop {
        if lock(gate).cut {
            return;
        }
        match listener.accept() {
            Ok((replica, _)) => {
                let _ = relay(replica, master_port, gate);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(5));
            }
            Err(_) => return,
        }
    }
}

/// One connection: the replica's side copied to the master as it comes; the master's side
/// through the gate.
fn relay(replica: TcpStream, master_port: u16, gate: &Arc<Mutex<Gate>>) -> io::Result<()> {
    replica.set_nonblocking(false)?;
    let master = TcpStream::connect(("127.0.0.1", master_port))?;
    for socket in [&replica, &master] {
        socket.set_nodelay(true)?;
    }
    {
        let mut shared = lock(gate);
        if shared.cut {
            return Ok(());
        }
        shared.sockets.push(replica.try_clone()?);
        shared.sockets.push(master.try_clone()?);
        shared.to_replica = Some(replica.try_clone()?);
    }
    let (mut from_replica, mut to_master) = (replica, master.try_clone()?);
    thread::spawn(move || io::copy(&mut from_replica, &mut to_master));
    let gate = Arc::clone(gate);
    thread::spawn(move || downstream(master, &gate));
    Ok(())
}

/// The master's stream: delivered at once while the gate is open, else held.
fn downstream(mut master: TcpStream, gate: &Mutex<Gate>) {
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let read = match master.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(read) => read,
        };
        let mut shared = lock(gate);
        if shared.cut {
            return;
        }
        shared.held.extend_from_slice(&buffer[..read]);
        if shared.open && deliver(&mut shared).is_err() {
            return;
        }
    }
}
