use super::*;

fn sign(method: &str, uri: &str, body: Option<&str>) -> SignRequest {
    SignRequest {
        region: "us-east-1".into(),
        method: method.into(),
        uri: uri.into(),
        provider: None,
        body: body.map(str::to_owned),
        ..SignRequest::default()
    }
}

fn table() -> TableStorage {
    TableStorage {
        locations: vec!["file:///wh/db/t".into(), "s3://lake/wh/db/t".into(), "s3a://lake/data/t".into()],
        endpoint: Endpoint::parse("http://127.0.0.1:9000", true),
        signer: None,
    }
}

fn checked(method: &str, uri: &str) -> Result<(), SignError> {
    check(&sign(method, uri, None), &table(), &[]).map(|c| assert_eq!(c, Checked::default()))
}

const OBJ: &str = "https://lake.s3.amazonaws.com/wh/db/t/data/f.parquet";
const BUCKET: &str = "https://lake.s3.amazonaws.com/";

#[test]
fn the_object_requests_of_s3fileio_and_pyiceberg_are_signed() {
    for (method, query) in [
        ("GET", ""),
        ("GET", "?versionId=3&partNumber=1&response-content-type=x&x-id=GetObject"),
        ("HEAD", ""),
        ("HEAD", "?versionId=3"),
        ("PUT", ""),
        ("PUT", "?partNumber=2&uploadId=u"),
        ("POST", "?uploads"),
        ("POST", "?uploads="),
        ("POST", "?uploadId=u"),
        ("DELETE", ""),
        ("DELETE", "?versionId=3"),
        ("DELETE", "?uploadId=u"),
        ("GET", "?tagging"),
        ("PUT", "?tagging"),
        ("DELETE", "?tagging&versionId=3"),
    ] {
        assert_eq!(checked(method, &format!("{OBJ}{query}")), Ok(()), "{method} {query}");
    }
    for uri in [
        "https://lake.s3.eu-west-1.amazonaws.com/wh/db/t/metadata/m.json",
        "https://lake.s3-eu-west-1.amazonaws.com/data/t/x",
        "https://s3.eu-west-1.amazonaws.com/lake/wh/db/t/f",
        "https://lake.s3.cn-north-1.amazonaws.com.cn/wh/db/t/f",
        "https://lake.s3.amazonaws.com./wh/db/t/f",
        "http://127.0.0.1:9000/lake/wh/db/t/f%20g",
        "http://127.0.0.1:9000/lake/wh/db/t",
    ] {
        assert_eq!(checked("GET", uri), Ok(()), "{uri}");
    }
}

#[test]
fn object_sub_resources_and_other_methods_are_not_signed() {
    for (method, query) in [
        ("GET", "?acl"),
        ("PUT", "?acl"),
        ("GET", "?attributes"),
        ("GET", "?torrent"),
        ("GET", "?uploadId=u"),
        ("GET", "?legal-hold"),
        ("PUT", "?legal-hold"),
        ("PUT", "?retention"),
        ("PUT", "?partNumber=1"),
        ("PUT", "?uploadId=u"),
        ("PUT", "?partNumber=1&uploadId=u&acl"),
        ("PUT", "?tagging&acl"),
        ("HEAD", "?tagging"),
        ("POST", ""),
        ("POST", "?restore"),
        ("POST", "?select&select-type=2"),
        ("POST", "?uploads&uploadId=u"),
        ("POST", "?renameObject"),
        ("DELETE", "?acl"),
        ("DELETE", "?uploadId=u&versionId=1"),
        ("GET", "?Policy"),
    ] {
        let got = checked(method, &format!("{OBJ}{query}"));
        let refused = matches!(got, Err(SignError::ObjectParameter { .. }) | Err(SignError::ObjectPost));
        assert!(refused, "{method} {query}: {got:?}");
    }
    for method in ["PATCH", "OPTIONS", "get", "TRACE", ""] {
        assert_eq!(checked(method, OBJ), Err(SignError::Method(method.into())), "{method}");
    }
}

#[test]
fn bucket_requests_are_only_listings_under_the_table_and_batch_deletes() {
    for query in [
        "?list-type=2&prefix=wh%2Fdb%2Ft%2F",
        "?list-type=2&prefix=wh%2Fdb%2Ft%2Fdata%2F&delimiter=%2F&max-keys=10&continuation-token=x&start-after=a&fetch-owner=true&encoding-type=url&x-id=ListObjectsV2",
        "?prefix=wh/db/t/metadata/&marker=m",
    ] {
        assert_eq!(checked("GET", &format!("{BUCKET}{query}")), Ok(()), "{query}");
    }
    // The finding: bucket-level requests with a `prefix` under the table were signed.
    for (method, query) in [
        ("PUT", "?policy&prefix=wh%2Fdb%2Ft%2F"),
        ("PUT", "?lifecycle&prefix=wh%2Fdb%2Ft%2F"),
        ("DELETE", "?prefix=wh%2Fdb%2Ft%2F"),
        ("GET", "?acl&prefix=wh%2Fdb%2Ft%2F"),
        ("GET", "?policy&prefix=wh/db/t/"),
        ("GET", "?versions&prefix=wh/db/t/"),
        ("GET", "?uploads&prefix=wh/db/t/"),
        ("GET", "?tagging&prefix=wh/db/t/"),
        ("PUT", "?tagging&prefix=wh/db/t/"),
        ("PUT", "?cors&prefix=wh/db/t/"),
        ("PUT", "?versioning&prefix=wh/db/t/"),
        ("PUT", "?website&prefix=wh/db/t/"),
        ("PUT", "?replication&prefix=wh/db/t/"),
        ("PUT", "?encryption&prefix=wh/db/t/"),
        ("PUT", "?notification&prefix=wh/db/t/"),
        ("PUT", "?logging&prefix=wh/db/t/"),
        ("PUT", "?object-lock&prefix=wh/db/t/"),
        ("PUT", "?prefix=wh/db/t/"),
        ("HEAD", "?prefix=wh/db/t/"),
        ("POST", "?prefix=wh/db/t/"),
        ("POST", "?delete&prefix=wh/db/t/"),
        ("GET", "?list-type=1&prefix=wh/db/t/"),
        ("GET", ""),
        ("GET", "?prefix="),
        ("GET", "?list-type=2"),
        ("DELETE", ""),
    ] {
        let got = checked(method, &format!("{BUCKET}{query}"));
        assert!(matches!(got, Err(SignError::BucketRequest { .. })), "{method} {query}: {got:?}");
    }
}

#[test]
fn a_listing_prefix_must_lie_inside_a_location() {
    for prefix in ["wh%2Fdb%2Ft", "wh%2Fdb%2Ftx%2F", "wh%2F", "wh%2Fdb%2Ft%2F..%2Fu%2F", "data%2Ft2%2F"] {
        let got = checked("GET", &format!("{BUCKET}?list-type=2&prefix={prefix}"));
        assert!(matches!(got, Err(SignError::Outside(_))), "{prefix}: {got:?}");
    }
    assert_eq!(checked("GET", &format!("{BUCKET}?list-type=2&prefix=data%2Ft%2F")), Ok(()));
}

#[test]
fn anything_outside_the_table_or_unmappable_is_refused() {
    for uri in [
        "https://lake.s3.amazonaws.com/wh/db/t2/f",
        "https://other.s3.amazonaws.com/wh/db/t/f",
        // virtual-hosted forms once read as path-style (the finding): another bucket
        "https://other.s3.cn-north-1.amazonaws.com.cn/lake/wh/db/t/f",
        "https://other.s3.amazonaws.com./lake/wh/db/t/f",
        "http://127.0.0.1:9000/lake/wh/db/t/../u/f",
        "http://127.0.0.1:9000/lake/wh/db/t/%2E%2E/u/f",
        "http://127.0.0.1:9000/lake/wh/db/tx",
        "http://127.0.0.1:9000/lake/",
        "http://127.0.0.1:9000/",
        "http://127.0.0.1:9001/lake/wh/db/t/f",
        "http://minio:9000/lake/wh/db/t/f",
        "file:///wh/db/t/f",
        "not a uri",
    ] {
        assert!(checked("GET", uri).is_err(), "{uri}");
    }
    let no_s3 = TableStorage { locations: vec!["file:///wh/db/t".into()], ..table() };
    assert_eq!(check(&sign("GET", OBJ, None), &no_s3, &[]), Err(SignError::NoLocation));
}

#[test]
fn a_custom_endpoint_is_read_as_the_table_or_the_configuration_says() {
    let virtual_hosted = TableStorage { endpoint: Endpoint::parse("http://minio.local:9000", false), ..table() };
    let ok = sign("GET", "http://lake.minio.local:9000/wh/db/t/f", None);
    assert_eq!(check(&ok, &virtual_hosted, &[]).map(|_| ()), Ok(()));
    // the finding: another bucket's virtual host, its path naming the table's bucket
    let other = sign("GET", "http://other.minio.local:9000/lake/wh/db/t/f", None);
    assert!(matches!(check(&other, &virtual_hosted, &[]), Err(SignError::Outside(_))));
    // without the table's endpoint, the configured one applies; without either, nothing does
    let bare = TableStorage { endpoint: None, ..table() };
    assert!(matches!(check(&ok, &bare, &[]), Err(SignError::Map(MapError::UnknownHost(_)))));
    let configured = [Endpoint::parse("http://minio.local:9000", false).unwrap()];
    assert_eq!(check(&ok, &bare, &configured).map(|_| ()), Ok(()));
    // the table's own endpoint is tried first
    let path_only = [Endpoint::parse("http://minio.local:9000", true).unwrap()];
    assert_eq!(check(&ok, &virtual_hosted, &path_only).map(|_| ()), Ok(()));
    assert!(check(&ok, &bare, &path_only).is_err());
}

#[test]
fn a_copy_must_read_from_the_table_too() {
    let mut copy = sign("PUT", "http://127.0.0.1:9000/lake/wh/db/t/data/new", None);
    copy.copy_sources = vec!["/lake/wh/db/t/data/old?versionId=1".into()];
    assert_eq!(check(&copy, &table(), &[]).map(|_| ()), Ok(()));
    for source in ["lake/wh/db/secret/x", "/other/wh/db/t/x", "arn:aws:s3:us-east-1:1:accesspoint/a/object/k", "lake"] {
        copy.copy_sources = vec![source.into()];
        assert!(check(&copy, &table(), &[]).is_err(), "{source}");
    }
    let mut not_put = sign("GET", OBJ, None);
    not_put.copy_sources = vec!["/lake/wh/db/t/data/old".into()];
    assert_eq!(check(&not_put, &table(), &[]), Err(SignError::CopySource));
}

fn delete_body(objects: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">{objects}<Quiet>true</Quiet></Delete>"#
    )
}

fn keys(keys: &[&str]) -> String {
    delete_body(&keys.iter().map(|k| format!("<Object><Key>{k}</Key></Object>")).collect::<String>())
}

#[test]
fn every_key_of_a_batch_delete_must_be_under_the_table() {
    let uri = "http://127.0.0.1:9000/lake/?delete";
    let deletes = |body: &str| check(&sign("POST", uri, Some(body)), &table(), &[]).map(|_| ());
    // the signature must bind the body whose keys were checked
    let body = keys(&["wh/db/t/data/a", "data/t/b"]);
    let checked = check(&sign("POST", uri, Some(&body)), &table(), &[]).unwrap();
    assert_eq!(checked.body_sha256, Some(bind::sha256_hex(body.as_bytes())));
    assert_eq!(deletes(&body), Ok(()));
    let pretty = "<Delete>\n  <Object>\n    <Key>wh/db/t/a</Key>\n    <VersionId>1</VersionId>\n  </Object>\n</Delete>";
    assert_eq!(deletes(pretty), Ok(()));
    assert_eq!(deletes(&keys(&["wh/db/t/a&amp;b", "wh/db/t/<![CDATA[c]]>"])), Ok(()));
    assert_eq!(
        deletes(&keys(&["wh/db/t/data/a", "wh/db/other/b"])),
        Err(SignError::Outside("s3://lake/wh/db/other/b".into()))
    );
    // entities and CDATA are read as S3 reads them
    assert!(matches!(deletes(&keys(&["wh/db/t/&#x2E;&#x2E;/x/y"])), Err(SignError::Outside(_))));
    assert!(matches!(deletes(&keys(&["<![CDATA[wh/db/other/x]]>"])), Err(SignError::Outside(_))));
}

#[test]
fn a_batch_delete_icegate_could_read_differently_from_s3_is_refused() {
    let uri = "http://127.0.0.1:9000/lake/?delete";
    for body in [
        "",
        "<Delete/>",
        "<Delete>",
        "<NotDelete><Object><Key>wh/db/t/a</Key></Object></NotDelete>",
        "<Delete><Object/></Delete>",
        // the finding: only the first of two keys was checked
        "<Delete><Object><Key>wh/db/t/a</Key><Key>wh/db/other/b</Key></Object></Delete>",
        "<Delete><Object><Key>wh/db/t/a<!-- x --></Key></Object></Delete>",
        "<Delete><Object><Key>wh/db/t/<b/>a</Key></Object></Delete>",
        "<Delete><Object><Key>wh/db/t/a</Key><Other/></Object></Delete>",
        "<Delete><Object><Key>wh/db/t/a</Key></Object><Unknown/></Delete>",
        // found by the fuzz target: keys nested where S3 expects text
        "<Delete><Object><Key>wh/db/t/a</Key><VersionId><Object><Key>wh/db/other/b</Key></Object></VersionId></Object></Delete>",
        "<Delete><Object><Key>wh/db/t/a</Key></Object><Quiet><Key>wh/db/other/b</Key></Quiet></Delete>",
        "<Delete>text<Object><Key>wh/db/t/a</Key></Object></Delete>",
        r#"<?xml version="1.0"?><!DOCTYPE Delete [<!ENTITY k "wh/db/other/x">]><Delete><Object><Key>&k;</Key></Object></Delete>"#,
        r#"<!DOCTYPE Delete SYSTEM "http://example.com/d.dtd"><Delete><Object><Key>wh/db/t/a</Key></Object></Delete>"#,
    ] {
        let got = check(&sign("POST", uri, Some(body)), &table(), &[]);
        assert!(matches!(got, Err(SignError::BadDeleteBody(_))), "{body}: {got:?}");
    }
    let no_body = check(&sign("POST", uri, None), &table(), &[]);
    assert!(matches!(no_body, Err(SignError::BadDeleteBody(_))));
}

#[test]
fn a_host_header_must_name_the_uris_host() {
    let with_host = |uri: &str, hosts: &[&str]| {
        let mut s = sign("GET", uri, None);
        s.hosts = hosts.iter().map(|h| (*h).to_owned()).collect();
        check(&s, &table(), &[]).map(|_| ())
    };
    for (uri, host) in [
        (OBJ, "lake.s3.amazonaws.com"),
        (OBJ, "LAKE.s3.amazonaws.com.:443"),
        ("http://127.0.0.1:9000/lake/wh/db/t/f", "127.0.0.1:9000"),
        ("https://lake.s3.amazonaws.com./wh/db/t/f", "lake.s3.amazonaws.com"),
    ] {
        assert_eq!(with_host(uri, &[host]), Ok(()), "{uri} {host}");
    }
    // The finding: the signer signs the given host, whose bucket S3 then reads.
    for (uri, hosts) in [
        (OBJ, &["other.s3.amazonaws.com"][..]),
        (OBJ, &["lake.s3.amazonaws.com:8443"][..]),
        (OBJ, &["lake.s3.amazonaws.com", "other.s3.amazonaws.com"][..]),
        (OBJ, &["u@lake.s3.amazonaws.com"][..]),
        (OBJ, &[""][..]),
        ("http://127.0.0.1:9000/lake/wh/db/t/f", &["other.127.0.0.1:9000"][..]),
    ] {
        assert!(matches!(with_host(uri, hosts), Err(SignError::Host(_))), "{uri} {hosts:?}");
    }
}
