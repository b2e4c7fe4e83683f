//! Request headers (docs/design.md §5, §6, §7): the ones icegate decides on cannot be doubled, hidden
//! from it by `Connection`, spoofed from an untrusted peer, or smuggled upstream under a
//! look-alike name.
//!
//! Covered elsewhere: two `X-Gravitino-Active-Roles` or two `Authorization`
//! (`serve::duplicate_role_or_authorization_headers_are_400_and_never_forwarded`), `Connection`
//! naming the role header (`serve::connection_named_headers_are_removed_but_never_the_role_header`),
//! `X-Forwarded-User` without the header provider (`serve::no_or_bad_credentials_are_401_and_never_forwarded`),
//! header count and size (`serve::too_many_headers_are_431_and_never_forwarded`,
//! `serve::a_header_block_over_the_size_cap_is_431_and_never_forwarded`).

use super::{Lab, ORDERS, raw_request, status_of};
use crate::fake_upstream::{Reply, basic, raw, send};
use std::time::Duration;

/// icegate with the `header` provider, trusting `trusted` as the authenticating hop.
async fn header_lab(trusted: &str) -> Lab {
    let trusted = trusted.parse().unwrap();
    Lab::with(
        |_| Reply::ok(),
        move |c| {
            c.identity.providers = vec![icegate::config::Provider::Header, icegate::config::Provider::Simple];
            c.identity.header.trusted_peers = vec![trusted];
        },
    )
    .await
}

#[tokio::test]
async fn duckdb_style_doubled_role_header_is_400_even_with_equal_values() {
    let lab = Lab::new().await;
    let roles = ("x-gravitino-active-roles", "analyst");
    let m = lab.call("dave", "GET", ORDERS, &[roles, roles], b"").await.assert_error(400, "BadRequestException");
    assert!(m.contains("X-Gravitino-Active-Roles"), "{m}");
    // the same header in another case is the same header
    let m = lab
        .call("dave", "GET", ORDERS, &[roles, ("X-GRAVITINO-ACTIVE-ROLES", "analyst")], b"")
        .await
        .assert_error(400, "BadRequestException");
    assert!(m.contains("X-Gravitino-Active-Roles"), "{m}");
    // two Authorization headers with the same value are still two
    let auth = basic("dave");
    let a = send(lab.addr(), "GET", ORDERS, &[("authorization", &auth), ("authorization", &auth)], b"").await;
    a.assert_error(400, "BadRequestException");
    lab.up.assert_untouched();
}

#[tokio::test]
async fn connection_naming_authorization_or_the_role_header_cannot_hide_them() {
    let lab = Lab::new().await;
    // dave narrowed to a role he does not hold: 403 proves the role header was read
    let a = lab
        .call(
            "dave",
            "GET",
            ORDERS,
            &[("connection", "Authorization, X-Gravitino-Active-Roles"), ("x-gravitino-active-roles", "editor")],
            b"",
        )
        .await;
    a.assert_error(403, "ForbiddenException");
    lab.up.assert_untouched();
    // and what icegate adds upstream is never removed by the caller's `Connection`
    let a = lab
        .call(
            "alice",
            "GET",
            ORDERS,
            &[("connection", "host, authorization"), ("x-gravitino-active-roles", "analyst")],
            b"",
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let r = lab.up.only();
    assert_eq!(r.header("authorization"), Some(basic("alice").as_str()));
    assert_eq!(r.header("x-gravitino-active-roles"), Some("analyst"));
    assert!(r.header("host").is_some());
}

#[tokio::test]
async fn spoofed_forwarded_user_from_an_untrusted_peer_is_401() {
    // 127.0.0.2 is trusted; the test connects from 127.0.0.1
    let lab = header_lab("127.0.0.2").await;
    for headers in [
        vec![("x-forwarded-user", "alice")],
        vec![("x-forwarded-groups", "admins")],
        vec![("X-FORWARDED-USER", "alice"), ("x-forwarded-groups", "eng")],
    ] {
        // even alongside a valid credential of another provider: the spoof is never ignored
        let mut with_auth = headers.clone();
        let auth = basic("dave");
        with_auth.push(("authorization", &auth));
        for h in [&headers, &with_auth] {
            let m = send(lab.addr(), "GET", ORDERS, h, b"").await.assert_error(401, "NotAuthorizedException");
            assert!(m.to_lowercase().contains("x-forwarded-user"), "{m}");
        }
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn connection_naming_an_identity_header_does_not_turn_a_spoof_into_a_pass() {
    let lab = header_lab("127.0.0.2").await;
    // the spoofed header is removed as hop-by-hop, so no one is identified: 401, not alice
    let a = send(lab.addr(), "GET", ORDERS, &[("connection", "x-forwarded-user"), ("x-forwarded-user", "alice")], b"")
        .await;
    a.assert_error(401, "NotAuthorizedException");
    lab.up.assert_untouched();
}

#[tokio::test]
async fn finding_underscore_look_alikes_of_icegate_headers_are_not_forwarded() {
    // The upstream may read `X_Forwarded_User` as `X-Forwarded-User` (CGI/WSGI-style servers
    // and some proxies fold `_` into `-`): a look-alike of a header icegate sets or strips must
    // not reach it, or a caller could speak for icegate.
    let lab = header_lab("127.0.0.1").await;
    let a = send(
        lab.addr(),
        "GET",
        ORDERS,
        &[
            ("x-forwarded-user", "dave"),
            ("x_forwarded_user", "alice"),
            ("X_Forwarded_Groups", "admins"),
            ("x_gravitino_active_roles", "ALL"),
            ("x-gravitino_active-roles", "ALL"),
            ("idempotency_key", "replayed"),
            ("x_iceberg_access_delegation", "vended-credentials"),
            ("x_kept", "1"),
        ],
        b"",
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.text());
    let r = lab.up.only();
    let names: Vec<&str> = r.headers.keys().map(http::HeaderName::as_str).collect();
    for gone in [
        "x-forwarded-user",
        "x_forwarded_user",
        "x_forwarded_groups",
        "x_gravitino_active_roles",
        "x-gravitino_active-roles",
        "idempotency_key",
        "x_iceberg_access_delegation",
    ] {
        assert!(!names.contains(&gone), "{gone} was forwarded: {names:?}");
    }
    assert_eq!(r.header("x_kept"), Some("1"), "other underscored headers pass");
    // and the look-alike never identifies anyone: only the real header's user is dave
    let a = send(lab.addr(), "GET", "/v1/prod/namespaces/sales/tables/salaries", &[("x_forwarded_user", "alice")], b"")
        .await;
    a.assert_error(401, "NotAuthorizedException");
}

#[tokio::test]
async fn finding_two_forwarded_user_headers_are_refused() {
    // An authenticating hop that appends instead of replacing would put the caller's spoofed
    // value first; picking either is a guess, so icegate refuses (401).
    let lab = header_lab("127.0.0.1").await;
    for (a, b) in [("x-forwarded-user", "x-forwarded-user"), ("x-forwarded-groups", "x-forwarded-groups")] {
        let headers = [("x-forwarded-user", "dave"), (a, "alice"), (b, "admins")];
        let answer = send(lab.addr(), "GET", ORDERS, &headers, b"").await;
        let m = answer.assert_error(401, "NotAuthorizedException");
        assert!(m.contains("more than once"), "{m}");
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn non_ascii_whitespace_and_controls_in_the_role_header_are_400() {
    let lab = Lab::new().await;
    // raw bytes: NBSP (UTF-8 and Latin-1), ideographic space, vertical tab, form feed, NUL-free
    for value in [
        &b"analyst\xc2\xa0"[..],
        b"\xc2\xa0analyst",
        b"analyst\xa0",
        b"analyst,\xe3\x80\x80editor",
        b"analyst\x0b",
        b"analyst\x0c",
        b"analyst\x1f",
        b"analyst\x7f",
        b"analyst\xe2\x80\xa8",
        b"analyst\xe2\x80\x85",
    ] {
        let mut request =
            format!("GET {ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\n", basic("alice")).into_bytes();
        request.extend_from_slice(b"connection: close\r\nx-gravitino-active-roles: ");
        request.extend_from_slice(value);
        request.extend_from_slice(b"\r\n\r\n");
        let out = raw(lab.addr(), &request, Duration::from_secs(2)).await;
        assert_eq!(status_of(&out), 400, "{value:?} -> {out}");
        if out.contains("application/json") {
            assert!(out.contains("X-Gravitino-Active-Roles"), "{value:?} -> {out}");
        }
    }
    // format characters (zero-width space, BOM) are not whitespace: they make another role
    // name, which dave does not hold (403), never `analyst`
    for value in ["analyst\u{200b}", "\u{feff}analyst"] {
        let mut request =
            format!("GET {ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\n", basic("dave")).into_bytes();
        request.extend_from_slice(b"connection: close\r\nx-gravitino-active-roles: ");
        request.extend_from_slice(value.as_bytes());
        request.extend_from_slice(b"\r\n\r\n");
        let out = raw(lab.addr(), &request, Duration::from_secs(2)).await;
        assert!(matches!(status_of(&out), 400 | 403), "{value:?} -> {out}");
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn an_obs_folded_or_space_before_colon_header_is_400() {
    let lab = Lab::new().await;
    for extra in [
        "x-gravitino-active-roles: analyst\r\n editor\r\n",
        "x-gravitino-active-roles : editor\r\n",
        "authorization : Basic Ym9iOng=\r\n",
    ] {
        let out = raw(
            lab.addr(),
            raw_request(&format!("GET {ORDERS} HTTP/1.1"), extra, "").as_bytes(),
            Duration::from_secs(2),
        )
        .await;
        assert_eq!(status_of(&out), 400, "{extra:?} -> {out}");
    }
    lab.up.assert_untouched();
}

#[tokio::test]
async fn finding_method_override_headers_are_refused() {
    // A framework filter upstream (Jersey's HttpMethodOverrideFilter, Spring's
    // HiddenHttpMethodFilter and the like) would run a DELETE that icegate authorized as a GET.
    let lab = Lab::new().await;
    for name in ["x-http-method-override", "X-HTTP-Method", "x-method-override"] {
        for value in ["DELETE", "POST", "GET"] {
            let a = lab.call("dave", "GET", ORDERS, &[(name, value)], b"").await;
            let m = a.assert_error(400, "BadRequestException");
            assert!(m.to_lowercase().contains(&name.to_lowercase()), "{m}");
        }
    }
    // and in a look-alike spelling
    let a = lab.call("dave", "GET", ORDERS, &[("x_http_method_override", "DELETE")], b"").await;
    a.assert_error(400, "BadRequestException");
    lab.up.assert_untouched();
}
