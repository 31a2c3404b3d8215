//! The six tools as the registry and the permission system see them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use pretty_assertions::assert_eq;
use toolhost_core::Sensitivity;
use toolhost_tools::{Workspace, filesystem_tools};

#[test]
fn tools_come_in_spec_order_with_their_sensitivity_and_annotations() {
    let dir = tempfile::tempdir().unwrap();
    let tools = filesystem_tools(Arc::new(Workspace::new(dir.path()).unwrap()));
    let summary: Vec<(String, Sensitivity, bool, bool)> = tools
        .iter()
        .map(|tool| {
            let spec = tool.spec();
            (
                spec.name,
                spec.sensitivity,
                spec.annotations.read_only,
                spec.annotations.destructive,
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("Read".to_owned(), Sensitivity::Safe, true, false),
            ("Write".to_owned(), Sensitivity::Edit, false, true),
            ("Edit".to_owned(), Sensitivity::Edit, false, true),
            ("MultiEdit".to_owned(), Sensitivity::Edit, false, true),
            ("ListDir".to_owned(), Sensitivity::Safe, true, false),
            ("Glob".to_owned(), Sensitivity::Safe, true, false),
            ("Grep".to_owned(), Sensitivity::Safe, true, false),
        ]
    );
}

#[test]
fn every_parameter_has_a_description_for_the_model() {
    let dir = tempfile::tempdir().unwrap();
    for tool in filesystem_tools(Arc::new(Workspace::new(dir.path()).unwrap())) {
        let spec = tool.spec();
        let properties = spec.parameters["properties"].as_object().unwrap();
        assert!(!properties.is_empty(), "{}", spec.name);
        for (name, schema) in properties {
            assert!(
                schema["description"]
                    .as_str()
                    .is_some_and(|text| text.len() > 10),
                "{}.{name} has no description",
                spec.name
            );
        }
    }
}
