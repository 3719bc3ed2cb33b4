//! The Redis commands for each [`Op`], and the Lua scripts behind the conditional ones.
//!
//! Keys and tokens always travel as `KEYS`/`ARGV`, never spliced into script text: the scripts
//! are constants, so their SHA1 is fixed and `EVALSHA` works after one `SCRIPT LOAD` per
//! connection.

use std::sync::OnceLock;

use ::redis::{Cmd, Script};

use crate::proto::Op;

/// Compare-and-delete, as redis.io gives it: delete the key only if it still holds our token.
pub(crate) const DEL_IF_EQ: &str = r#"if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("DEL", KEYS[1])
else
  return 0
end"#;

/// Compare-and-pexpire: reset the TTL only if the key still holds our token. A missing key is
/// never re-created (RedLock.net's extend script did that and resurrected expired locks).
pub(crate) const PEXPIRE_IF_EQ: &str = r#"if redis.call("GET", KEYS[1]) == ARGV[1] then
  return redis.call("PEXPIRE", KEYS[1], ARGV[2])
else
  return 0
end"#;

/// The two scripts, hashed once per process.
pub(crate) struct Scripts {
    pub(crate) del_if_eq: Script,
    pub(crate) pexpire_if_eq: Script,
}

pub(crate) fn scripts() -> &'static Scripts {
    static SCRIPTS: OnceLock<Scripts> = OnceLock::new();
    SCRIPTS.get_or_init(|| Scripts {
        del_if_eq: Script::new(DEL_IF_EQ),
        pexpire_if_eq: Script::new(PEXPIRE_IF_EQ),
    })
}

/// The command's name in messages.
pub(crate) fn command_name(op: &Op) -> &'static str {
    match op {
        Op::SetNxPx { .. } => "SET NX PX",
        Op::DelIfEq { .. } => "compare-and-delete",
        Op::PExpireIfEq { .. } => "compare-and-pexpire",
        Op::Del => "DEL",
    }
}

/// The script an op runs, if it runs one.
pub(crate) fn script_of(op: &Op) -> Option<&'static Script> {
    match op {
        Op::DelIfEq { .. } => Some(&scripts().del_if_eq),
        Op::PExpireIfEq { .. } => Some(&scripts().pexpire_if_eq),
        Op::SetNxPx { .. } | Op::Del => None,
    }
}

/// The command for `op` on `key`: a plain command, or `EVALSHA` of its script.
pub(crate) fn command(key: &str, op: &Op) -> Cmd {
    match *op {
        Op::SetNxPx { token, ttl } => {
            let mut cmd = ::redis::cmd("SET");
            cmd.arg(key)
                .arg(token.to_string())
                .arg("NX")
                .arg("PX")
                .arg(ttl.as_u64());
            cmd
        }
        Op::DelIfEq { token } => {
            let mut cmd = ::redis::cmd("EVALSHA");
            cmd.arg(scripts().del_if_eq.get_hash())
                .arg(1)
                .arg(key)
                .arg(token.to_string());
            cmd
        }
        Op::PExpireIfEq { token, ttl } => {
            let mut cmd = ::redis::cmd("EVALSHA");
            cmd.arg(scripts().pexpire_if_eq.get_hash())
                .arg(1)
                .arg(key)
                .arg(token.to_string())
                .arg(ttl.as_u64());
            cmd
        }
        Op::Del => {
            let mut cmd = ::redis::cmd("DEL");
            cmd.arg(key);
            cmd
        }
    }
}

/// `EVAL`-with-fallback for `op`'s script, for when `EVALSHA` found no script (the node lost
/// its script cache: `SCRIPT FLUSH`, or a restart between connect and command).
pub(crate) fn invocation(key: &str, op: &Op) -> Option<::redis::ScriptInvocation<'static>> {
    let script = script_of(op)?;
    let mut invocation = script.key(key);
    match *op {
        Op::DelIfEq { token } => {
            invocation.arg(token.to_string());
        }
        Op::PExpireIfEq { token, ttl } => {
            invocation.arg(token.to_string()).arg(ttl.as_u64());
        }
        Op::SetNxPx { .. } | Op::Del => {}
    }
    Some(invocation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Token;
    use crate::time::Millis;

    #[test]
    fn keys_and_tokens_travel_as_arguments_not_script_text() {
        let op = Op::PExpireIfEq {
            token: Token(0xab),
            ttl: Millis(1500),
        };
        let packed =
            String::from_utf8(command("orders\"; evil", &op).get_packed_command()).unwrap();
        assert!(packed.contains("EVALSHA"));
        assert!(packed.contains(scripts().pexpire_if_eq.get_hash()));
        assert!(packed.contains("orders\"; evil"));
        assert!(packed.contains("000000000000000000000000000000ab"));
        assert!(packed.contains("1500"));
        assert!(!DEL_IF_EQ.contains("orders") && !PEXPIRE_IF_EQ.contains("orders"));
    }
}
