use super::program_verb;

#[test]
fn a_program_named_for_destruction_is_read_by_its_name() {
    for p in [
        "kafka-delete-records.sh",
        "drop_all_tables",
        "purge-cdn",
        "reset-db.sh",
    ] {
        assert!(program_verb(p).is_some(), "{p}");
    }
    for p in ["reset", "deploy.sh", "remove", "build-assets", "dropbox"] {
        assert!(program_verb(p).is_none(), "{p}");
    }
}
