//! Shared helpers: locating the shared conformance cases and building policies in tests.

use std::path::PathBuf;

/// `../shared/<rel>` when the shared folder is beside the checkout, else the copy kept in
/// `tests/data/<rel>` so a clean clone still runs.
pub fn shared_dir(rel: &str) -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared").join(rel);
    if shared.is_dir() { shared } else { root.join("tests/data").join(rel) }
}

pub fn load(yaml: &str) -> icegate::core::policy::Snapshot {
    match icegate::core::policy::load_str("test.yaml", yaml) {
        Ok(l) => l.snapshot,
        Err(e) => panic!("policy does not load:\n{e}"),
    }
}

/// A directory under the system temp dir, removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(label: &str) -> Self {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("icegate-test-{}-{label}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The `analyst` (reads `prod.sales`) and `editor` (modifies it) roles that several tests'
/// policies hold, as the policy's `roles:` section; [`sales_policy`] gives them users.
pub const READ_MODIFY_ROLES: &str = r#"roles:
  - name: analyst
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: SELECT_TABLE, condition: ALLOW }
  - name: editor
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: MODIFY_TABLE, condition: ALLOW }
"#;

/// A policy of catalog `prod` in metalake `lake` whose `users` (YAML flow mappings, one per
/// entry) hold [`READ_MODIFY_ROLES`].
pub fn sales_policy(users: &[&str]) -> String {
    let mut policy = String::from("\nversion: 1\nmetalake: lake\ndefault_catalog: prod\nusers:\n");
    for user in users {
        policy.push_str(&format!("  - {user}\n"));
    }
    policy + READ_MODIFY_ROLES
}

/// The policy most serving tests share (serve.rs, the adversarial suite):
/// alice (analyst+editor) reads and modifies `prod.sales`; dave (analyst) only reads it and is
/// denied `salaries`; bob creates tables there; erin holds no role; nina uses only the catalog
/// named `namespaces` (whose schema is called `tables`).
pub const SALES_POLICY: &str = r#"
version: 1
metalake: lake
default_catalog: prod
users:
  - { name: alice, roles: [analyst, editor] }
  - { name: dave, roles: [analyst] }
  - { name: bob, roles: [creator] }
  - { name: erin, roles: [] }
  - { name: nina, roles: [odd] }
roles:
  - name: analyst
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: SELECT_TABLE, condition: ALLOW }
      - type: TABLE
        fullName: prod.sales.salaries
        privileges:
          - { name: SELECT_TABLE, condition: DENY }
  - name: editor
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: MODIFY_TABLE, condition: ALLOW }
  - name: creator
    securableObjects:
      - { type: CATALOG, fullName: prod, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: prod.sales
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: CREATE_TABLE, condition: ALLOW }
  - name: odd
    securableObjects:
      - { type: CATALOG, fullName: namespaces, privileges: [{ name: USE_CATALOG, condition: ALLOW }] }
      - type: SCHEMA
        fullName: namespaces.tables
        privileges:
          - { name: USE_SCHEMA, condition: ALLOW }
          - { name: SELECT_TABLE, condition: ALLOW }
"#;
