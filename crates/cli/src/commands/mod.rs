//! One module per subcommand.

pub mod acp;
pub mod agents;
pub mod call;
pub mod chat;
pub mod completion;
pub mod config;
pub mod doctor;
mod doctor_check;
mod doctor_remote;
pub mod init;
pub mod mcp;
pub mod mcp_login;
pub mod plugins;
pub mod run;
pub mod serve;
pub mod sessions;
pub mod skills;
pub mod tools;
pub mod tools_reference;
