//! One module per subcommand.

pub mod call;
pub mod config;
pub mod doctor;
pub mod mcp;
pub mod run;
pub mod serve;
pub mod sessions;
pub mod tools;
