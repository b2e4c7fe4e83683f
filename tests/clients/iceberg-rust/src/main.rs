//! A client of icegate written with iceberg-rust's REST catalog (crate `iceberg-catalog-rest`),
//! the fourth client family after PyIceberg, DuckDB and Iceberg's Java client: lists namespaces
//! and tables, loads a table and reads its rows (iceberg's local file storage and Arrow scan),
//! and prints one line per call, `<call> => OK <result>` or `<call> => ERR <error>`, for
//! tests/clients/iceberg-rust/run.sh to check.
//!
//! Usage: icegate-iceberg-rust-client URI USER ROLE CALL...
//! where CALL is `namespaces`, `tables NS`, `load NS.T` or `rows NS.T`. The user goes as
//! icegate's `simple` Basic credential and ROLE as `X-Gravitino-Active-Roles`, both through the
//! client's `header.*` properties.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use futures::TryStreamExt;
use iceberg::io::LocalFsStorageFactory;
use iceberg::{Catalog, CatalogBuilder, NamespaceIdent, TableIdent};
use iceberg_catalog_rest::{REST_CATALOG_PROP_URI, RestCatalogBuilder};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: icegate-iceberg-rust-client URI USER ROLE CALL...");
        std::process::exit(2);
    }
    let basic = base64_basic(&args[2]);
    let props = HashMap::from([
        (REST_CATALOG_PROP_URI.to_owned(), args[1].clone()),
        ("header.Authorization".to_owned(), format!("Basic {basic}")),
        ("header.X-Gravitino-Active-Roles".to_owned(), args[3].clone()),
    ]);
    let catalog = match RestCatalogBuilder::default()
        .with_storage_factory(Arc::new(LocalFsStorageFactory))
        .load("icegate", props)
        .await
    {
        Ok(catalog) => catalog,
        Err(e) => {
            eprintln!("the catalog could not be opened: {e}");
            std::process::exit(1);
        }
    };
    for call in &args[4..] {
        let result = match run(&catalog, call).await {
            Ok(ok) => format!("OK {ok}"),
            Err(e) => format!("ERR {}", e.to_string().replace('\n', " ")),
        };
        println!("{call} => {result}");
    }
}

async fn run(catalog: &impl Catalog, call: &str) -> iceberg::Result<String> {
    let words: Vec<&str> = call.split_whitespace().collect();
    match words.as_slice() {
        ["namespaces"] => {
            let names: BTreeSet<String> = catalog
                .list_namespaces(None)
                .await?
                .iter()
                .map(|ns| ns.join("."))
                .collect();
            Ok(names.into_iter().collect::<Vec<_>>().join(","))
        }
        ["tables", ns] => {
            let names: BTreeSet<String> = catalog
                .list_tables(&NamespaceIdent::from_strs(ns.split('.'))?)
                .await?
                .into_iter()
                .map(|t| t.name)
                .collect();
            Ok(names.into_iter().collect::<Vec<_>>().join(","))
        }
        ["load", table] => {
            let table = catalog.load_table(&TableIdent::from_strs(table.split('.'))?).await?;
            let fields: Vec<String> = table
                .metadata()
                .current_schema()
                .as_struct()
                .fields()
                .iter()
                .map(|f| f.name.clone())
                .collect();
            Ok(format!("columns {}", fields.join(",")))
        }
        ["rows", table] => {
            let table = catalog.load_table(&TableIdent::from_strs(table.split('.'))?).await?;
            let batches: Vec<_> = table.scan().build()?.to_arrow().await?.try_collect().await?;
            let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
            Ok(format!("rows {rows}"))
        }
        _ => Err(iceberg::Error::new(
            iceberg::ErrorKind::DataInvalid,
            format!("unknown call `{call}`"),
        )),
    }
}

/// `user:-` in base64 (icegate's `simple` provider reads the name before the first `:`).
fn base64_basic(user: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let input = format!("{user}:-");
    let mut out = String::new();
    for chunk in input.as_bytes().chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}
