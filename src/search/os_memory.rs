//! What the operating system says about memory, for the checker's memory guard.
//!
//! Linux only (`/proc`); elsewhere every reading is `None` and the guard stays off.

/// The resident set size of this process in bytes (`VmRSS` in `/proc/self/status`).
///
/// `status` is read rather than `statm` because it counts in kB, so no page size is needed
/// (which would take a libc call; pages are 64 KiB on some arm64 kernels).
pub(crate) fn resident_bytes() -> Option<u64> {
    kilobytes_field(
        &std::fs::read_to_string("/proc/self/status").ok()?,
        "VmRSS:",
    )
}

/// Memory the kernel could give to new work without swapping, in bytes (`MemAvailable` in
/// `/proc/meminfo`), or `None` where `/proc` does not exist.
pub fn available_bytes() -> Option<u64> {
    kilobytes_field(
        &std::fs::read_to_string("/proc/meminfo").ok()?,
        "MemAvailable:",
    )
}

/// The value of a `Name:   1234 kB` line, in bytes.
fn kilobytes_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kilobytes: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kilobytes * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kilobyte_field_is_read_in_bytes() {
        let status = "Name:\tx\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n";
        assert_eq!(kilobytes_field(status, "VmRSS:"), Some(1024 * 1024));
        assert_eq!(kilobytes_field(status, "VmSwap:"), None);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn this_process_has_a_resident_size_and_the_machine_has_free_memory() {
        assert!(resident_bytes().is_some_and(|b| b > 0));
        assert!(available_bytes().is_some_and(|b| b > 0));
    }
}
