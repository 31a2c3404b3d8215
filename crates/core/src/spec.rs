//! A tool's spec (R1): what a model, a UI and the permission rules know of a tool before it
//! runs, and the JSON Schema its parameters derive.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::family::PermissionFamily;
use crate::origin::ToolOrigin;
/// Hints about a tool's behaviour, as MCP defines them; permissions and plan mode read them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolAnnotations {
    /// The tool does not change its environment.
    pub read_only: bool,
    /// The tool may destroy or overwrite data (meaningful when not read-only).
    pub destructive: bool,
    /// Calling it twice with the same arguments has no further effect.
    pub idempotent: bool,
    /// The tool reaches outside the machine (the web, a remote service).
    pub open_world: bool,
}

impl ToolAnnotations {
    /// A tool that only reads.
    pub const READ_ONLY: Self = Self {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
}

/// Whether a call needs the user's confirmation (R17).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Sensitivity {
    /// Never asks (Read, Grep, WebFetch, ...).
    Safe,
    /// Edits files: asks, except in `acceptEdits` mode (Write, Edit).
    Edit,
    /// Asks unless a mode or rule allows it. The default: a tool is trusted only when it says so.
    #[default]
    Sensitive,
}

/// Everything the model and the permission system know of a tool (R1).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The globally unique name used in function calling.
    pub name: String,
    /// A short human label for UIs.
    pub label: String,
    /// What the tool does, written for the model.
    pub description: String,
    /// The parameters as a JSON Schema object.
    pub parameters: Value,
    /// Behaviour hints.
    pub annotations: ToolAnnotations,
    /// Whether calls need confirmation.
    pub sensitivity: Sensitivity,
    /// The truncation limit for this tool's results, when the tool bounds its own output in a
    /// way the model can act on (Read's "use offset=… to continue", Bash's full-output file).
    /// `None` uses the registry's `max_chars`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_result_chars: Option<usize>,
    /// What kind of access the tool's calls are: which family rules (`Read(…)`, `Edit(…)`,
    /// `Bash(…)`, `WebFetch(…)`) apply to it, besides rules naming it.
    #[serde(default, skip_serializing_if = "is_default")]
    pub family: PermissionFamily,
    /// Where the tool comes from.
    #[serde(default, skip_serializing_if = "is_default")]
    pub origin: ToolOrigin,
    /// Whether a sub-agent is always offered this tool of its parent, whatever its own tool
    /// list says (R18: skills and slash commands); MCP tools are inherited by their origin.
    #[serde(default, skip_serializing_if = "is_default")]
    pub inherited_by_subagents: bool,
    /// The JSON Schema of the tool's structured result (its `details`; MCP's `outputSchema`),
    /// when the tool declares one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    /// For a tool re-served from another MCP server: what its server said of it that the MCP
    /// definition passes on as given, instead of what this spec would fill in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forwarded: Option<ForwardedDefinition>,
    /// Other names a call may give a parameter (`file_path` for `path`, Claude Code's name),
    /// as `(alias, parameter)`: the pipeline renames them before it coerces and validates.
    /// The model is never shown them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameter_aliases: Vec<(String, String)>,
}

/// What an MCP server said of one of its tools that a gateway passes on as it is: the hints it
/// gave (and only those: a hint it left out is not filled in with a value that may contradict
/// another), and what else its definition holds that this spec has no field for.
/// [`ToolSpec::annotations`] still holds the hints with MCP's defaults, which permissions read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ForwardedDefinition {
    /// The server's `annotations` object (`title`, `readOnlyHint`, …), as given; `None` when
    /// it gave none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Map<String, Value>>,
}

fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

impl ToolSpec {
    /// A spec with this name and description, the name as label, no parameters, no
    /// annotations, and [`Sensitivity::Sensitive`].
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        let name = name.into();
        Self {
            label: name.clone(),
            name,
            description: description.into(),
            parameters: json!({ "type": "object", "properties": {} }),
            annotations: ToolAnnotations::default(),
            sensitivity: Sensitivity::default(),
            max_result_chars: None,
            family: PermissionFamily::default(),
            origin: ToolOrigin::default(),
            inherited_by_subagents: false,
            output_schema: None,
            forwarded: None,
            parameter_aliases: Vec::new(),
        }
    }

    /// The same spec with this label.
    #[must_use]
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// The same spec with this parameters schema.
    #[must_use]
    pub fn with_parameters(mut self, parameters: Value) -> Self {
        self.parameters = parameters;
        self
    }

    /// The same spec with these annotations.
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = annotations;
        self
    }

    /// The same spec with its own truncation limit (see [`Self::max_result_chars`]).
    #[must_use]
    pub fn with_max_result_chars(mut self, max_chars: usize) -> Self {
        self.max_result_chars = Some(max_chars);
        self
    }

    /// The same spec with this sensitivity.
    #[must_use]
    pub fn with_sensitivity(mut self, sensitivity: Sensitivity) -> Self {
        self.sensitivity = sensitivity;
        self
    }

    /// The same spec in this permission family.
    #[must_use]
    pub fn with_family(mut self, family: PermissionFamily) -> Self {
        self.family = family;
        self
    }

    /// The same spec with this origin.
    #[must_use]
    pub fn with_origin(mut self, origin: ToolOrigin) -> Self {
        self.origin = origin;
        self
    }

    /// The same spec with this result schema (see [`Self::output_schema`]).
    #[must_use]
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// The same spec, passing on what its MCP server said (see [`Self::forwarded`]).
    #[must_use]
    pub fn with_forwarded(mut self, forwarded: ForwardedDefinition) -> Self {
        self.forwarded = Some(forwarded);
        self
    }

    /// The same spec, accepting `alias` for its parameter `parameter` (see
    /// [`Self::parameter_aliases`]).
    #[must_use]
    pub fn with_parameter_alias(
        mut self,
        alias: impl Into<String>,
        parameter: impl Into<String>,
    ) -> Self {
        self.parameter_aliases
            .push((alias.into(), parameter.into()));
        self
    }

    /// Renames the aliases in `args` to their parameters, where the call does not give the
    /// parameter itself; returns whether anything changed.
    pub fn rename_aliases(&self, args: &mut Value) -> bool {
        let Some(object) = args.as_object_mut() else {
            return false;
        };
        let mut changed = false;
        for (alias, parameter) in &self.parameter_aliases {
            if !object.contains_key(parameter)
                && let Some(value) = object.remove(alias)
            {
                object.insert(parameter.clone(), value);
                changed = true;
            }
        }
        changed
    }

    /// The same spec, inherited by sub-agents (see [`Self::inherited_by_subagents`]).
    #[must_use]
    pub fn with_subagent_inheritance(mut self) -> Self {
        self.inherited_by_subagents = true;
        self
    }
}

/// The JSON Schema of a parameters type, in the shape function-calling APIs accept: draft
/// 2020-12, subschemas inlined where possible, no `$schema` or `title` at the root.
pub fn schema_for_params<P: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.meta_schema = None;
            settings.inline_subschemas = true;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<P>();
    schema.remove("title");
    let mut schema = schema.to_value();
    // A struct without fields derives `{"type":"object"}`; providers want `properties` too.
    if let Some(object) = schema.as_object_mut() {
        object
            .entry("properties")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_alias_is_renamed_only_when_the_parameter_is_absent() {
        let spec = ToolSpec::new("Read", "Reads.").with_parameter_alias("file_path", "path");
        let mut args = json!({"file_path": "a.txt"});
        assert!(spec.rename_aliases(&mut args));
        assert_eq!(args, json!({"path": "a.txt"}));
        let mut both = json!({"file_path": "a.txt", "path": "b.txt"});
        assert!(!spec.rename_aliases(&mut both));
        assert_eq!(both, json!({"file_path": "a.txt", "path": "b.txt"}));
    }
}
