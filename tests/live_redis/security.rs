//! AUTH with `requirepass` and with an ACL user, and TLS with a CA generated at test time.

use std::fs;

use redlock_lab::driver::redis::{Cause, NodeOptions};
use redlock_lab::driver::{Acquisition, DriverError};
use redlock_lab::time::Millis;

use crate::harness::{RedisServer, ServerOptions, TlsFiles};
use crate::{client, client_with, config};

fn with_args(args: &[&str]) -> ServerOptions {
    ServerOptions {
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        ..ServerOptions::default()
    }
}

#[test]
fn auth_with_requirepass_and_an_acl_user_and_a_wrong_password_is_a_named_auth_error() {
    let server = RedisServer::start_with(with_args(&["--requirepass", "s3cret"]));
    let port = server.port();
    let mut admin = redis::Client::open(format!("redis://:s3cret@127.0.0.1:{port}"))
        .and_then(|client| client.get_connection())
        .unwrap();
    let _: () = redis::cmd("ACL")
        .arg(&["SETUSER", "locker", "on", ">p4ss", "~*", "&*", "+@all"])
        .query(&mut admin)
        .unwrap();

    for url in [
        format!("redis://:s3cret@127.0.0.1:{port}"),
        format!("redis://locker:p4ss@127.0.0.1:{port}"),
    ] {
        let mut redlock = client(std::slice::from_ref(&url), config(1));
        let guard = redlock.lock("secured", Millis(2_000)).unwrap();
        let guard = guard.unwrap_or_else(|| panic!("{url} authenticates"));
        assert_eq!(guard.unlock().applied.len(), 1);
    }

    let wrong = format!("redis://:wrong-one@127.0.0.1:{port}");
    let mut redlock = client(&[wrong], config(1));
    let Acquisition::Unreachable(refused) = redlock.try_lock("secured", Millis(2_000)).unwrap()
    else {
        panic!("a wrong password was not refused as an unreachable node");
    };
    let error = &refused.causes[0].error;
    assert!(matches!(error.cause, Cause::Auth(_)), "{error}");
    let message = error.to_string();
    assert!(
        message.contains(&format!("redis://:***@127.0.0.1:{port}")),
        "{message}"
    );
    assert!(
        !message.contains("wrong-one"),
        "the password leaked: {message}"
    );

    // No password at all: the server answers NOAUTH to our first command.
    let mut anonymous = client(&[format!("redis://127.0.0.1:{port}")], config(1));
    let Acquisition::Unreachable(refused) = anonymous.try_lock("secured", Millis(2_000)).unwrap()
    else {
        panic!("an unauthenticated client was not refused as an unreachable node");
    };
    let error = &refused.causes[0].error;
    assert!(matches!(error.cause, Cause::Auth(_)), "{error}");
}

#[test]
fn tls_with_a_test_ca_works_and_an_untrusted_server_is_refused() {
    let tls = TlsFiles::generate();
    let servers: Vec<RedisServer> = (0..3)
        .map(|_| {
            RedisServer::start_with(ServerOptions {
                args: Vec::new(),
                tls: Some(tls.clone()),
                ..ServerOptions::default()
            })
        })
        .collect();
    let urls: Vec<String> = servers.iter().map(RedisServer::url).collect();
    assert!(urls[0].starts_with("rediss://"));

    let trusting = NodeOptions {
        root_certificate_pem: Some(fs::read(&tls.ca_cert).unwrap()),
        ..NodeOptions::default()
    };
    let mut redlock = client_with(&urls, &trusting, config(3));
    let guard = redlock
        .lock("over-tls", Millis(2_000))
        .unwrap()
        .expect("TLS nodes");
    assert!(guard.node_errors().is_empty(), "{:?}", guard.node_errors());
    assert_eq!(guard.unlock().applied.len(), 3);

    // Without our CA the system roots do not vouch for the server: unreachable, named.
    let mut untrusting = client(&urls, config(3));
    let Acquisition::Unreachable(refused) = untrusting.try_lock("over-tls", Millis(2_000)).unwrap()
    else {
        panic!("an untrusted certificate was not refused as unreachable");
    };
    assert_eq!(refused.causes.len(), 3);
    for error in refused.causes.iter().chain(&refused.errors) {
        assert!(
            matches!(error.error.cause, Cause::Unreachable(_)),
            "{}",
            error.error
        );
    }

    // Plain text to a TLS port gets no Redis answer.
    let plain: Vec<String> = urls
        .iter()
        .map(|u| u.replacen("rediss://", "redis://", 1))
        .collect();
    let mut confused = client(&plain, config(3));
    let error = confused
        .lock("over-tls", Millis(2_000))
        .expect_err("no node can answer");
    assert!(matches!(error, DriverError::Unreachable(_)), "{error}");

    // A root certificate that is not PEM trusts nothing: no connection, a named error.
    let garbage = NodeOptions {
        root_certificate_pem: Some(b"not a certificate".to_vec()),
        ..NodeOptions::default()
    };
    match redlock_lab::driver::RedisRedlock::open_with(&urls, &garbage, config(3)) {
        Err(error) => assert!(error.to_string().contains("tls"), "{error}"),
        Ok(mut refusing) => {
            let Acquisition::Unreachable(refused) =
                refusing.try_lock("over-tls", Millis(2_000)).unwrap()
            else {
                panic!("a garbage root certificate vouched for the server");
            };
            assert_eq!(refused.causes.len(), 3);
        }
    }
    drop(servers);
    if let Some(dir) = tls.ca_cert.parent() {
        let _ = fs::remove_dir_all(dir);
    }
}
