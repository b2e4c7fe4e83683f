//! Availability (docs/design.md §7 "Timeouts and limits are always on"): slow or idle clients, floods
//! of connections and slow readers cannot hold icegate's capacity for long, and nothing half
//! received is ever forwarded.
//!
//! Covered elsewhere: a slow header block (`serve::a_slow_header_block_is_cut_off_and_never_forwarded`),
//! a slow upstream (`serve::a_slow_upstream_is_504`), upstream resets mid-body
//! (`serve::a_list_cut_off_mid_body_is_502_not_a_partial_list`,
//! `serve::a_streamed_response_cut_off_mid_body_does_not_reach_the_client_as_complete`,
//! `serve::a_credential_bearing_response_cut_off_mid_body_is_502`), policy reloads under ordinary
//! load (`reload::reload_under_load_never_mixes_policies_and_takes_effect_within_two_seconds`);
//! reloads under attack load are tried here.

use super::{Lab, ORDERS, status_of};
use crate::fake_upstream::{Reply, basic, raw};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const CREATE: &str = "/v1/prod/namespaces/sales/tables";
const BODY: &str = r#"{"name":"t","schema":{"type":"struct","fields":[]}}"#;

/// Reads until the peer closes or `wait` passes; whether it closed.
async fn closed_within(stream: &mut TcpStream, wait: Duration) -> (bool, String) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + wait;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (true, String::from_utf8_lossy(&out).into_owned()),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => return (false, String::from_utf8_lossy(&out).into_owned()),
        }
    }
}

#[tokio::test]
async fn finding_a_silent_or_idle_connection_is_closed() {
    let lab = Lab::with(|_| Reply::ok(), |c| c.limits.header_read_timeout_ms = 300).await;
    let mut idle = TcpStream::connect(lab.addr()).await.unwrap();
    let (closed, _) = closed_within(&mut idle, Duration::from_secs(3)).await;
    assert!(closed, "a connection that never sends a byte holds a slot forever");
    // and an idle keep-alive connection after one request
    let mut kept = TcpStream::connect(lab.addr()).await.unwrap();
    let request = format!("GET {ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\n\r\n", basic("alice"));
    kept.write_all(request.as_bytes()).await.unwrap();
    let (closed, out) = closed_within(&mut kept, Duration::from_secs(3)).await;
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert!(closed, "an idle keep-alive connection holds a slot forever");
}

#[tokio::test]
async fn finding_a_slow_body_sender_is_cut_off_and_never_forwarded() {
    let lab = Lab::with(|_| Reply::ok(), |c| c.limits.body_read_timeout_ms = 400).await;
    let mut stream = TcpStream::connect(lab.addr()).await.unwrap();
    let head = format!(
        "POST {CREATE} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        basic("bob"),
        BODY.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    // one byte every 150 ms: it would take ~8 s to finish
    let mut out = String::new();
    for b in BODY.bytes() {
        if stream.write_all(&[b]).await.is_err() {
            break;
        }
        let mut buf = [0u8; 2048];
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(150), stream.read(&mut buf)).await {
            out.push_str(&String::from_utf8_lossy(&buf[..n]));
            break;
        }
    }
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert_eq!(status_of(&out), 408, "{out}");
    assert!(out.contains("RequestTimeoutException"), "{out}");
    lab.up.assert_untouched();
}

#[tokio::test]
async fn finding_a_flood_of_silent_connections_does_not_hold_the_cap() {
    let lab = Lab::with(
        |_| Reply::ok(),
        |c| {
            c.limits.max_connections = 4;
            c.limits.header_read_timeout_ms = 300;
        },
    )
    .await;
    // a flood of connections that say nothing
    let mut flood = Vec::new();
    for _ in 0..16 {
        flood.push(TcpStream::connect(lab.addr()).await.unwrap());
    }
    // a real client still gets through within a bounded time
    let started = Instant::now();
    let request =
        format!("GET {ORDERS} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\nconnection: close\r\n\r\n", basic("dave"));
    let out = raw(lab.addr(), request.as_bytes(), Duration::from_secs(6)).await;
    assert_eq!(status_of(&out), 200, "{out}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    drop(flood);
    assert_eq!(lab.targets(), [ORDERS]);
}

#[tokio::test]
async fn slow_readers_do_not_hold_the_in_flight_cap() {
    // 4 MiB responses that the flood never reads
    let big = format!(r#"{{"metadata":{{}},"pad":"{}"}}"#, "x".repeat(4 << 20));
    let lab = Lab::with(
        move |r| if r.target.ends_with("/big") { Reply::raw(200, &big) } else { Reply::ok() },
        |c| {
            c.limits.max_in_flight = 2;
            c.credentials.mode = icegate::config::credentials::Mode::Passthrough;
        },
    )
    .await;
    let mut readers = Vec::new();
    for _ in 0..6 {
        let mut s = TcpStream::connect(lab.addr()).await.unwrap();
        let request = format!(
            "GET /v1/prod/namespaces/sales/views/big HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\n\r\n",
            basic("alice")
        );
        s.write_all(request.as_bytes()).await.unwrap();
        readers.push(s);
    }
    // the slow readers hold what the cap allows: the upstream has answered two of them
    lab.up.until_requests(2).await;
    let started = Instant::now();
    let a =
        tokio::time::timeout(Duration::from_secs(5), lab.get("dave", ORDERS)).await.expect("starved by slow readers");
    assert_eq!(a.status, 200, "{}", a.text());
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    drop(readers);
}

#[tokio::test]
async fn a_half_sent_body_does_not_block_other_requests_and_completes_later() {
    let lab = Lab::new().await;
    let mut stream = TcpStream::connect(lab.addr()).await.unwrap();
    let head = format!(
        "POST {CREATE} HTTP/1.1\r\nhost: x\r\nauthorization: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        basic("bob"),
        BODY.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&BODY.as_bytes()[..10]).await.unwrap();
    // meanwhile other requests are served
    for _ in 0..5 {
        assert_eq!(lab.get("dave", ORDERS).await.status, 200);
    }
    stream.write_all(&BODY.as_bytes()[10..]).await.unwrap();
    let (_, out) = closed_within(&mut stream, Duration::from_secs(3)).await;
    assert_eq!(status_of(&out), 200, "{out}");
    assert_eq!(lab.up.requests().iter().filter(|r| r.target == CREATE).count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn policy_reloads_during_an_attack_never_let_a_denied_request_through() {
    use crate::fake_upstream::{FakeUpstream, send};
    let upstream = FakeUpstream::start(|_| Reply::ok()).await;
    let dir = crate::support::TempDir::new("attack-reload");
    let file = dir.write("policy.yaml", super::POLICY);
    let (addr, shared) = crate::reload::start(&upstream, &file, None).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // answers the clients have had, so that each policy state is attacked before the next
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let denied: &[(&str, &str)] = &[
        ("dave", "/v1/prod/namespaces/sales/tables/salaries"),
        ("erin", ORDERS),
        ("dave", "/v1/prod/namespaces/hr/tables/payroll"),
        ("dave", "/v1/prod/namespaces/sales/tables/salari%65s"),
        ("mallory", ORDERS),
    ];
    let mut attackers = Vec::new();
    for &(user, target) in denied {
        let (stop, answered) = (stop.clone(), answered.clone());
        attackers.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let a = send(addr, "GET", target, &[("authorization", &basic(user))], b"").await;
                assert_eq!(a.status, 403, "{user} {target}: {}", a.text());
                answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                n += 1;
            }
            n
        }));
    }
    let legit = {
        let (stop, answered) = (stop.clone(), answered.clone());
        tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let a = send(addr, "GET", ORDERS, &[("authorization", &basic("dave"))], b"").await;
                assert_eq!(a.status, 200, "{}", a.text());
                answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                n += 1;
            }
            n
        })
    };
    // reload 20 times: alternately a changed policy, the original, and a broken one (which
    // fails to load and leaves the last good one serving)
    let changed = format!("{}\n# generation marker\n", super::POLICY);
    for i in 0..20 {
        let text = match i % 3 {
            0 => changed.as_str(),
            1 => super::POLICY,
            _ => "version: 1\nmetalake: [broken",
        };
        std::fs::write(&file, text).unwrap();
        let _ = icegate::ops::reload::reload_now(&shared);
        let (before, reloaded) = (answered.load(std::sync::atomic::Ordering::Relaxed), Instant::now());
        while answered.load(std::sync::atomic::Ordering::Relaxed) < before + 6 {
            assert!(reloaded.elapsed() < Duration::from_secs(5), "the clients stopped being answered");
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut refused = 0;
    for a in attackers {
        refused += a.await.unwrap();
    }
    let served = legit.await.unwrap();
    assert!(refused > 20 && served > 5, "the load kept running: {refused} refused, {served} served");
    assert!(shared.state.load().generation > 5, "the reloads took effect");
    for r in upstream.requests() {
        assert_eq!(r.target, ORDERS, "a denied request was forwarded: {r:#?}");
        assert_eq!(r.header("authorization"), Some(basic("dave").as_str()));
    }
}
