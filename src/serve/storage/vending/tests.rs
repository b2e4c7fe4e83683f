use super::*;
use crate::core::iceberg::routes::{Classified, RouteOptions, classify};

fn route(method: &str, path: &str) -> Route {
    match classify(method, path, &RouteOptions::default()).unwrap() {
        Classified::Route(r) => r,
        other => panic!("{other:?}"),
    }
}

/// A table loaded again updates its entry in place, except that an entry learned by asking
/// for signing (which names the signer) is not replaced by one that may omit it.
#[test]
fn a_fresh_storage_entry_learned_for_signing_is_kept_until_signing_replaces_it() {
    let vending = Vending::new(Config::default(), None, Vec::new(), &crate::core::clock::Clock::real());
    let storage = |l: &str| Arc::new(TableStorage { locations: vec![l.to_owned()], ..TableStorage::default() });
    let cached = |for_signing| vending.cached_storage("/v1/namespaces/db/tables/t", for_signing);
    let locations = |s: Option<Arc<TableStorage>>| s.map(|s| s.locations.clone());
    vending.remember_storage("/v1/namespaces/db/tables/t", storage("s3://b/plain"), false);
    assert_eq!(locations(cached(false)), Some(vec!["s3://b/plain".to_owned()]));
    assert_eq!(cached(true), None, "not learned for signing");
    vending.remember_storage("/v1/namespaces/db/tables/t", storage("s3://b/signing"), true);
    vending.remember_storage("/v1/namespaces/db/tables/t", storage("s3://b/plain-again"), false);
    assert_eq!(locations(cached(true)), Some(vec!["s3://b/signing".to_owned()]), "kept");
    vending.remember_storage("/v1/namespaces/db/tables/t", storage("s3://b/signing-2"), true);
    assert_eq!(locations(cached(false)), Some(vec!["s3://b/signing-2".to_owned()]), "replaced");
}

fn scope(narrowed: Scope, unnarrowed: Scope) -> CredentialScope {
    CredentialScope { narrowed, unnarrowed }
}

#[test]
fn signing_endpoints_and_origins_must_parse() {
    let signing: crate::config::Credentials = toml::from_str(
        "[signing]\nendpoints = [{ url = \"http://minio:9000\", path_style = true }, { url = \"https://gw/s3\" }]\nsigner_origins = [\"https://signer.example\"]",
    )
    .unwrap();
    assert!(validate(&signing).is_ok());
    for bad in ["[signing]\nendpoints = [{ url = \"minio:9000\" }]", "[signing]\nsigner_origins = [\"https://s/path\"]"]
    {
        assert!(validate(&toml::from_str(bad).unwrap()).is_err(), "{bad}");
    }
}

#[test]
fn strip_broader_removes_only_what_narrowing_or_service_auth_made_broader() {
    use Scope::{Read, Write};
    let m = Mode::StripBroader;
    assert_eq!(action(m, scope(Write, Write), false), Action::Keep);
    assert_eq!(action(m, scope(Read, Read), false), Action::Keep);
    assert_eq!(action(m, scope(Read, Write), false), Action::Strip);
    assert_eq!(action(m, scope(Read, Read), true), Action::Strip);
    assert_eq!(action(m, scope(Write, Write), true), Action::Keep);
    assert_eq!(action(Mode::Strip, scope(Write, Write), false), Action::Strip);
    assert_eq!(action(Mode::Passthrough, scope(Read, Write), true), Action::Keep);
    assert_eq!(action(Mode::S3Downscope, scope(Read, Write), false), Action::Downscope(Read));
}

#[test]
fn a_failed_mint_is_a_502_that_does_not_quote_sts() {
    let e = VendError::Mint(StsError::Refused {
        code: "AccessDenied".into(),
        message: "User: arn:aws:iam::1:user/icegate is not authorized to perform: sts:AssumeRole".into(),
    });
    let refusal = crate::error::Refusal::from(&e);
    assert_eq!(refusal.status(), 502);
    assert!(!refusal.message.contains("arn:") && !refusal.message.contains("AccessDenied"), "{}", refusal.message);
}

#[test]
fn the_table_path_is_the_tables_own_also_for_creates_and_registers() {
    let cases = [
        ("POST", "/v1/p/namespaces/a%1Fb/tables/t/sign", None, Some("/v1/p/namespaces/a%1Fb/tables/t")),
        ("GET", "/v1/namespaces/db/tables/t/credentials", None, Some("/v1/namespaces/db/tables/t")),
        ("GET", "/v1/namespaces/tables/tables/tables", None, Some("/v1/namespaces/tables/tables/tables")),
        ("POST", "/v1/p/namespaces/db/tables", Some("new t"), Some("/v1/p/namespaces/db/tables/new%20t")),
        ("POST", "/v1/namespaces/db/register", Some("r"), Some("/v1/namespaces/db/tables/r")),
        ("POST", "/v1/namespaces/db/tables", None, None),
    ];
    for (method, path, body, expected) in cases {
        assert_eq!(table_path(&route(method, path), body).as_deref(), expected, "{path}");
    }
}

proptest::proptest! {
    /// Segments are found as `split('/')` and `match_indices('/')` find them.
    #[test]
    fn segments_are_those_split_finds(path in "[a/%é]{0,24}") {
        let segments = Segments::new(&path);
        for i in 0..14 {
            proptest::prop_assert_eq!(segments.get(i), path.split('/').nth(i));
            let through = path.split('/').nth(i)
                .and_then(|_| path.get(..path.match_indices('/').nth(i).map_or(path.len(), |(at, _)| at)));
            proptest::prop_assert_eq!(segments.through(i), through);
        }
    }
}

#[test]
fn the_table_path_keeps_a_prefix_of_several_segments_as_sent() {
    let declared = crate::core::iceberg::prefix::Prefixes::new(["catalogs/1", "arn:b/x"]);
    let options = RouteOptions { prefixes: Some(&declared), ..Default::default() };
    let cases = [
        ("POST", "/v1/catalogs/1/namespaces/db/tables/t/sign", None, "/v1/catalogs/1/namespaces/db/tables/t"),
        ("POST", "/v1/arn%3Ab%2Fx/namespaces/db/tables", Some("n"), "/v1/arn%3Ab%2Fx/namespaces/db/tables/n"),
    ];
    for (method, path, body, expected) in cases {
        let Ok(Classified::Route(route)) = classify(method, path, &options) else { panic!("{path}") };
        assert_eq!(table_path(&route, body).as_deref(), Some(expected), "{path}");
    }
}
