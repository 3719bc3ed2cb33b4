//! A node's name for messages: its URL with any password masked.

/// `url` with the password of its user-info part (`redis://user:secret@host`) and any `pass` or
/// `password` query parameter (`redis+unix:///s.sock?pass=secret`) replaced by `***`, so an
/// error message or a log line can name the node without leaking the secret.
pub(crate) fn redact(url: &str) -> String {
    let (without_query, query) = match url.split_once('?') {
        Some((head, query)) => (head, Some(query)),
        None => (url, None),
    };
    let mut out = match without_query.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = match rest.find('/') {
                Some(slash) => rest.split_at(slash),
                None => (rest, ""),
            };
            let authority = match authority.rsplit_once('@') {
                Some((user_info, host)) => match user_info.split_once(':') {
                    Some((user, _password)) => format!("{user}:***@{host}"),
                    None => authority.to_owned(),
                },
                None => authority.to_owned(),
            };
            format!("{scheme}://{authority}{path}")
        }
        None => without_query.to_owned(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if name == "pass" || name == "password" => format!("{name}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn passwords_are_masked_and_everything_else_is_kept() {
        let cases = [
            ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"),
            (
                "redis://:hunter2@127.0.0.1:6379",
                "redis://:***@127.0.0.1:6379",
            ),
            (
                "rediss://alice:p@ss@host:1/2",
                "rediss://alice:***@host:1/2",
            ),
            ("redis://alice@host", "redis://alice@host"),
            (
                "redis+unix:///tmp/r.sock?db=1&pass=x",
                "redis+unix:///tmp/r.sock?db=1&pass=***",
            ),
            ("not a url", "not a url"),
        ];
        for (url, expected) in cases {
            assert_eq!(redact(url), expected, "{url}");
        }
    }
}
