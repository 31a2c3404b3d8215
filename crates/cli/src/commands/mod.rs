//! One module per subcommand.

pub mod agents;
pub mod call;
pub mod chat;
pub mod config;
pub mod doctor;
pub mod mcp;
pub mod plugins;
pub mod run;
pub mod serve;
pub mod sessions;
pub mod skills;
pub mod tools;
