//! The Redis commands for each [`Op`], and the Lua scripts behind the conditional ones.
//!
//! Keys and tokens always travel as `KEYS`/`ARGV`, never spliced into script text: the scripts
//! are constants, so their SHA1 is fixed and `EVALSHA` works after one `SCRIPT LOAD` per
//! connection.

use std::sync::OnceLock;

use ::redis::{Cmd, Script};

use crate::proto::{FENCE_COUNTER_KEY, Fencing, Op};

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

/// `SET NX PX` and, when it created the key, `INCR` of the node's fencing counter (KEYS[2],
/// [`FENCE_COUNTER_KEY`], one key with no TTL shared by every resource), atomically:
/// `{counter}` when set, nil when the key exists. The counter comes from the same round as the
/// lock, so no separate counter node is needed; the core takes the largest of a quorum and
/// writes it back ([`Op::RaiseFence`]). The reply is an array so that it cannot be mistaken for
/// any other command's integer. A counter that another program wrote (not an integer, another
/// type) undoes the `SET` and answers [`FOREIGN_COUNTER`] with the node's own error.
pub(crate) const SET_NX_PX_FENCED: &str = r#"if not redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
  return false
end
local counter = redis.pcall("INCR", KEYS[2])
if type(counter) == "table" then
  redis.call("DEL", KEYS[1])
  return redis.error_reply("FOREIGNCOUNTER " .. counter.err)
end
return {counter}"#;

/// The fencing write-back: if the lock key (KEYS[1]) still holds our token (ARGV[1]), raise
/// the counter (KEYS[2]) to at least ARGV[2] and return 1; otherwise 0. A counter that is not
/// an integer answers [`FOREIGN_COUNTER`].
pub(crate) const RAISE_FENCE: &str = r#"if redis.call("GET", KEYS[1]) ~= ARGV[1] then
  return 0
end
local raw = redis.pcall("GET", KEYS[2])
if type(raw) == "table" then
  return redis.error_reply("FOREIGNCOUNTER " .. raw.err)
end
local counter = tonumber(raw or "0")
if not counter then
  return redis.error_reply("FOREIGNCOUNTER value is not an integer")
end
if tonumber(ARGV[2]) > counter then
  redis.call("SET", KEYS[2], ARGV[2])
end
return 1"#;

/// The error code the fenced scripts answer with when the fencing counter ([`FENCE_COUNTER_KEY`])
/// holds a value this client did not write; a `WRONGTYPE` from any script is about the lock's
/// own key, the only other key they read.
pub(crate) const FOREIGN_COUNTER: &str = "FOREIGNCOUNTER";

/// Every script, in the order a new connection loads them.
pub(crate) const ALL: [&str; 4] = [DEL_IF_EQ, PEXPIRE_IF_EQ, SET_NX_PX_FENCED, RAISE_FENCE];

/// The scripts, hashed once per process.
pub(crate) struct Scripts {
    pub(crate) del_if_eq: Script,
    pub(crate) pexpire_if_eq: Script,
    pub(crate) set_nx_px: Script,
    pub(crate) raise_fence: Script,
}

pub(crate) fn scripts() -> &'static Scripts {
    static SCRIPTS: OnceLock<Scripts> = OnceLock::new();
    SCRIPTS.get_or_init(|| Scripts {
        del_if_eq: Script::new(DEL_IF_EQ),
        pexpire_if_eq: Script::new(PEXPIRE_IF_EQ),
        set_nx_px: Script::new(SET_NX_PX_FENCED),
        raise_fence: Script::new(RAISE_FENCE),
    })
}

/// The command's name in messages.
pub(crate) fn command_name(op: &Op) -> &'static str {
    match op {
        Op::SetNxPx { .. } => "SET NX PX",
        Op::DelIfEq { .. } => "compare-and-delete",
        Op::PExpireIfEq { .. } => "compare-and-pexpire",
        Op::Del => "DEL",
        Op::GetEq { .. } => "GET",
        Op::RaiseFence { .. } => "fencing write-back",
    }
}

/// The script an op runs for a lock with `fencing`, if it runs one: an acquisition without
/// fencing is a plain `SET`, which needs none.
pub(crate) fn script_of(op: &Op, fencing: Fencing) -> Option<&'static Script> {
    match op {
        Op::DelIfEq { .. } => Some(&scripts().del_if_eq),
        Op::PExpireIfEq { .. } => Some(&scripts().pexpire_if_eq),
        Op::SetNxPx { .. } if fencing == Fencing::Off => None,
        Op::SetNxPx { .. } => Some(&scripts().set_nx_px),
        Op::RaiseFence { .. } => Some(&scripts().raise_fence),
        Op::Del | Op::GetEq { .. } => None,
    }
}

/// The command both clients send for `op` on `key` for a lock with `fencing`: a plain command,
/// or `EVALSHA` of its script (a node that does not know the script answers `NOSCRIPT`, and the
/// clients load the op's script and send the same command again).
///
/// With [`read_reply`](super::read_reply) it is all a driver of one's own over the sans-IO
/// [`Lock`](crate::proto::Lock) needs to speak to a Redis master as the clients do: one that
/// pipelines the rounds of many locks, say.
pub fn command(key: &str, op: &Op, fencing: Fencing) -> Cmd {
    match *op {
        Op::SetNxPx { token, ttl } if fencing == Fencing::Off => {
            let mut cmd = ::redis::cmd("SET");
            cmd.arg(key)
                .arg(token.to_string())
                .arg("NX")
                .arg("PX")
                .arg(ttl.as_u64());
            cmd
        }
        Op::SetNxPx { token, ttl } => {
            let mut cmd = ::redis::cmd("EVALSHA");
            cmd.arg(scripts().set_nx_px.get_hash())
                .arg(2)
                .arg(key)
                .arg(FENCE_COUNTER_KEY)
                .arg(token.to_string())
                .arg(ttl.as_u64());
            cmd
        }
        Op::RaiseFence { token, to } => {
            let mut cmd = ::redis::cmd("EVALSHA");
            cmd.arg(scripts().raise_fence.get_hash())
                .arg(2)
                .arg(key)
                .arg(FENCE_COUNTER_KEY)
                .arg(token.to_string())
                .arg(to);
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
        // The client compares what `GET` returns (`interpret`): the get-then-del mistake.
        Op::GetEq { .. } => {
            let mut cmd = ::redis::cmd("GET");
            cmd.arg(key);
            cmd
        }
    }
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
            String::from_utf8(command("orders\"; evil", &op, Fencing::Off).get_packed_command())
                .unwrap();
        assert!(packed.contains("EVALSHA"));
        assert!(packed.contains(scripts().pexpire_if_eq.get_hash()));
        assert!(packed.contains("orders\"; evil"));
        assert!(packed.contains("000000000000000000000000000000ab"));
        assert!(packed.contains("1500"));
        assert!(!DEL_IF_EQ.contains("orders") && !PEXPIRE_IF_EQ.contains("orders"));
    }

    #[test]
    fn an_acquisition_without_fencing_is_a_plain_set_and_with_fencing_the_script() {
        let op = Op::SetNxPx {
            token: Token(0xab),
            ttl: Millis(1500),
        };
        let plain = command("orders", &op, Fencing::Off).get_packed_command();
        assert_eq!(
            String::from_utf8(plain).unwrap(),
            "*6\r\n$3\r\nSET\r\n$6\r\norders\r\n$32\r\n000000000000000000000000000000ab\r\n\
             $2\r\nNX\r\n$2\r\nPX\r\n$4\r\n1500\r\n"
        );
        assert!(script_of(&op, Fencing::Off).is_none());
        let fenced = command("orders", &op, Fencing::WriteBack).get_packed_command();
        assert!(String::from_utf8(fenced).unwrap().contains("EVALSHA"));
    }
}
