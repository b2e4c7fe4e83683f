//! A loadTable response as a vending catalog sends it: about `metadata_bytes` of table
//! metadata (snapshots with summaries), then `config` and `storage-credentials` with decoys.

use std::fmt::Write as _;

pub fn response(metadata_bytes: usize) -> Vec<u8> {
    let mut snapshots = String::with_capacity(metadata_bytes + 4096);
    let mut id: u64 = 1;
    while snapshots.len() < metadata_bytes {
        if id > 1 {
            snapshots.push(',');
        }
        let _ = write!(
            snapshots,
            r#"{{"snapshot-id":{id},"parent-snapshot-id":{},"sequence-number":{id},"timestamp-ms":{},"manifest-list":"s3://lake/wh/db/t/metadata/snap-{id}-1-4d3c2b1a.avro","summary":{{"operation":"append","added-data-files":"4","added-records":"1000","added-files-size":"409600","changed-partition-count":"1","total-records":"{}","total-files-size":"{}","total-data-files":"{}","total-delete-files":"0","note":"a \"quoted\" value with {{braces}} and [brackets]"}},"schema-id":0}}"#,
            id.saturating_sub(1),
            1_700_000_000_000u64 + id,
            id * 1000,
            id * 409_600,
            id * 4
        );
        id += 1;
    }
    format!(
        r#"{{"metadata-location":"s3://lake/wh/db/t/metadata/00042.metadata.json","metadata":{{"format-version":2,"table-uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1","location":"s3://lake/wh/db/t","last-sequence-number":{id},"last-updated-ms":1700000000000,"last-column-id":3,"current-schema-id":0,"schemas":[{{"type":"struct","schema-id":0,"fields":[{{"id":1,"name":"id","required":true,"type":"long"}},{{"id":2,"name":"data","required":false,"type":"string"}},{{"id":3,"name":"ts","required":false,"type":"timestamptz"}}]}}],"default-spec-id":0,"partition-specs":[{{"spec-id":0,"fields":[]}}],"last-partition-id":999,"default-sort-order-id":0,"sort-orders":[{{"order-id":0,"fields":[]}}],"properties":{{"write.data.path":"s3://lake/data/t","owner":"etl"}},"current-snapshot-id":{},"snapshots":[{snapshots}],"snapshot-log":[],"metadata-log":[]}},"config":{{"s3.access-key-id":"AKIA-UPSTREAM","s3.secret-access-key":"secret","s3.session-token":"session","token":"catalog-token","client.region":"eu-west-1","s3.endpoint":"https://s3.eu-west-1.amazonaws.com"}},"storage-credentials":[{{"prefix":"s3://lake/","config":{{"s3.access-key-id":"ROOT"}}}},{{"prefix":"s3://lake/wh/db/t","config":{{"s3.access-key-id":"TABLE"}}}}]}}"#,
        id - 1
    )
    .into_bytes()
}
