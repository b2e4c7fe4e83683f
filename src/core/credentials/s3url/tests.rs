use super::*;

fn target(uri: &str, endpoints: &[Endpoint]) -> Result<(String, String), MapError> {
    map(uri, endpoints).map(|t| (t.bucket, t.key))
}

fn ok(bucket: &str, key: &str) -> Result<(String, String), MapError> {
    Ok((bucket.to_owned(), key.to_owned()))
}

#[test]
fn every_aws_host_form_is_read_as_s3_reads_it() {
    for (uri, bucket, key) in [
        // virtual-hosted, every partition and variant
        ("https://lake.s3.amazonaws.com/wh/f", "lake", "wh/f"),
        ("https://lake.s3.us-east-1.amazonaws.com/wh/f", "lake", "wh/f"),
        ("https://lake.s3-us-west-2.amazonaws.com/wh/f", "lake", "wh/f"),
        ("https://lake.s3-external-1.amazonaws.com/wh/f", "lake", "wh/f"),
        ("https://lake.s3.dualstack.eu-west-1.amazonaws.com/wh/f", "lake", "wh/f"),
        ("https://lake.s3-fips.us-gov-west-1.amazonaws.com/wh/f", "lake", "wh/f"),
        ("https://lake.s3-fips.dualstack.us-east-2.amazonaws.com/wh/f", "lake", "wh/f"),
        ("https://lake.s3-accelerate.amazonaws.com/wh/f", "lake", "wh/f"),
        ("https://lake.s3-accelerate.dualstack.amazonaws.com/wh/f", "lake", "wh/f"),
        ("https://lake.s3.cn-north-1.amazonaws.com.cn/wh/f", "lake", "wh/f"),
        ("https://lake.s3.dualstack.cn-northwest-1.amazonaws.com.cn/wh/f", "lake", "wh/f"),
        ("https://lake.s3.us-iso-east-1.c2s.ic.gov/wh/f", "lake", "wh/f"),
        ("https://lake.s3.us-isob-east-1.sc2s.sgov.gov/wh/f", "lake", "wh/f"),
        ("https://lake.s3.eusc-de-east-1.amazonaws.eu/wh/f", "lake", "wh/f"),
        ("https://my.dotted.lake.s3.us-east-1.amazonaws.com/wh/f", "my.dotted.lake", "wh/f"),
        // a bucket named like an endpoint label is still the bucket
        ("https://dualstack.s3.us-east-1.amazonaws.com/k", "dualstack", "k"),
        ("https://s3.s3.amazonaws.com/k", "s3", "k"),
        // a trailing dot, upper case and a port are the same host
        ("https://lake.s3.amazonaws.com./wh/f", "lake", "wh/f"),
        ("https://LAKE.S3.EU-WEST-1.AMAZONAWS.COM/wh/f", "lake", "wh/f"),
        ("https://lake.s3.amazonaws.com:443/wh/f", "lake", "wh/f"),
        // path-style on the regional and global hosts
        ("https://s3.amazonaws.com/lake/wh/f", "lake", "wh/f"),
        ("https://s3.us-east-1.amazonaws.com/lake/wh/f", "lake", "wh/f"),
        ("https://s3-us-west-2.amazonaws.com/lake/wh/f", "lake", "wh/f"),
        ("https://s3.dualstack.us-east-1.amazonaws.com/lake/wh/f", "lake", "wh/f"),
        ("https://s3-fips.us-gov-west-1.amazonaws.com/lake/wh/f", "lake", "wh/f"),
        ("https://s3.cn-north-1.amazonaws.com.cn/lake/wh/f", "lake", "wh/f"),
        ("https://s3.amazonaws.com./Legacy_Bucket/wh/f", "Legacy_Bucket", "wh/f"),
        // keys are decoded once; the bucket request has an empty key
        ("https://lake.s3.amazonaws.com/wh/a%20b%2Fc%2B", "lake", "wh/a b/c+"),
        ("https://lake.s3.amazonaws.com/", "lake", ""),
        ("https://s3.amazonaws.com/lake", "lake", ""),
        ("https://s3.amazonaws.com/lake/", "lake", ""),
    ] {
        assert_eq!(target(uri, &[]), ok(bucket, key), "{uri}");
    }
}

#[test]
fn aws_hosts_icegate_cannot_read_with_certainty_are_refused() {
    for uri in [
        "https://ap-123456789012.s3-accesspoint.us-west-2.amazonaws.com/k",
        "https://ap.s3-accesspoint.dualstack.us-west-2.amazonaws.com/k",
        "https://b--usw2-az1--x-s3.s3express-usw2-az1.us-west-2.amazonaws.com/k",
        "https://lake.s3-website-us-east-1.amazonaws.com/k",
        "https://lake.s3-website.eu-west-1.amazonaws.com/k",
        "https://lake.s3-object-lambda.us-east-1.amazonaws.com/k",
        "https://123.s3-control.us-east-1.amazonaws.com/k",
        "https://bucket.vpce-1a2b.s3.us-east-1.vpce.amazonaws.com/k",
        "https://s3-accelerate.amazonaws.com/lake/k",
        "https://lake.s3.amazonaws.com.cn/k",
        "https://lake.s3-cn-north-1.amazonaws.com.cn/k",
        "https://lake.ec2.us-east-1.amazonaws.com/k",
        "https://amazonaws.com/lake/k",
        "https://lake.s3.us-east.amazonaws.com/k",
    ] {
        assert!(matches!(target(uri, &[]), Err(MapError::UnknownHost(_))), "{uri}: {:?}", target(uri, &[]));
    }
}

#[test]
fn other_hosts_are_read_only_as_a_configured_endpoint_says() {
    let virtual_too = Endpoint::parse("http://minio.local:9000", false).unwrap();
    let path_only = Endpoint::parse("http://storage.local:9000/", true).unwrap();
    let based = Endpoint::parse("https://gw.local/s3/", false).unwrap();
    let ip = Endpoint::parse("http://127.0.0.1:9000", false).unwrap();
    let all = [virtual_too, path_only, based, ip];
    for (uri, bucket, key) in [
        ("http://minio.local:9000/lake/wh/f", "lake", "wh/f"),
        ("http://lake.minio.local:9000/wh/f", "lake", "wh/f"),
        ("http://my.lake.minio.local.:9000/wh/f", "my.lake", "wh/f"),
        ("http://storage.local:9000/lake/wh/f", "lake", "wh/f"),
        ("https://gw.local/s3/lake/wh/f", "lake", "wh/f"),
        ("https://lake.gw.local/s3/wh/f", "lake", "wh/f"),
        ("http://127.0.0.1:9000/lake/wh/f", "lake", "wh/f"),
    ] {
        assert_eq!(target(uri, &all), ok(bucket, key), "{uri}");
    }
    for uri in [
        // a virtual-hosted form of a path-style-only endpoint: the store may read either way
        "http://lake.storage.local:9000/wh/f",
        // not the endpoint's port, scheme or host
        "http://minio.local:9001/lake/wh/f",
        "https://minio.local:9000/lake/wh/f",
        "http://minio.local.evil:9000/lake/wh/f",
        "http://xminio.local:9000/lake/wh/f",
        "http://unknown:9000/lake/wh/f",
        // outside the endpoint's base path
        "https://gw.local/s3x/lake/wh/f",
        "https://gw.local/lake/wh/f",
    ] {
        assert!(matches!(target(uri, &all), Err(MapError::UnknownHost(_))), "{uri}: {:?}", target(uri, &all));
    }
    // the first endpoint that names a host decides
    let first = [Endpoint::parse("http://s.local", true).unwrap(), Endpoint::parse("http://s.local", false).unwrap()];
    assert!(target("http://lake.s.local/k", &first).is_err());
    // an AWS host is read by AWS's rules even when configured otherwise
    let aws = [Endpoint::parse("https://s3.us-east-1.amazonaws.com", true).unwrap()];
    assert_eq!(target("https://lake.s3.us-east-1.amazonaws.com/k", &aws), ok("lake", "k"));
}

#[test]
fn urls_that_could_be_read_two_ways_are_refused() {
    for uri in [
        "not a url",
        "s3://lake/wh/f",
        "ftp://lake.s3.amazonaws.com/wh/f",
        "/lake/wh/f",
        "https://user@lake.s3.amazonaws.com/wh/f",
        "https://lake.s3.amazonaws.com../wh/f",
        "https://s3.amazonaws.com/",
        "https://s3.amazonaws.com//wh/f",
        "https://s3.amazonaws.com/la%6Be/wh/f",
        "https://s3.amazonaws.com/../wh/f",
        "https://lake.s3.amazonaws.com/wh/%zz",
        "https://lake.s3.amazonaws.com/wh/%FF",
        "https://lake.s3.amazonaws.com/wh/f?prefix=a+b",
        "https://lake.s3.amazonaws.com/?prefix=a&prefix=b",
        "https://lake.s3.amazonaws.com/wh/f#x",
    ] {
        assert!(target(uri, &[]).is_err(), "{uri}: {:?}", target(uri, &[]));
    }
}

#[test]
fn query_parameters_are_decoded_once_in_order() {
    let t = map("https://lake.s3.amazonaws.com/?list-type=2&prefix=wh%2Fa%20b%2F&delete&x=", &[]).unwrap();
    let names: Vec<(&str, &str)> = t.query.iter().map(|(n, v)| (n.as_str(), v.as_str())).collect();
    assert_eq!(names, [("list-type", "2"), ("prefix", "wh/a b/"), ("delete", ""), ("x", "")]);
    assert_eq!((t.get("prefix"), t.has("delete"), t.has("uploads")), (Some("wh/a b/"), true, false));
}

#[test]
fn origins_and_endpoints_parse_only_http_urls() {
    assert_eq!(
        Origin::parse("HTTPS://Signer.Example."),
        Some(Origin { scheme: "https", host: "signer.example".into(), port: 443 })
    );
    assert_eq!(Origin::parse("http://h:8181/").map(|o| o.port), Some(8181));
    for bad in ["h:8181", "ftp://h", "http://h/path", "http://h?q", "http://u@h"] {
        assert_eq!(Origin::parse(bad), None, "{bad}");
    }
    assert!(Endpoint::parse("http://minio:9000/base", true).is_some());
    assert!(Endpoint::parse("minio:9000", true).is_none());
    assert!(Endpoint::parse("http://minio:9000/?q=1", true).is_none());
}
