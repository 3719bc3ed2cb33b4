//! The real masters of a replay: one `redis-server` per node on loopback, each on the clock
//! shim, without persistence or with `appendfsync always`, killed (and its folder removed) when the replay ends, also on an
//! error or Ctrl-C.

use std::fs;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use redlock_lab::live::{ClockShim, NodeClock};

/// How a user gets `redis-server`, in the message of a replay that cannot find it.
const INSTALL_HINT: &str = "replay needs redis-server (7.x) on PATH, or REDIS_SERVER=/path/to/redis-server \
     (Debian and Ubuntu: apt-get install redis-server)";

/// One master.
struct Master {
    port: u16,
    dir: PathBuf,
    clock: NodeClock,
    child: Option<Child>,
}

/// The replay's masters, `n1` first.
pub(super) struct Masters {
    binary: String,
    dir: PathBuf,
    shim: ClockShim,
    nodes: Vec<Master>,
    /// AOF with `appendfsync always`: a restart replays the log, so every answered write
    /// survives a crash. Without it a restart starts from an empty data folder.
    aof_always: bool,
}

impl Masters {
    /// Starts `n` masters in a fresh folder under the system's temporary folder.
    pub(super) fn start(n: usize, aof_always: bool) -> Result<Masters> {
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
            aof_always,
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
            });
            masters.spawn(i)?;
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
        if let Some(mut child) = self.nodes[i].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts node `i` again on its port: with an empty data folder (persistence none: it
    /// forgets every key and its fencing counter), or replaying its `appendfsync always` log.
    pub(super) fn restart(&mut self, i: usize) -> Result<()> {
        self.kill(i);
        self.spawn(i)
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
        let log = master.dir.join("redis.log");
        let _ = fs::remove_file(&log);
        if !self.aof_always {
            for file in ["dump.rdb", "appendonlydir"] {
                let _ = fs::remove_dir_all(master.dir.join(file));
                let _ = fs::remove_file(master.dir.join(file));
            }
        }
        let aof: &[&str] = if self.aof_always {
            &["--appendonly", "yes", "--appendfsync", "always"]
        } else {
            &["--appendonly", "no"]
        };
        let mut command = Command::new(&self.binary);
        command
            .args(["--bind", "127.0.0.1", "--save", ""])
            .args(aof)
            .args(["--port", &master.port.to_string()])
            .arg("--dir")
            .arg(&master.dir)
            .arg("--logfile")
            .arg(&log)
            .envs(master.clock.environment(&self.shim))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = command
            .spawn()
            .with_context(|| format!("start {}", self.binary))?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if fs::read_to_string(&log).is_ok_and(|text| text.contains("Ready to accept")) {
                master.child = Some(child);
                return Ok(true);
            }
            if child.try_wait()?.is_some() {
                return Ok(false);
            }
            thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
        bail!(
            "redis-server for n{} not ready after 10 s; see {}",
            i + 1,
            log.display()
        )
    }
}

impl Drop for Masters {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
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

/// A loopback port nothing listens on right now.
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").context("bind a loopback port")?;
    Ok(listener.local_addr()?.port())
}
