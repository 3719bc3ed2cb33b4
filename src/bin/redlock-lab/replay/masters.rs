//! The real masters of a replay: one `redis-server` per node on loopback, each on the clock
//! shim, without persistence or with an AOF (fsynced on every write, or by the replay at the
//! story's moments), and the replicas where the scenario fails over; killed (and their folder
//! removed) when the replay ends, also on an error or Ctrl-C.

use std::fs;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use redlock_lab::live::{ClockShim, NodeClock};
use redlock_lab::node::Persistence;

use super::replication::Link;

/// How a user gets `redis-server`, in the message of a replay that cannot find it.
const INSTALL_HINT: &str = "replay needs redis-server (7.x) on PATH, or REDIS_SERVER=/path/to/redis-server \
     (Debian and Ubuntu: apt-get install redis-server)";

/// One master.
struct Master {
    port: u16,
    dir: PathBuf,
    clock: NodeClock,
    child: Option<Child>,
    /// Under a periodic fsync, each log file's length at the replay's last fsync of it: what
    /// a power loss leaves of it.
    durable: Vec<(PathBuf, u64)>,
}

/// A replica: a `redis-server --replicaof` the link's port, on its master's clock.
struct Replica {
    /// Its master, from 0.
    node: usize,
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
    link: Link,
}

/// The replay's masters, `n1` first.
pub(super) struct Masters {
    binary: String,
    dir: PathBuf,
    shim: ClockShim,
    nodes: Vec<Master>,
    /// The model's replica slots, in order; `None` once gone with a failover.
    replicas: Vec<Option<Replica>>,
    /// Node `i` is a replica whose master failed, promoted only when the failover's delay
    /// ends: a write until then is refused (`READONLY`).
    promotion_pending: Vec<bool>,
    /// What a restart keeps: nothing (an empty data folder), or the AOF it replays.
    persistence: Persistence,
}

impl Masters {
    /// Starts `n` masters in a fresh folder under the system's temporary folder, and a
    /// replica of node `replicas[r]` for each of the model's replica slots `r`.
    pub(super) fn start(n: usize, persistence: Persistence, replicas: &[usize]) -> Result<Masters> {
        let binary = redis_server()?;
        let dir = std::env::temp_dir().join(format!("redlock-replay-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
        let shim = ClockShim::install(&dir).context("the clock shim")?;
        let mut masters = Masters {
            binary,
            dir,
            shim,
            nodes: Vec::new(),
            replicas: Vec::new(),
            promotion_pending: vec![false; n],
            persistence,
        };
        for i in 0..n {
            let dir = masters.dir.join(format!("n{}", i + 1));
            fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
            let clock = NodeClock::create(&dir.join("clock"))?;
            masters.nodes.push(Master {
                port: 0,
                dir,
                clock,
                child: None,
                durable: Vec::new(),
            });
            masters.spawn(i)?;
        }
        for (r, &node) in replicas.iter().enumerate() {
            masters.start_replica(r, node)?;
        }
        Ok(masters)
    }

    /// `redis://127.0.0.1:PORT` of node `i` (from 0).
    pub(super) fn url(&self, i: usize) -> String {
        format!("redis://127.0.0.1:{}", self.nodes[i].port)
    }

    /// Node `i`'s clock offset, in milliseconds.
    pub(super) fn offset_ms(&self, i: usize) -> i64 {
        self.nodes[i].clock.offset_ms()
    }

    /// Moves node `i`'s wall clock to true time plus `offset_ms`.
    pub(super) fn set_offset_ms(&mut self, i: usize, offset_ms: i64) -> Result<()> {
        Ok(self.nodes[i].clock.set_offset_ms(offset_ms)?)
    }

    /// Whether node `i`'s process runs.
    pub(super) fn is_up(&self, i: usize) -> bool {
        self.nodes[i].child.is_some()
    }

    /// SIGKILL to node `i`, and waits for it to be gone.
    pub(super) fn kill(&mut self, i: usize) {
        stop(&mut self.nodes[i].child);
    }

    /// Node `i` loses power: SIGKILL, and under a periodic fsync each of its log files cut
    /// back to its length at the last fsync (the page cache a process kill leaves behind is
    /// what a power loss takes). Says what it did.
    pub(super) fn lose_power(&mut self, i: usize) -> Result<String> {
        self.kill(i);
        if self.persistence != Persistence::FsyncPeriodic {
            return Ok("SIGKILL".to_owned());
        }
        let mut lost = 0;
        for path in log_files(&self.nodes[i].dir)? {
            let length = fs::metadata(&path)?.len();
            let durable = (self.nodes[i].durable.iter())
                .find(|(file, _)| *file == path)
                .map_or(0, |&(_, length)| length);
            if durable < length {
                fs::OpenOptions::new()
                    .write(true)
                    .open(&path)?
                    .set_len(durable)?;
                lost += length - durable;
            }
        }
        Ok(format!(
            "SIGKILL, and the {lost} bytes of its log written since its last fsync are lost"
        ))
    }

    /// Fsyncs node `i`'s log, the moment the model's periodic fsync chose: what it wrote so
    /// far survives a power loss.
    pub(super) fn fsync(&mut self, i: usize) -> Result<String> {
        let mut durable = Vec::new();
        for path in log_files(&self.nodes[i].dir)? {
            let file = fs::File::open(&path)?;
            file.sync_all()?;
            durable.push((path, file.metadata()?.len()));
        }
        let bytes: u64 = durable.iter().map(|(_, length)| length).sum();
        self.nodes[i].durable = durable;
        Ok(format!("fsync of its log: {bytes} bytes durable"))
    }

    /// Node `i` serves again: a replica in its place is promoted; any other node starts
    /// again on its port, with an empty data folder (persistence none: it forgets every key
    /// and its fencing counter), or replaying its `appendfsync always` log.
    /// Says which it did.
    pub(super) fn restart(&mut self, i: usize) -> Result<&'static str> {
        if self.promotion_pending[i] {
            self.promote(i)?;
            return Ok("the replica in its place is promoted: REPLICAOF NO ONE");
        }
        self.kill(i);
        self.spawn(i)?;
        Ok("restarted")
    }

    /// Starts node `i`'s process (on its old port after a crash, else on a free one) and waits
    /// until it accepts connections.
    fn spawn(&mut self, i: usize) -> Result<()> {
        let fixed = self.nodes[i].port != 0;
        for _ in 0..5 {
            if !fixed {
                self.nodes[i].port = free_port()?;
            }
            if self.try_spawn(i)? {
                return Ok(());
            }
            thread::sleep(Duration::from_millis(50));
        }
        bail!(
            "redis-server for n{} did not start; see {}",
            i + 1,
            self.nodes[i].dir.display()
        )
    }

    /// One start; false if the process exited (its port was taken).
    fn try_spawn(&mut self, i: usize) -> Result<bool> {
        let master = &mut self.nodes[i];
        if self.persistence == Persistence::None {
            for file in ["dump.rdb", AOF_DIR] {
                let _ = fs::remove_dir_all(master.dir.join(file));
                let _ = fs::remove_file(master.dir.join(file));
            }
        }
        // A periodic fsync is the replay's own (`fsync`): the master writes its log and never
        // fsyncs it.
        let aof: &[&str] = match self.persistence {
            Persistence::None => &["--appendonly", "no"],
            Persistence::FsyncAlways => &["--appendonly", "yes", "--appendfsync", "always"],
            Persistence::FsyncPeriodic => &["--appendonly", "yes", "--appendfsync", "no"],
        };
        let server = Server {
            binary: &self.binary,
            dir: &master.dir,
            port: master.port,
            clock: &master.clock,
            shim: &self.shim,
        };
        master.child = server.launch(aof, &format!("n{}", i + 1))?;
        Ok(master.child.is_some())
    }

    /// Starts replica slot `r`, of node `node`, through a replication link of its own, waits
    /// for its first full sync, and holds the link from then on.
    fn start_replica(&mut self, r: usize, node: usize) -> Result<()> {
        let dir = self.dir.join(format!("n{}-replica{}", node + 1, r + 1));
        fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
        let link = Link::start(self.nodes[node].port)?;
        let name = format!("n{}'s replica {}", node + 1, r + 1);
        let link_port = link.port.to_string();
        let args = ["--appendonly", "no", "--replicaof", "127.0.0.1", &link_port];
        for _ in 0..5 {
            let port = free_port()?;
            let server = Server {
                binary: &self.binary,
                dir: &dir,
                port,
                clock: &self.nodes[node].clock,
                shim: &self.shim,
            };
            if let Some(child) = server.launch(&args, &name)? {
                self.replicas.push(Some(Replica {
                    node,
                    port,
                    dir,
                    child: Some(child),
                    link,
                }));
                self.wait_for_sync(r)?;
                self.replica(r)?.link.hold();
                return Ok(());
            }
        }
        bail!("{name} did not start; see {}", dir.display())
    }

    /// Waits until the first `n` masters have been up for `guard` as a restart guard reads it:
    /// `uptime_in_seconds`, in whole seconds.
    pub(super) fn wait_until_up_for(&self, n: usize, guard: Duration) -> Result<()> {
        let seconds = guard.as_secs() + u64::from(guard.subsec_nanos() > 0);
        let deadline = Instant::now() + Duration::from_secs(seconds + 10);
        for i in 0..n {
            let mut connection = redis::Client::open(self.url(i))?.get_connection()?;
            loop {
                let info: String = redis::cmd("INFO").arg("server").query(&mut connection)?;
                let uptime = info
                    .lines()
                    .find_map(|line| line.strip_prefix("uptime_in_seconds:"))
                    .and_then(|value| value.trim().parse::<u64>().ok())
                    .context("INFO server without uptime_in_seconds")?;
                if uptime >= seconds {
                    break;
                }
                if Instant::now() > deadline {
                    bail!(
                        "n{} was not up for {seconds} s within {} s",
                        i + 1,
                        seconds + 10
                    );
                }
                thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(())
    }

    /// Waits until replica `r` reports its link to the master up (its first sync done).
    fn wait_for_sync(&self, r: usize) -> Result<()> {
        let mut connection = redis::Client::open(self.replica_url(r)?)?.get_connection()?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            let info: String = redis::cmd("INFO")
                .arg("replication")
                .query(&mut connection)?;
            if info.contains("master_link_status:up") {
                return Ok(());
            }
            thread::sleep(Duration::from_millis(5));
        }
        let replica = self.replica(r)?;
        bail!(
            "n{}'s replica {} did not sync with it within 10 s; see {}",
            replica.node + 1,
            r + 1,
            replica.dir.display()
        )
    }

    /// Replica slot `r`, while it is there.
    fn replica(&self, r: usize) -> Result<&Replica> {
        match self.replicas.get(r) {
            Some(Some(replica)) => Ok(replica),
            _ => bail!("no replica in slot {}", r + 1),
        }
    }

    /// The first replica slot of node `i` still there.
    pub(super) fn first_replica_of(&self, i: usize) -> Result<usize> {
        let slot = self
            .replicas
            .iter()
            .position(|slot| slot.as_ref().is_some_and(|s| s.node == i));
        slot.with_context(|| format!("n{} has no replica", i + 1))
    }

    /// The node whose replica slot `r` is (from 0).
    pub(super) fn replica_node(&self, r: usize) -> Result<usize> {
        Ok(self.replica(r)?.node)
    }

    /// `redis://127.0.0.1:PORT` of replica slot `r` (from 0).
    pub(super) fn replica_url(&self, r: usize) -> Result<String> {
        Ok(format!("redis://127.0.0.1:{}", self.replica(r)?.port))
    }

    /// Replica `r` receives everything its master wrote so far.
    pub(super) fn replicate(&self, r: usize) -> Result<()> {
        Ok(self.replica(r)?.link.flush()?)
    }

    /// Replica `r`'s master fails: the links of its replicas are cut (what they held is
    /// lost), its process killed, and replica `r` takes its place, promoted now (`REPLICAOF
    /// NO ONE`) or, under a promotion delay, at [`Masters::restart`]; the master's other
    /// replicas go with the failover, as in the model.
    pub(super) fn fail_over(&mut self, r: usize, promote_now: bool) -> Result<()> {
        let node = self.replica_node(r)?;
        let mine = |slot: &Option<Replica>| slot.as_ref().is_some_and(|s| s.node == node);
        for replica in self.replicas.iter().filter(|slot| mine(slot)).flatten() {
            replica.link.cut();
        }
        self.kill(node);
        let mut promoted = self.replicas[r].take().expect("checked above");
        for slot in self.replicas.iter_mut().filter(|slot| mine(slot)) {
            if let Some(mut other) = slot.take() {
                stop(&mut other.child);
            }
        }
        let master = &mut self.nodes[node];
        master.port = promoted.port;
        master.dir.clone_from(&promoted.dir);
        master.child = promoted.child.take();
        self.promotion_pending[node] = true;
        if promote_now {
            self.promote(node)?;
        }
        Ok(())
    }

    /// The replica in node `i`'s place becomes a master.
    fn promote(&mut self, i: usize) -> Result<()> {
        let mut connection = redis::Client::open(self.url(i))?.get_connection()?;
        redis::cmd("REPLICAOF")
            .arg("NO")
            .arg("ONE")
            .query::<()>(&mut connection)?;
        self.promotion_pending[i] = false;
        Ok(())
    }
}

/// How one `redis-server` starts: where, on which port and clock.
struct Server<'a> {
    binary: &'a str,
    dir: &'a PathBuf,
    port: u16,
    clock: &'a NodeClock,
    shim: &'a ClockShim,
}

impl Server<'_> {
    /// Starts it with `args` and waits until it accepts connections; `None` if the process
    /// exited (its port was taken).
    fn launch(&self, args: &[&str], name: &str) -> Result<Option<Child>> {
        let log = self.dir.join("redis.log");
        let _ = fs::remove_file(&log);
        let mut command = Command::new(self.binary);
        command
            .args(["--bind", "127.0.0.1", "--save", ""])
            .args(args)
            .args(["--port", &self.port.to_string()])
            .arg("--dir")
            .arg(self.dir)
            .arg("--logfile")
            .arg(&log)
            .envs(self.clock.environment(self.shim))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = command
            .spawn()
            .with_context(|| format!("start {}", self.binary))?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if fs::read_to_string(&log).is_ok_and(|text| text.contains("Ready to accept")) {
                return Ok(Some(child));
            }
            if child.try_wait()?.is_some() {
                return Ok(None);
            }
            thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
        bail!(
            "redis-server for {name} not ready after 10 s; see {}",
            log.display()
        )
    }
}

/// SIGKILL, and waits for the process to be gone.
fn stop(child: &mut Option<Child>) {
    if let Some(mut child) = child.take() {
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Masters {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
        for replica in self.replicas.iter_mut().flatten() {
            stop(&mut replica.child);
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// `REDIS_SERVER`, or `redis-server` on PATH, checked by running `--version`.
fn redis_server() -> Result<String> {
    let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
    match Command::new(&binary).arg("--version").output() {
        Ok(output) if output.status.success() => Ok(binary),
        Ok(output) => bail!(
            "`{binary} --version` failed ({}): {INSTALL_HINT}",
            output.status
        ),
        Err(e) => bail!("cannot run `{binary}`: {e}; {INSTALL_HINT}"),
    }
}

/// Where Redis 7 keeps its AOF (a manifest, a base file and the incremental logs).
const AOF_DIR: &str = "appendonlydir";

/// A master's incremental AOF files, where its writes since the base go.
fn log_files(dir: &std::path::Path) -> Result<Vec<PathBuf>> {
    let folder = dir.join(AOF_DIR);
    let mut files = Vec::new();
    for entry in fs::read_dir(&folder).with_context(|| format!("read {}", folder.display()))? {
        let path = entry?.path();
        if path.to_string_lossy().ends_with(".incr.aof") {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// A loopback port nothing listens on right now.
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("bind a loopback port")?;
    Ok(listener.local_addr()?.port())
}
