//! A real master's wall clock, moved while it runs (feature `redis`): the clock shim.
//!
//! Redis expires a key on its own wall clock (`SET … PX` stores `mstime() + ttl`, `mstime()`
//! from `gettimeofday`), so a node's clock jump is a jump of that clock. The shim
//! (`shim/clock_offset.c`, built by `build.rs` and embedded here) is an `LD_PRELOAD` library
//! that adds an offset to `clock_gettime` (the realtime clocks only), `gettimeofday` and `time`;
//! the offset is a little-endian `i64` of milliseconds in a file the shim maps, so writing the
//! file ([`NodeClock::set_offset_ms`]) moves the running server's clock at once. It reads the
//! true time with the raw system call and never allocates, so it works with Debian's
//! jemalloc-linked `redis-server`, which libfaketime crashes at start.
//!
//! ```no_run
//! # fn main() -> std::io::Result<()> {
//! use redlock_lab::live::{ClockShim, NodeClock};
//! let dir = std::env::temp_dir();
//! let shim = ClockShim::install(&dir)?;
//! let mut clock = NodeClock::create(&dir.join("n1.clock"))?;
//! let mut server = std::process::Command::new("redis-server");
//! server.envs(clock.environment(&shim)).args(["--port", "7001"]);
//! // … start it, `SET k v PX 10000`, then:
//! clock.set_offset_ms(20_000)?; // k is gone: the node's clock jumped 20 s forward
//! # Ok(())
//! # }
//! ```

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The shim's bytes, as `build.rs` built them (empty where it could not: not Linux, no compiler).
const LIBRARY: &[u8] = include_bytes!(env!("REDLOCK_CLOCK_SHIM"));

/// The environment variable naming the offset file (read by the shim).
const OFFSET_FILE_VARIABLE: &str = "REDLOCK_CLOCK_OFFSET_FILE";

/// The clock shim written to disk, ready to preload.
#[derive(Debug, Clone)]
pub struct ClockShim {
    library: PathBuf,
}

impl ClockShim {
    /// Writes the embedded shim into `dir` (as `clock_offset.so`). An error of kind
    /// `Unsupported` when this build has no shim (not Linux, or `build.rs` found no C compiler).
    pub fn install(dir: &Path) -> io::Result<ClockShim> {
        if LIBRARY.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "this build has no clock shim (it needs Linux and a C compiler when cargo builds)",
            ));
        }
        let library = dir.join("clock_offset.so");
        fs::write(&library, LIBRARY)?;
        Ok(ClockShim { library })
    }

    /// Where the library is.
    pub fn path(&self) -> &Path {
        &self.library
    }
}

/// One process's clock offset: the file its shim maps.
#[derive(Debug)]
pub struct NodeClock {
    file: PathBuf,
    offset_ms: i64,
}

impl NodeClock {
    /// Creates the offset file at `path` with offset 0.
    pub fn create(path: &Path) -> io::Result<NodeClock> {
        // Written whole once; later writes overwrite the 8 bytes in place and never truncate:
        // a mapped page past the end of the file would kill the server with SIGBUS.
        fs::write(path, 0_i64.to_le_bytes())?;
        Ok(NodeClock {
            file: path.to_owned(),
            offset_ms: 0,
        })
    }

    /// Sets the offset: the process's wall clock reads true time plus `offset_ms` from now on.
    pub fn set_offset_ms(&mut self, offset_ms: i64) -> io::Result<()> {
        let mut file = OpenOptions::new().write(true).open(&self.file)?;
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&offset_ms.to_le_bytes())?;
        self.offset_ms = offset_ms;
        Ok(())
    }

    /// The offset now, in milliseconds.
    pub fn offset_ms(&self) -> i64 {
        self.offset_ms
    }

    /// The environment that puts a process started with it on this clock (`LD_PRELOAD` and the
    /// offset file's path).
    pub fn environment(&self, shim: &ClockShim) -> [(&'static str, OsString); 2] {
        [
            ("LD_PRELOAD", shim.library.clone().into_os_string()),
            (OFFSET_FILE_VARIABLE, self.file.clone().into_os_string()),
        ]
    }
}
