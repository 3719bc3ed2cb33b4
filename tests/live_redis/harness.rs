//! Real `redis-server` processes for the live tests and the benchmark: free loopback ports,
//! no persistence unless asked, a temp dir each, killed on drop. Faults are verbs: `pause`
//! (SIGSTOP), `resume` (SIGCONT), `kill` (SIGKILL), `restart`, and for a server started on the
//! clock shim (`ServerOptions::shifted_clock`), `set_clock_offset_ms`: its wall clock jumps.
//!
//! A missing `redis-server` is a failure with the install hint, never a skip.

#![allow(
    dead_code,
    reason = "each user of the harness needs a different part of it"
)]

use std::fs;
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use redlock_lab::live::{ClockShim, NodeClock};

#[cfg(test)]
use crate::watchdog;

const INSTALL_HINT: &str = "the live tests need redis-server (7.x) on PATH, or REDIS_SERVER=/path/to/redis-server; \
     on Debian or Ubuntu: apt-get install -y --no-install-recommends redis-server redis-tools \
     (scripts/test does this); \
     these tests fail rather than skip when it is missing";

/// The redis-server binary, checked once: panics with the install hint when it is missing.
pub fn redis_server() -> &'static str {
    static BINARY: OnceLock<String> = OnceLock::new();
    BINARY.get_or_init(|| {
        let binary = std::env::var("REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        match Command::new(&binary).arg("--version").output() {
            Ok(output) if output.status.success() => binary,
            Ok(output) => panic!(
                "`{binary} --version` failed ({}): {INSTALL_HINT}",
                output.status
            ),
            Err(e) => panic!("cannot run `{binary}`: {e}; {INSTALL_HINT}"),
        }
    })
}

/// A port nothing listens on right now (the OS picked it; it is released at once).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral loopback port");
    listener.local_addr().expect("local address").port()
}

fn temp_dir(label: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "redlock-live-{}-{}-{label}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
    dir
}

/// Sends `signal` (`STOP`, `CONT`, `KILL`) to `pid` with the `kill` utility.
fn signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(pid.to_string())
        .status()
        .unwrap_or_else(|e| {
            panic!("run `kill -{signal} {pid}`: {e} (the harness needs procps' kill)")
        });
    assert!(status.success(), "`kill -{signal} {pid}` failed: {status}");
}

/// TLS files for a server: a CA made at test time and a certificate for 127.0.0.1 it signed.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    /// The CA certificate (PEM), for the client to trust.
    pub ca_cert: PathBuf,
    /// The server's certificate and key.
    pub cert: PathBuf,
    /// The server's private key.
    pub key: PathBuf,
}

impl TlsFiles {
    /// Generates a throw-away CA and a server certificate for `IP:127.0.0.1` with the `openssl`
    /// command-line tool, in a fresh temp dir.
    pub fn generate() -> TlsFiles {
        let dir = temp_dir("tls");
        let run = |args: &[&str]| {
            let output = Command::new("openssl")
                .args(args)
                .current_dir(&dir)
                .output()
                .unwrap_or_else(|e| panic!("run openssl (needed to make a test CA): {e}"));
            assert!(
                output.status.success(),
                "openssl {args:?} failed: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        };
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        let mut ca = vec![
            "req",
            "-x509",
            "-days",
            "2",
            "-subj",
            "/CN=redlock-lab test CA",
        ];
        ca.extend(ec);
        ca.extend(["-keyout", "ca.key", "-out", "ca.crt"]);
        ca.extend(["-addext", "basicConstraints=critical,CA:TRUE"]);
        ca.extend(["-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
        run(&ca);
        let mut csr = vec!["req", "-new", "-subj", "/CN=127.0.0.1"];
        csr.extend(ec);
        csr.extend(["-keyout", "server.key", "-out", "server.csr"]);
        run(&csr);
        fs::write(
            dir.join("server.ext"),
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
             keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n",
        )
        .expect("write the certificate extensions");
        run(&[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.crt",
        ]);
        TlsFiles {
            ca_cert: dir.join("ca.crt"),
            cert: dir.join("server.crt"),
            key: dir.join("server.key"),
        }
    }
}

/// How to start a server.
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// Extra `redis-server` arguments (`--requirepass x`, `--appendonly yes`, …).
    pub args: Vec<String>,
    /// Serve TLS only, on the port, with these files.
    pub tls: Option<TlsFiles>,
    /// Run on the clock shim, so that the test can move the server's wall clock.
    pub shifted_clock: bool,
}

/// The clock shim, written once per test process.
fn clock_shim() -> &'static ClockShim {
    static SHIM: OnceLock<ClockShim> = OnceLock::new();
    SHIM.get_or_init(|| {
        ClockShim::install(&temp_dir("shim")).unwrap_or_else(|e| panic!("the clock shim: {e}"))
    })
}

/// One `redis-server` process on 127.0.0.1, killed (and its dir removed) on drop.
#[derive(Debug)]
pub struct RedisServer {
    port: u16,
    dir: PathBuf,
    options: ServerOptions,
    child: Option<Child>,
    /// The offset file of a server on the clock shim (kept across restarts, like a host's clock).
    clock: Option<NodeClock>,
    /// Counted among the servers [`Alone`] waits for (all but an alone test's own).
    counted: bool,
}

/// Who is using the machine: the servers of ordinary tests, and whether a test that loads every
/// core (the hundred thousand names) runs, or waits to run, alone.
struct Machine {
    servers: usize,
    waiting_alone: usize,
    alone: bool,
}

static MACHINE: Mutex<Machine> = Mutex::new(Machine {
    servers: 0,
    waiting_alone: 0,
    alone: false,
});
static MACHINE_CHANGED: Condvar = Condvar::new();

thread_local! {
    /// The counted servers this thread (a test) holds now.
    static HELD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn machine() -> MutexGuard<'static, Machine> {
    MACHINE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn wait_for_machine(
    guard: MutexGuard<'static, Machine>,
    busy: impl Fn(&Machine) -> bool,
) -> MutexGuard<'static, Machine> {
    MACHINE_CHANGED
        .wait_while(guard, |m| busy(m))
        .unwrap_or_else(PoisonError::into_inner)
}

/// A test that loads every core runs alone while this lives: no other test's server runs (so
/// no timing-sensitive test beside it starves), and new ones wait until it is dropped.
pub struct Alone(());

impl Alone {
    /// Waits until every other test's servers are gone, then keeps new ones from starting.
    pub fn wait() -> Alone {
        #[cfg(test)]
        watchdog::begin();
        let mut m = machine();
        m.waiting_alone += 1;
        let mut m = wait_for_machine(m, |m| m.alone || m.servers > 0);
        m.waiting_alone -= 1;
        m.alone = true;
        Alone(())
    }

    /// `n` plain servers of the alone test.
    pub fn cluster(&self, n: usize) -> Vec<RedisServer> {
        (0..n)
            .map(|_| RedisServer::start_counted(ServerOptions::default(), false))
            .collect()
    }
}

impl Drop for Alone {
    fn drop(&mut self) {
        #[cfg(test)]
        watchdog::end();
        machine().alone = false;
        MACHINE_CHANGED.notify_all();
    }
}

impl RedisServer {
    /// A plain server without persistence.
    pub fn start() -> RedisServer {
        RedisServer::start_with(ServerOptions::default())
    }

    /// A server with `options`.
    pub fn start_with(options: ServerOptions) -> RedisServer {
        RedisServer::start_counted(options, true)
    }

    /// A server with `options`, `counted` among those an [`Alone`] test waits for (waiting
    /// while one runs).
    fn start_counted(options: ServerOptions, counted: bool) -> RedisServer {
        if counted {
            // A test that already holds a server goes on starting the rest of its cluster even
            // when an alone test waits: the alone test waits for those servers to go, so
            // holding them while waiting for it would leave both waiting for ever.
            let holds = HELD.get() > 0;
            let m = machine();
            let mut m = wait_for_machine(m, |m| m.alone || (m.waiting_alone > 0 && !holds));
            m.servers += 1;
            HELD.set(HELD.get() + 1);
        }
        // Another process may take the port between our probe and the server's bind; try a few.
        // A failed attempt is dropped uncounted, in a dir of its own: its drop must neither
        // give back the machine's count taken above nor delete the next attempt's dir.
        let mut last_log = String::new();
        for _ in 0..5 {
            let mut server = RedisServer {
                port: free_port(),
                dir: temp_dir("node"),
                options: options.clone(),
                child: None,
                clock: None,
                counted: false,
            };
            if options.shifted_clock {
                let file = server.dir.join("clock");
                server.clock = Some(
                    NodeClock::create(&file)
                        .unwrap_or_else(|e| panic!("create {}: {e}", file.display())),
                );
            }
            if server.spawn() {
                server.counted = counted;
                return server;
            }
            last_log = read_to_string(&server.log());
        }
        if counted {
            machine().servers -= 1;
            HELD.set(HELD.get().saturating_sub(1));
            MACHINE_CHANGED.notify_all();
        }
        panic!("redis-server did not come up on five free ports; the last one's log:\n{last_log}");
    }

    /// `redis://127.0.0.1:<port>` (or `rediss://` for a TLS server).
    pub fn url(&self) -> String {
        let scheme = if self.options.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The process id (panics if the server was killed and not restarted).
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("the server is running").id()
    }

    /// SIGSTOP: the process stops answering, but the kernel still accepts and buffers.
    pub fn pause(&self) {
        signal(self.pid(), "STOP");
    }

    /// SIGCONT after [`pause`](RedisServer::pause).
    pub fn resume(&self) {
        signal(self.pid(), "CONT");
    }

    /// SIGSTOP now and SIGCONT when the returned guard is dropped, also when the test panics
    /// first: a stopped server left behind would hang the harness's own checks and its kill.
    pub fn paused(&self) -> Paused<'_> {
        self.pause();
        Paused(self)
    }

    /// SIGKILL, and wait for the process to be gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            #[cfg(test)]
            watchdog::stopped(child.id());
        }
    }

    /// Kill, then start again on the same port with the same options and dir (without
    /// persistence every key is lost; with AOF the log is replayed).
    pub fn restart(&mut self) {
        self.kill();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !self.spawn() {
            assert!(
                Instant::now() < deadline,
                "redis-server did not restart on port {}; see {}",
                self.port,
                self.dir.display()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    /// Moves the wall clock of a server on the clock shim to true time plus `offset_ms`.
    pub fn set_clock_offset_ms(&mut self, offset_ms: i64) {
        self.clock
            .as_mut()
            .expect("a server started with `shifted_clock`")
            .set_offset_ms(offset_ms)
            .expect("write the clock offset");
    }

    /// A direct connection for the test's own checks (plain servers only).
    pub fn connection(&self) -> redis::Connection {
        redis::Client::open(self.url())
            .and_then(|client| client.get_connection_with_timeout(Duration::from_secs(2)))
            .unwrap_or_else(|e| panic!("connect to {}: {e}", self.url()))
    }

    /// The value of `key`, read directly.
    pub fn get(&self, key: &str) -> Option<String> {
        redis::cmd("GET")
            .arg(key)
            .query(&mut self.connection())
            .unwrap_or_else(|e| panic!("GET {key} on {}: {e}", self.url()))
    }

    /// How many times the server has run `command` (from `INFO commandstats`).
    pub fn calls(&self, command: &str) -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("commandstats")
            .query(&mut self.connection())
            .expect("INFO commandstats");
        let prefix = format!("cmdstat_{command}:calls=");
        info.lines()
            .find_map(|line| line.strip_prefix(&prefix))
            .and_then(|rest| rest.split(',').next())
            .map_or(0, |n| n.parse().expect("a call count"))
    }

    fn log(&self) -> PathBuf {
        self.dir.join(format!("redis-{}.log", self.port))
    }

    /// Starts the process and waits until it accepts connections; false if it exited (port
    /// taken).
    fn spawn(&mut self) -> bool {
        let log = self.log();
        let _ = fs::remove_file(&log);
        let mut command = Command::new(redis_server());
        command
            .arg("--bind")
            .arg("127.0.0.1")
            .arg("--save")
            .arg("")
            .arg("--appendonly")
            .arg("no")
            .arg("--dir")
            .arg(&self.dir)
            .arg("--logfile")
            .arg(&log);
        match &self.options.tls {
            None => {
                command.arg("--port").arg(self.port.to_string());
            }
            Some(tls) => {
                command
                    .args(["--port", "0", "--tls-port", &self.port.to_string()])
                    .arg("--tls-cert-file")
                    .arg(&tls.cert)
                    .arg("--tls-key-file")
                    .arg(&tls.key)
                    .arg("--tls-ca-cert-file")
                    .arg(&tls.ca_cert)
                    .args(["--tls-auth-clients", "no"]);
            }
        }
        // Later arguments win, so a test's own `--appendonly yes` overrides the default.
        command.args(&self.options.args);
        if let Some(clock) = &self.clock {
            command.envs(clock.environment(clock_shim()));
        }
        command.stdout(Stdio::null()).stderr(Stdio::null());
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("spawn redis-server: {e}; {INSTALL_HINT}"));
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if read_to_string(&log).contains("Ready to accept connections") {
                #[cfg(test)]
                watchdog::started(child.id());
                self.child = Some(child);
                return true;
            }
            if let Ok(Some(_exit)) = child.try_wait() {
                return false;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "redis-server on port {} not ready after 10 s:\n{}",
                    self.port,
                    read_to_string(&log)
                );
            }
            thread::sleep(Duration::from_millis(5));
        }
    }
}

fn read_to_string(path: &Path) -> String {
    let mut text = String::new();
    if let Ok(mut file) = fs::File::open(path) {
        let _ = file.read_to_string(&mut text);
    }
    text
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = fs::remove_dir_all(&self.dir);
        if self.counted {
            machine().servers -= 1;
            HELD.set(HELD.get().saturating_sub(1));
            MACHINE_CHANGED.notify_all();
        }
    }
}

/// A server stopped with SIGSTOP for as long as this lives ([`RedisServer::paused`]).
#[derive(Debug)]
pub struct Paused<'a>(&'a RedisServer);

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        // A panic here while the test is already panicking would abort the whole binary, so
        // neither a killed server nor a failed `kill` is asserted.
        if let Some(child) = &self.0.child {
            let _ = Command::new("kill")
                .arg("-CONT")
                .arg(child.id().to_string())
                .status();
        }
    }
}

/// `n` servers on the clock shim.
pub fn shifted_cluster(n: usize) -> Vec<RedisServer> {
    let options = ServerOptions {
        shifted_clock: true,
        ..ServerOptions::default()
    };
    (0..n)
        .map(|_| RedisServer::start_with(options.clone()))
        .collect()
}

/// `n` plain servers.
pub fn cluster(n: usize) -> Vec<RedisServer> {
    (0..n).map(|_| RedisServer::start()).collect()
}

/// The URLs of `servers`.
pub fn urls(servers: &[RedisServer]) -> Vec<String> {
    servers.iter().map(RedisServer::url).collect()
}

/// A start that fails on every port gives up with its own message and leaves the machine's
/// count as it found it (each failed attempt used to give the count back once more, which
/// later underflowed in another test's drop).
#[cfg(test)]
#[test]
fn a_server_that_never_comes_up_fails_with_its_own_message() {
    let options = ServerOptions {
        args: vec!["--no-such-directive".to_owned(), "yes".to_owned()],
        tls: None,
        shifted_clock: false,
    };
    let failed = std::panic::catch_unwind(|| RedisServer::start_with(options))
        .expect_err("redis-server refuses an unknown directive");
    let message = failed.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        message.contains("did not come up on five free ports"),
        "{message}"
    );
    // The machine is usable afterwards: a server starts and is dropped without a panic.
    drop(RedisServer::start());
}
