//! The checks run on the project's deploy/ tree, and on copies broken one thing at a time.

use super::*;

// ---------------------------------------------------------------------------------------------
// The tests

fn dockerignore() -> String {
    std::fs::read_to_string(Path::new(ROOT).join("deploy/Dockerfile.dockerignore")).unwrap()
}

fn assert_clean(problems: Vec<String>) {
    assert!(problems.is_empty(), "problems:\n  {}", problems.join("\n  "));
}

fn assert_reports(problems: Vec<String>, needle: &str) {
    assert!(problems.iter().any(|p| p.contains(needle)), "expected a problem containing `{needle}`, got {problems:#?}");
}

#[test]
fn dockerfile_builds_with_the_projects_toolchain_and_runs_as_a_numeric_non_root_user() {
    assert_clean(dockerfile_problems(&dockerfile(), &dockerignore()));
}

#[test]
fn sidecar_manifests_agree_with_the_config_they_mount_and_the_image() {
    assert_clean(problems(&load_manifests("deploy/kubernetes/sidecar"), &dockerfile(), Pattern::Sidecar));
}

#[test]
fn gateway_manifests_agree_with_the_config_they_mount_and_the_image() {
    assert_clean(problems(&load_manifests("deploy/kubernetes/gateway"), &dockerfile(), Pattern::Gateway));
}

#[test]
fn both_patterns_mount_the_same_paths_the_image_expects() {
    let (s, g) = (load_manifests("deploy/kubernetes/sidecar"), load_manifests("deploy/kubernetes/gateway"));
    let args = |m: &Manifests| {
        strings(
            &m.of_kind("Deployment")[0]["spec"]["template"]["spec"]["containers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == "icegate")
                .unwrap()["args"],
        )
    };
    assert_eq!(args(&s), args(&g));
    assert_eq!(config_flag(&args(&s)), dockerfile().cmd_config().ok());
}

// Each check can fail: break one thing in a copy and see it reported.

fn sidecar() -> Manifests {
    load_manifests("deploy/kubernetes/sidecar")
}

fn gateway() -> Manifests {
    load_manifests("deploy/kubernetes/gateway")
}

fn icegate_container<'a>(m: &'a mut Manifests, deployment: &str) -> &'a mut Value {
    let containers =
        m.find_mut("Deployment", deployment)["spec"]["template"]["spec"]["containers"].as_array_mut().unwrap();
    containers.iter_mut().find(|c| c["name"] == "icegate").unwrap()
}

#[test]
fn a_sub_path_mount_of_the_policy_is_reported() {
    let mut m = sidecar();
    let mounts = icegate_container(&mut m, "iceberg-catalog")["volumeMounts"].as_array_mut().unwrap();
    for mount in mounts.iter_mut().filter(|m| m["mountPath"] == "/etc/icegate/policy") {
        mount["subPath"] = "lake.yaml".into();
    }
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "subPath");
}

#[test]
fn a_probe_on_the_wrong_port_or_path_is_reported() {
    let mut m = sidecar();
    icegate_container(&mut m, "iceberg-catalog")["readinessProbe"]["httpGet"]["port"] = "http".into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "readinessProbe port");
    let mut m = gateway();
    icegate_container(&mut m, "icegate")["livenessProbe"]["httpGet"]["path"] = "/readyz".into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "livenessProbe is not an httpGet of `/healthz`");
}

#[test]
fn a_service_that_reaches_the_catalog_directly_is_reported() {
    let mut m = sidecar();
    m.find_mut("Service", "iceberg-catalog")["spec"]["ports"][0]["targetPort"] = 8080.into();
    let found = problems(&m, &dockerfile(), Pattern::Sidecar);
    assert_reports(found.clone(), "is not icegate's listen port");
    assert_reports(found, "exposes the catalog's own port");
}

#[test]
fn a_config_that_listens_on_loopback_or_another_port_is_reported() {
    let mut m = sidecar();
    let doc = m.find_mut("ConfigMap", "iceberg-catalog-icegate-config");
    let text = doc["data"]["icegate.toml"].as_str().unwrap().replace("0.0.0.0:9181", "127.0.0.1:9191");
    doc["data"]["icegate.toml"] = text.into();
    let found = problems(&m, &dockerfile(), Pattern::Sidecar);
    assert_reports(found.clone(), "not reachable from outside the pod");
    assert_reports(found.clone(), "containerPorts");
    assert_reports(found, "admin port 9191");
}

#[test]
fn a_config_key_icegate_does_not_know_is_reported() {
    let mut m = gateway();
    let doc = m.find_mut("Secret", "icegate-config");
    let text = format!("listn = \"0.0.0.0:8181\"\n{}", doc["stringData"]["icegate.toml"].as_str().unwrap());
    doc["stringData"]["icegate.toml"] = text.into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "unknown field `listn`");
}

#[test]
fn a_policy_that_does_not_load_is_reported() {
    let mut m = sidecar();
    let doc = m.find_mut("ConfigMap", "iceberg-catalog-icegate-policy");
    let text = doc["data"]["lake.yaml"].as_str().unwrap().replace("SELECT_VIEW", "SELECT_VIEWS");
    doc["data"]["lake.yaml"] = text.into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "unknown privilege `SELECT_VIEWS`");
    // A key without the .yaml suffix is not a policy file of the mounted directory.
    let mut m = gateway();
    let doc = m.find_mut("ConfigMap", "icegate-policy");
    let text = doc["data"]["lake.yaml"].take();
    doc["data"] = serde_json::json!({ "lake.txt": text });
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "holds no policy file");
}

#[test]
fn a_policy_mount_that_is_not_the_configs_policy_path_is_reported() {
    let mut m = gateway();
    let mounts = icegate_container(&mut m, "icegate")["volumeMounts"].as_array_mut().unwrap();
    for mount in mounts.iter_mut().filter(|m| m["mountPath"] == "/etc/icegate/policy") {
        mount["mountPath"] = "/etc/icegate/policies".into();
    }
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "no volume is mounted at the config's `policy");
}

#[test]
fn a_weakened_security_context_is_reported() {
    let mut m = sidecar();
    {
        let c = icegate_container(&mut m, "iceberg-catalog");
        c["securityContext"]["runAsUser"] = 1000.into();
        c["securityContext"]["readOnlyRootFilesystem"] = false.into();
        c["securityContext"]["capabilities"]["drop"] = serde_json::json!(["NET_RAW"]);
        c["securityContext"]["allowPrivilegeEscalation"] = Value::Null;
    }
    m.find_mut("Deployment", "iceberg-catalog")["spec"]["template"]["spec"]["securityContext"]["seccompProfile"] =
        serde_json::json!({ "type": "Unconfined" });
    let found = problems(&m, &dockerfile(), Pattern::Sidecar);
    for needle in [
        "runAsUser 1000 is not the Dockerfile's USER 65532",
        "readOnlyRootFilesystem",
        "drop ALL",
        "allowPrivilegeEscalation",
        "`catalog`: seccompProfile",
    ] {
        assert_reports(found.clone(), needle);
    }
}

#[test]
fn a_single_replica_gateway_or_a_page_token_key_outside_a_secret_is_reported() {
    let mut m = gateway();
    m.find_mut("Deployment", "icegate")["spec"]["replicas"] = 1.into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "1 replica(s)");
    let mut m = gateway();
    m.find_mut("PodDisruptionBudget", "icegate")["spec"] = serde_json::json!({ "minAvailable": 3, "selector": { "matchLabels": { "app.kubernetes.io/name": "icegate" } } });
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "lets no replica be drained");

    // The same config, from a ConfigMap.
    let mut m = gateway();
    let mut secret = m.find("Secret", "icegate-config").unwrap().clone();
    secret["kind"] = "ConfigMap".into();
    secret["data"] = secret["stringData"].take();
    m.docs.push(secret);
    let pod = &mut m.find_mut("Deployment", "icegate")["spec"]["template"]["spec"];
    for volume in pod["volumes"].as_array_mut().unwrap().iter_mut().filter(|v| v["name"] == "icegate-config") {
        *volume = serde_json::json!({ "name": "icegate-config", "configMap": { "name": "icegate-config" } });
    }
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "comes from a ConfigMap, not a Secret");

    // No key at all.
    let mut m = gateway();
    let doc = m.find_mut("Secret", "icegate-config");
    let text: String = doc["stringData"]["icegate.toml"]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("page_token_key"))
        .map(|l| format!("{l}\n"))
        .collect();
    doc["stringData"]["icegate.toml"] = text.into();
    assert_reports(problems(&m, &dockerfile(), Pattern::Gateway), "sets no `lists.page_token_key`");
}

#[test]
fn a_dockerfile_that_disagrees_with_the_manifests_is_reported() {
    let text = std::fs::read_to_string(Path::new(ROOT).join("deploy/Dockerfile")).unwrap();
    let changed = |from: &str, to: &str| {
        assert!(text.contains(from), "the Dockerfile no longer contains `{from}`");
        parse_dockerfile(&text.replace(from, to))
    };
    let m = sidecar();
    assert_reports(problems(&m, &changed("USER 65532:65532", "USER 1001"), Pattern::Sidecar), "USER 1001");
    assert_reports(problems(&m, &changed("EXPOSE 8181 9181", "EXPOSE 8080"), Pattern::Sidecar), "EXPOSE");
    assert_reports(
        problems(&m, &changed("/etc/icegate/config/icegate.toml\"]", "/etc/icegate/icegate.toml\"]"), Pattern::Sidecar),
        "is not the image's default",
    );
    let ignore = dockerignore();
    assert_reports(
        dockerfile_problems(
            &changed("ENTRYPOINT [\"/usr/local/bin/icegate\"]", "ENTRYPOINT [\"/bin/icegate\"]"),
            &ignore,
        ),
        "ENTRYPOINT",
    );
    assert_reports(dockerfile_problems(&changed("USER 65532:65532", "USER nonroot"), &ignore), "not numeric");
    assert_reports(dockerfile_problems(&changed("USER 65532:65532", "USER 0"), &ignore), "USER is root");
    assert_reports(
        dockerfile_problems(&changed("FROM rust:1.95-bookworm", "FROM rust:1.80-bookworm"), &ignore),
        "not Rust",
    );
    assert_reports(dockerfile_problems(&changed("COPY benches ./benches\n", ""), &ignore), "does not COPY `benches`");
    assert_reports(dockerfile_problems(&dockerfile(), &ignore.replace("!benches", "")), "`benches` is excluded");
    assert_reports(dockerfile_problems(&changed("--release --locked", "--release"), &ignore), "`--locked`");
}

/// Replaces `from` with `to` in the TOML config of the sidecar's ConfigMap.
fn edit_sidecar_config(m: &mut Manifests, from: &str, to: &str) {
    let doc = m.find_mut("ConfigMap", "iceberg-catalog-icegate-config");
    let text = doc["data"]["icegate.toml"].as_str().unwrap().to_owned();
    assert!(text.contains(from), "the sidecar config no longer contains `{from}`");
    doc["data"]["icegate.toml"] = text.replacen(from, to, 1).into();
}

#[test]
fn an_upstream_that_is_not_the_catalog_container_is_reported() {
    let mut m = sidecar();
    edit_sidecar_config(&mut m, "http://127.0.0.1:8080", "http://127.0.0.1:8081");
    let found = problems(&m, &dockerfile(), Pattern::Sidecar);
    assert_reports(found.clone(), "port 8081 is not the catalog container's port");
    assert_reports(found, "CATALOG_REST_PORT");
    let mut m = sidecar();
    edit_sidecar_config(&mut m, "http://127.0.0.1:8080", "http://catalog.example:8080");
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "not the catalog in the same pod");
}

#[test]
fn a_network_policy_that_admits_the_catalog_port_is_reported() {
    let mut m = sidecar();
    let ingress = &mut m.find_mut("NetworkPolicy", "iceberg-catalog")["spec"]["ingress"];
    ingress.as_array_mut().unwrap().push(serde_json::json!({ "ports": [{ "protocol": "TCP", "port": 8080 }] }));
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "admits the catalog's port 8080");
    let mut m = sidecar();
    m.find_mut("NetworkPolicy", "iceberg-catalog")["spec"]["ingress"] = serde_json::json!([{}]);
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "open on every port");
}

#[test]
fn a_shadow_policy_that_is_not_mounted_is_reported() {
    let mut m = sidecar();
    edit_sidecar_config(
        &mut m,
        "policy = \"/etc/icegate/policy\"",
        "policy = \"/etc/icegate/policy\"\nshadow_policy = \"/etc/icegate/shadow\"",
    );
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "`shadow_policy = \"/etc/icegate/shadow\"`");
    // Mounted from the live policy's ConfigMap, it loads.
    let c = icegate_container(&mut m, "iceberg-catalog");
    c["volumeMounts"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({ "name": "icegate-policy", "mountPath": "/etc/icegate/shadow", "readOnly": true }));
    assert_clean(problems(&m, &dockerfile(), Pattern::Sidecar));
}

#[test]
fn a_grace_period_shorter_than_the_drain_is_reported() {
    let mut m = sidecar();
    edit_sidecar_config(&mut m, "shutdown_grace_seconds = 20", "shutdown_grace_seconds = 60");
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "terminationGracePeriodSeconds 30 is shorter");
}

#[test]
fn a_catalog_that_stops_before_icegate_has_drained_is_reported() {
    fn catalog(m: &mut Manifests) -> &mut Value {
        let pod = &mut m.find_mut("Deployment", "iceberg-catalog")["spec"]["template"]["spec"];
        pod["containers"].as_array_mut().unwrap().iter_mut().find(|c| c["name"] == "catalog").unwrap()
    }
    let mut m = sidecar();
    catalog(&mut m)["lifecycle"] = Value::Null;
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "container \"catalog\" stops 0 s into");
    catalog(&mut m)["lifecycle"] = serde_json::json!({ "preStop": { "sleep": { "seconds": 30 } } });
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "does not end within terminationGracePeriodSeconds");
    // podman kube play would publish it on the host
    catalog(&mut m)["lifecycle"] = serde_json::json!({ "preStop": { "sleep": { "seconds": 25 } } });
    catalog(&mut m)["ports"] = serde_json::json!([{ "containerPort": 8080 }]);
    assert_reports(problems(&m, &dockerfile(), Pattern::Sidecar), "podman kube play publishes them");
}

#[test]
fn the_image_script_builds_the_image_the_dockerfile_describes() {
    assert_clean(image_script_problems(&dockerfile(), &image_script()));
}

#[test]
fn an_image_script_that_disagrees_with_the_dockerfile_is_reported() {
    let script = image_script();
    let changed = |from: &str, to: &str| {
        assert!(script.contains(from), "scripts/image.sh no longer contains `{from}`");
        image_script_problems(&dockerfile(), &script.replace(from, to))
    };
    assert_reports(changed("'USER 65532:65532'", "'USER 65533:65532'"), "scripts/image.sh USER");
    assert_reports(changed("'EXPOSE 9181'\n", ""), "EXPOSE");
    assert_reports(changed("'EXPOSE 9181'", "'EXPOSE 9181 9182'"), "2 values in one instruction");
    assert_reports(changed("XDG_STATE_HOME=/var/lib'", "XDG_STATE_HOME=/var/state'"), "ENV");
    assert_reports(changed("'VOLUME /var/lib/icegate'", "'VOLUME /data'"), "VOLUME");
    assert_reports(changed("image.version=\"0.1.0\"'", "image.version=\"0.2.0\"'"), "LABEL");
    assert_reports(changed("'ENTRYPOINT [\"/usr/local/bin/icegate\"]'", "'ENTRYPOINT [\"/icegate\"]'"), "ENTRYPOINT");
    assert_reports(changed("\"/etc/icegate/config/icegate.toml\"]'", "\"/etc/icegate.toml\"]'"), "CMD");
    assert_reports(changed("\"$staging/usr/local/bin/icegate\"", "\"$staging/bin/icegate\""), "install the binary");
    assert_reports(changed("nonroot:x:65532:65532:", "nonroot:x:1000:1000:"), "no /etc/passwd entry");
    assert_reports(
        changed("var/lib/icegate=65532:65532:0700", "var/lib/icegate=0:0:0755"),
        "does not give /var/lib/icegate",
    );
    assert_reports(changed("ICEGATE_CONFIG=(", "CONFIG=("), "no `ICEGATE_CONFIG=(` array");
}

#[test]
fn label_and_env_arguments_are_split_as_docker_splits_them() {
    assert_eq!(
        pairs(r#"a=1 b="two words" c="say \"hi\"" d"#),
        [("a", "1"), ("b", "two words"), ("c", "say \"hi\""), ("d", "")]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .to_vec()
    );
}

#[test]
fn the_kustomization_lists_every_manifest_file() {
    // load_manifests asserts it for both directories; here, that the check sees a file left out
    // and a listed file that is not there.
    let m = sidecar();
    let mut listed: BTreeSet<String> = strings(&m.kustomization["resources"]).into_iter().collect();
    assert!(unlisted_files(&m.dir, &listed).is_empty());
    assert!(listed.remove("networkpolicy.yaml"));
    listed.insert("ingress.yaml".into());
    assert_eq!(
        unlisted_files(&m.dir, &listed),
        BTreeSet::from(["ingress.yaml".to_owned(), "networkpolicy.yaml".to_owned()])
    );
}

#[test]
fn an_ownership_store_on_a_volume_that_dies_with_the_pod_is_reported() {
    let docker = dockerfile();
    let mut m = sidecar();
    let volumes = m.docs.iter_mut().find(|d| d["kind"] == "Deployment").unwrap()["spec"]["template"]["spec"]["volumes"]
        .as_array_mut()
        .unwrap();
    let owners = volumes.iter_mut().find(|v| v["name"] == "icegate-owners").unwrap();
    *owners = serde_json::json!({ "name": "icegate-owners", "emptyDir": {} });
    assert_reports(problems(&m, &docker, Pattern::Sidecar), "not a PersistentVolumeClaim");
    let mut m = sidecar();
    icegate_container(&mut m, "iceberg-catalog")["volumeMounts"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|v| v["name"] == "icegate-owners")
        .unwrap()["readOnly"] = true.into();
    assert_reports(problems(&m, &docker, Pattern::Sidecar), "mount is readOnly");
    let mut m = sidecar();
    edit_sidecar_config(&mut m, "[identity]", "[owners]\npath = \"/tmp/owners.db\"\n[identity]");
    assert_reports(problems(&m, &docker, Pattern::Sidecar), "/tmp is not a mounted volume");
    // the default path is the image's: without its XDG_STATE_HOME, HOME's, not on the volume
    let mut bare = docker.clone();
    bare.stages.last_mut().unwrap().instructions.retain(|(w, a)| !(w == "ENV" && a.starts_with("XDG_STATE_HOME")));
    assert_reports(problems(&sidecar(), &bare, Pattern::Sidecar), "the ownership store has no path");
    bare.stages.last_mut().unwrap().instructions.push(("ENV".into(), "HOME=/home/nonroot".into()));
    assert_reports(
        problems(&sidecar(), &bare, Pattern::Sidecar),
        "/home/nonroot/.local/state/icegate is not a mounted volume",
    );
}

#[test]
fn a_gateway_without_a_shared_ownership_store_is_reported() {
    let docker = dockerfile();
    let mut m = gateway();
    let secret = m.docs.iter_mut().find(|d| d["kind"] == "Secret").unwrap();
    let text = secret["stringData"]["icegate.toml"].as_str().unwrap().to_owned();
    let cut = text.split("[owners]").next().unwrap().to_owned();
    secret["stringData"]["icegate.toml"] = (cut + "[owners]\npath = \"/var/lib/icegate/owners.db\"\n").into();
    assert_reports(problems(&m, &docker, Pattern::Gateway), "replicas must share PostgreSQL");
}

#[test]
fn a_gateway_store_without_verified_tls_is_reported() {
    let docker = dockerfile();
    let edit = |from: &str, to: &str| {
        let mut m = gateway();
        let secret = m.docs.iter_mut().find(|d| d["kind"] == "Secret").unwrap();
        let text = secret["stringData"]["icegate.toml"].as_str().unwrap().to_owned();
        assert!(text.contains(from), "the gateway config no longer contains `{from}`");
        secret["stringData"]["icegate.toml"] = text.replacen(from, to, 1).into();
        problems(&m, &docker, Pattern::Gateway)
    };
    assert_reports(edit("sslmode=verify-full", "sslmode=require"), "does not say `sslmode=verify-full`");
    assert_reports(edit("sslmode=verify-full", "sslmode=disable"), "does not say `sslmode=verify-full`");
    assert_reports(
        edit("sslrootcert=/etc/icegate/postgres/", "sslrootcert=/etc/other/"),
        "/etc/other is not a mounted volume",
    );
    assert_reports(edit("postgres/ca.crt", "postgres/other.crt"), "has no key `other.crt`");
}
